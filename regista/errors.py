"""Errors raised by regista.

Every error derives from :class:`RegistaError`, so one ``except`` catches them all::

    RegistaError
    ├── UserError                  misuse: a bad argument, path, edit or agent reference
    │   ├── AgentLoadError         an ``module:attr`` reference that cannot be imported
    │   ├── InvalidEditError       a fork edit that does not fit the step it targets
    │   ├── MissingCredentialsError  no API key where a live provider needs one
    │   └── TraceExistsError       a new session's trace file already exists
    ├── TraceError                 a trace that cannot be read
    │   ├── NoSuchPathError        a path that names no file or folder (also a UserError)
    │   ├── TraceFormatError       a corrupt line (names the file and line)
    │   │   └── RequestHashMismatch  a rebuilt request does not match its request_hash
    │   ├── UnsupportedSchemaVersion  a trace written by a newer regista
    │   └── BrokenTape             a tape cut short or never ended (regista.testing)
    ├── TraceWriteError            a trace could not be written (e.g. the disk is full)
    ├── ProviderError              the model provider failed (network, HTTP, bad response)
    ├── ReplayDivergence           a live request left the recorded path (carries step and diff)
    │   ├── ContentNotRecorded     the recorded answer of a step has no content to serve
    │   └── TapeMismatch           a tape test's agent left its tape (regista.testing)
    └── RecordedEnding             a replay reached where its recording was cancelled or its
                                   caller's code raised (the loop ends the replay the same way)

Warnings: :class:`ReplayDivergenceWarning` (``warn`` mode), :class:`TraceWarning`
(a truncated last line was dropped), :class:`PricingWarning` (unknown model price),
:class:`TranscriptWarning` (an imported transcript had lines that were skipped).

Messages are written for people: the CLI and the TUI print ``str(error)`` and nothing else.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

__all__ = [
    "AgentLoadError",
    "ContentNotRecorded",
    "InvalidEditError",
    "MissingCredentialsError",
    "NoSuchPathError",
    "PricingWarning",
    "ProviderError",
    "RecordedEnding",
    "RegistaError",
    "ReplayDivergence",
    "ReplayDivergenceWarning",
    "RequestHashMismatch",
    "TraceError",
    "TraceExistsError",
    "TraceFormatError",
    "TraceWarning",
    "TraceWriteError",
    "TranscriptWarning",
    "UnsupportedSchemaVersion",
    "UserError",
    "torn_only_line",
]


class RegistaError(Exception):
    """Root of every error regista raises."""


class UserError(RegistaError):
    """The caller asked for something that cannot be done as asked."""


class AgentLoadError(UserError):
    """An agent reference (``module:attr``) could not be turned into an ``Agent``."""


class InvalidEditError(UserError):
    """A fork edit does not fit the step it targets."""


class MissingCredentialsError(UserError):
    """A live provider was asked to run without credentials."""


class TraceExistsError(UserError):
    """A new session's trace file already exists: each session writes a file of its own."""


class TraceError(RegistaError):
    """A trace file cannot be read."""


class NoSuchPathError(TraceError, UserError):
    """A path given to be read names no file or folder.

    A :class:`TraceError` for the code that reads traces, and a :class:`UserError` for the
    command line, which exits 2 on it as on any misuse (``regista diff`` keeps 1 for runs
    that differ).
    """


class TraceWriteError(RegistaError):
    """A trace could not be written (a full disk, a file-size limit, an I/O error)."""


class TraceFormatError(TraceError):
    """A line of a trace is not a valid event.

    Attributes:
        path: The trace file.
        line: 1-based line number of the bad line (``None`` when not line-specific).
    """

    def __init__(self, path: str | Path, line: int | None, reason: str) -> None:
        self.path = Path(path)
        self.line = line
        self.reason = reason
        where = f"{self.path}:{line}" if line is not None else str(self.path)
        super().__init__(f"{where}: {reason}")


def torn_only_line(path: str | Path) -> TraceFormatError:
    """The error for a trace whose first line is also its last and is half-written (a
    crash while the first event was written): torn, as any half-written last line is, but
    with no complete event before it there is no trace to read."""
    return TraceFormatError(
        path,
        1,
        "a half-written (torn) first line and no complete event: the writing process "
        "probably died while writing it",
    )


class RequestHashMismatch(TraceFormatError):
    """A request rebuilt from a trace does not hash to its recorded ``request_hash``:
    the file was edited or corrupted."""


class UnsupportedSchemaVersion(TraceError):
    """A trace was written with a schema newer than this regista understands."""

    def __init__(self, path: str | Path, found: int, supported: int) -> None:
        self.path = Path(path)
        self.found = found
        self.supported = supported
        super().__init__(
            f"{self.path} was written with trace schema version {found}, but this regista "
            f"understands versions up to {supported}. Upgrade regista "
            f"(pip install -U regista-harness) to read it."
        )


class ProviderError(RegistaError):
    """The model provider failed to answer.

    Attributes:
        trace_path: The trace of the session that failed, when there is one.
        recorded: The failure was served from a recording: a replay reproducing the
            provider error its recorded session ended with (the replay then ends the same
            way, ``stop_reason == "error"``, instead of raising).
    """

    def __init__(
        self, message: str, *, trace_path: Path | None = None, recorded: bool = False
    ) -> None:
        super().__init__(message)
        self.trace_path = trace_path
        self.recorded = recorded


class ReplayDivergence(RegistaError):
    """A live request no longer matches the recording.

    Attributes:
        step: The step at which the run left the recorded path.
        kind: ``"model"`` or ``"tool"``.
        diffs: Structural differences (``regista.diff.structural.Change``), most specific first.
        trace_path: The recording that was being replayed.
    """

    def __init__(
        self,
        message: str,
        *,
        step: int,
        kind: str = "model",
        diffs: list[Any] | None = None,
        trace_path: Path | None = None,
    ) -> None:
        super().__init__(message)
        self.step = step
        self.kind = kind
        self.diffs = list(diffs or [])
        self.trace_path = trace_path


class ContentNotRecorded(ReplayDivergence):
    """A replay reached a model call whose answer was recorded without its content (spans
    from an instrumentation with content capture off): there is nothing to serve."""

    @staticmethod
    def message_for(step: int) -> str:
        """What names the step, and says why it cannot be served."""
        return (
            f"step {step} cannot be replayed: its answer's content was not recorded (the "
            "spans it came from did not capture content); record it with content capture "
            "on, or fork the step with an answer"
        )


class RecordedEnding(RegistaError):
    """A replay reached the point where its recording stopped without an answer: the
    session was cancelled, or the caller's own code (a callback) raised there. The loop ends
    the replay the same way; this never reaches the caller.

    Attributes:
        stop_reason: The recorded ending (``cancelled`` or ``error``).
        error_type: The type of the recorded exception (``None`` for a cancellation).
    """

    def __init__(self, message: str, *, stop_reason: str, error_type: str | None = None) -> None:
        super().__init__(message)
        self.stop_reason = stop_reason
        self.error_type = error_type


class ReplayDivergenceWarning(UserWarning):
    """A replay in ``warn`` mode saw a request that differs from the recording."""


class TraceWarning(UserWarning):
    """A trace was readable, but not completely (e.g. a half-written last line)."""


class PricingWarning(UserWarning):
    """The cost of a call is unknown because the model is not in the price table."""


class TranscriptWarning(UserWarning):
    """An imported transcript was converted, but some of its lines were skipped."""
