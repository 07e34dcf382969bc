"""``ReplayProvider``: serves a recorded session's model responses, hash-verified.

On the Nth call it hashes the live request and compares it with the Nth recorded one
(model calls and compactions, in trace order). A match serves the recorded response for
$0. A mismatch is a divergence, handled by the mode:

- ``strict``: raise :class:`ReplayDivergence` with a structural diff of the two requests;
- ``warn``: emit :class:`ReplayDivergenceWarning` and serve the recording positionally;
- ``hybrid``: from the first divergence on (or past the end of the recording), every call
  goes to the real ``fallback`` provider.

With ``masks`` (a :class:`~regista.diff.masks.MaskSet`), a request that differs from the
recorded one only in spans the masks name (a date, an id, a temp path) still matches: the
call is served, and its step's verdict is ``masked`` instead of ``exact``
(:attr:`ReplayProvider.verdicts`).

A recorded session that ended in a provider error is reproduced: its failed request, when
the replay makes it, raises the recorded error again (``ProviderError.recorded``), and the
replay ends in ``error`` as the recording did. So is a session that was cancelled, or
that the caller's own code (a callback) stopped with an exception, while it waited for a
model answer: the replay ends there with the recorded ``stop_reason`` and error. With a
``fallback`` (``hybrid``, and ``resume``) such a call goes live instead: that is how a
crashed session carries on.
"""

from __future__ import annotations

import enum
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, NoReturn

from regista.context import ContextConfig, compaction_request
from regista.diff.masks import DIVERGED, EXACT, MASKED, MaskSet
from regista.diff.structural import Change
from regista.errors import (
    ContentNotRecorded,
    ProviderError,
    RecordedEnding,
    ReplayDivergence,
    ReplayDivergenceWarning,
    UserError,
)
from regista.providers.base import Provider, TextCallback, set_meta, stream_recorded
from regista.providers.tape import Tape, TapeProvider, mismatch
from regista.trace.canonical import PrefixHasher, hashes_redacted, request_hash
from regista.trace.events import ContextCompaction, ErrorEvent, LlmRequestEvent, LlmResponseEvent
from regista.trace.reader import Trace
from regista.types import LlmRequest, LlmResponse, Usage

__all__ = [
    "RecordedCall",
    "RecordedFailure",
    "ReplayMode",
    "ReplayProvider",
    "recorded_calls",
    "recorded_ending",
    "recorded_failure",
    "recording_end_note",
]


class ReplayMode(enum.StrEnum):
    """How a replay handles a request that differs from the recording."""

    STRICT = "strict"
    WARN = "warn"
    HYBRID = "hybrid"

    @classmethod
    def parse(cls, value: str | ReplayMode) -> ReplayMode:
        if value == "loose":  # the HTTP API's name for the same behaviour
            return cls.WARN
        try:
            return cls(value)
        except ValueError:
            valid = ", ".join(repr(m.value) for m in cls) + " ('loose' is 'warn')"
            raise UserError(f"unknown replay mode {value!r}; valid modes: {valid}") from None


@dataclass
class RecordedCall:
    """One recorded model call: a turn's request or a compaction's summary request.

    The full request is rebuilt only when asked for (a divergence diff): replays compare
    hashes, and rebuilding every request of a long session up front is quadratic.
    """

    step: int
    kind: str  # "model" or "compaction"
    request_hash: str
    response: LlmResponse
    provider: str
    build_request: Callable[[], LlmRequest] | None = None
    #: The model time the recording spent on this call.
    duration_ms: float = 0.0
    #: Whether the recorded call streamed, and the API it went to (when recorded).
    stream: bool | None = None
    server: dict[str, Any] | None = None

    @property
    def request(self) -> LlmRequest | None:
        return self.build_request() if self.build_request is not None else None

    def answer(self, matched: bool | None = None) -> LlmResponse:
        """A fresh copy of the recorded answer, marked as served from the recording (with
        ``matched`` for positional playback)."""
        return set_meta(
            self.response.model_copy(deep=True),
            self.provider,
            "recorded",
            matched,
            self.duration_ms,
            stream=self.stream,
            server=self.server,
        )


def _how(resp: LlmResponseEvent) -> dict[str, Any]:
    """The recorded call's ``stream`` and ``server``, when its answer holds them."""
    extra = resp.model_extra or {}
    stream, server = extra.get("stream"), extra.get("server")
    return {
        "stream": stream if isinstance(stream, bool) else None,
        "server": server if isinstance(server, dict) else None,
    }


def recorded_calls(trace: Trace) -> list[RecordedCall]:
    """Every completed model call of ``trace``, in order."""
    responses = {ev.step: ev for ev in trace.events if isinstance(ev, LlmResponseEvent)}
    context = ContextConfig.from_dict(trace.start.context) or ContextConfig()
    plain, current = PrefixHasher(redact=False), PrefixHasher()
    out: list[RecordedCall] = []
    for ev in trace.events:
        if isinstance(ev, LlmRequestEvent):
            resp = responses.get(ev.step)
            if resp is None:
                continue  # the process died waiting for this answer
            build = partial(trace.request_for, ev)
            out.append(
                RecordedCall(
                    step=ev.step,
                    kind="model",
                    request_hash=_request_hash(ev, build, plain, current),
                    response=LlmResponse.model_validate(resp.response),
                    provider=resp.provider,
                    build_request=build,
                    duration_ms=resp.duration_ms,
                    **_how(resp),
                )
            )
        elif isinstance(ev, ContextCompaction):
            build = partial(compaction_request, trace.start.model, ev.replaced, context)
            out.append(
                RecordedCall(
                    step=ev.step,
                    kind="compaction",
                    request_hash=_request_hash(ev, build, _hash_plain, _hash_current),
                    build_request=build,
                    response=LlmResponse(
                        model=ev.provider,
                        content=[{"type": "text", "text": ev.summary}],
                        stop_reason="end_turn",
                        usage=Usage.model_validate(ev.usage or {}),
                    ),
                    provider=ev.provider,
                    duration_ms=ev.duration_ms,
                )
            )
    return out


@dataclass(frozen=True)
class RecordedFailure:
    """The model call a recorded session ended on without an answer.

    ``where`` says why: ``provider`` (its request got a provider error), ``agent`` (the
    caller's own code raised, e.g. an ``on_text`` callback) or ``cancelled``.
    """

    step: int
    request_hash: str
    message: str
    build_request: Callable[[], LlmRequest]
    where: str = "provider"
    error_type: str | None = None

    @property
    def request(self) -> LlmRequest:
        return self.build_request()

    def raise_again(self) -> NoReturn:
        """End the replay the way the recording ended."""
        if self.where == "provider":
            raise ProviderError(self.message, recorded=True)
        raise RecordedEnding(
            self.message,
            stop_reason="cancelled" if self.where == "cancelled" else "error",
            error_type=self.error_type,
        )


def recorded_ending(trace: Trace) -> tuple[str, str, str | None] | None:
    """How ``trace`` ended, when it was cut off by a cancellation or by an exception in the
    caller's code: ``(where, message, error_type)``; ``None`` otherwise."""
    end = trace.end
    if end is None:
        return None
    if end.stop_reason == "cancelled":
        return "cancelled", end.error or "the run was cancelled", None
    if end.stop_reason == "error":
        agent = next(
            (ev for ev in reversed(trace.events) if isinstance(ev, ErrorEvent)),
            None,
        )
        if agent is not None and agent.where == "agent":
            return "agent", agent.message, agent.error_type
    return None


def recorded_failure(trace: Trace) -> RecordedFailure | None:
    """The model call that ended ``trace`` without an answer (a provider error, a
    cancellation or an exception in the caller's code), if one did."""
    last = next((ev for ev in reversed(trace.events) if isinstance(ev, LlmRequestEvent)), None)
    if last is None or any(
        isinstance(ev, LlmResponseEvent) and ev.step == last.step for ev in trace.events
    ):
        return None
    error = next(
        (
            ev
            for ev in trace.events
            if isinstance(ev, ErrorEvent) and ev.where == "provider" and ev.step == last.step
        ),
        None,
    )
    if error is not None:
        return RecordedFailure(
            step=last.step,
            request_hash=last.request_hash,
            message=error.message,
            build_request=partial(trace.request_for, last),
        )
    ending = recorded_ending(trace)
    if ending is None:
        return None
    where, message, error_type = ending
    return RecordedFailure(
        step=last.step,
        request_hash=last.request_hash,
        message=message,
        build_request=partial(trace.request_for, last),
        where=where,
        error_type=error_type,
    )


def recording_end_note(trace: Trace) -> str:
    """Why a recording has nothing more to serve, when its session stopped early
    (appended to a divergence past its end); empty for a session that ended normally."""
    end = trace.end
    if end is None:
        return " (the recording stops there: the session did not finish)"
    if end.stop_reason in ("error", "cancelled", "diverged"):
        why = f": {end.error}" if end.error else ""
        return f" (the recording stops there: the session ended with {end.stop_reason!r}{why})"
    return ""


class ReplayProvider(TapeProvider):
    """Serves the model calls of a recorded trace.

    Args:
        trace: The recording (a ``Trace`` or a path).
        mode: ``"strict"`` (default), ``"warn"`` or ``"hybrid"``.
        fallback: The live provider that ``hybrid`` falls through to (:attr:`live`).
        name_of: How divergence messages name the recording (default: the file name).
        masks: Volatile spans a strict match ignores (default: none, every byte counts).

    Attributes:
        verdicts: Each model step played so far: ``exact`` (the request hashed as
            recorded), ``masked`` (equal once masked) or ``diverged``.
    """

    name = "replay"

    def __init__(
        self,
        trace: Trace | str | Path,
        mode: str | ReplayMode = ReplayMode.STRICT,
        fallback: Provider | None = None,
        *,
        name_of: str | None = None,
        masks: MaskSet | None = None,
    ) -> None:
        self.trace = trace if isinstance(trace, Trace) else Trace.load(trace)
        self.masks = masks if masks is not None else MaskSet()
        self.verdicts: dict[int, str] = {}
        super().__init__(
            Tape(recorded_calls(self.trace)),
            fallback,
            name_of or (self.trace.path.name if self.trace.path else "recording"),
        )
        self.mode = ReplayMode.parse(mode)
        self.failure = recorded_failure(self.trace)
        self.position = 0

    @property
    def went_live(self) -> bool:
        return self.diverged_at is not None and self.mode is ReplayMode.HYBRID

    async def complete(
        self, request: LlmRequest, *, on_text: TextCallback | None = None
    ) -> LlmResponse:
        n = self.position
        self.position += 1
        if self.went_live:
            return await self._live(request, on_text)
        rec = self.tape.take(request.hash, in_order=True)
        if rec is not None:
            self.verdicts[rec.step] = EXACT
        elif self._masked_match(request):
            rec = self.tape.take_next()
            assert rec is not None
            self.verdicts[rec.step] = MASKED
        if (
            rec is not None
            and not rec.response.captured
            and self.mode is ReplayMode.HYBRID
            and self.live is not None
        ):  # nothing to serve here: live from this step on
            self.diverge(rec.step)
            return await self._live(request, on_text)
        if rec is not None:
            # Loose (warn) playback records whether each call matched; strict needs no note.
            return await self._serve(rec, on_text, True if self.mode is ReplayMode.WARN else None)
        expected = self.tape.expected()
        failure = self.failure
        if expected is None and failure is not None and self.live is None and n == len(self.calls):
            return await self._fail_as_recorded(request, on_text, failure)
        if expected is None:
            step = self.calls[-1].step + 1 if self.calls else 0
            return await self._diverge(
                request,
                on_text,
                step,
                False,
                f"{self.label}: the run made model call {n + 1}, but the recording has "
                f"only {len(self.calls)}{recording_end_note(self.trace)}",
                [],
            )
        if self.masks:  # what differs beyond the masks (a masked span is not a difference)
            m = mismatch(
                expected,
                self._masked(request),
                canonical=self._masked,
                others=self.unplayed_after(expected),
            )
        else:
            m = mismatch(expected, request.canonical(), others=self.unplayed_after(expected))
        what = "model call" if expected.kind == "model" else "compaction"
        message = f"{self.label}: diverged at step {expected.step} ({what}): {m.detail}"
        return await self._diverge(
            request, on_text, expected.step, True, message + m.nearest_note, m.changes
        )

    def _masked_match(self, request: LlmRequest) -> bool:
        """Whether the next recorded request equals ``request`` once both are masked."""
        expected = self.tape.expected()
        if not self.masks or expected is None or (recorded := expected.request) is None:
            return False
        return self._masked(recorded) == self._masked(request)

    def _masked(self, request: LlmRequest) -> dict[str, Any]:
        return self.masks.apply(request.canonical())[0]

    async def _serve(
        self, rec: RecordedCall, on_text: TextCallback | None, matched: bool | None = None
    ) -> LlmResponse:
        if not rec.response.captured:
            raise ContentNotRecorded(
                f"{self.label}: {ContentNotRecorded.message_for(rec.step)}",
                step=rec.step,
                trace_path=self.trace.path,
            )
        response = rec.answer(matched)
        await stream_recorded(on_text, response)
        return response

    async def _fail_as_recorded(
        self, request: LlmRequest, on_text: TextCallback | None, failure: RecordedFailure
    ) -> LlmResponse:
        """The recording's last call failed: the same request fails again, the same way."""
        if request.hash != failure.request_hash:
            m = mismatch(failure, request.canonical())
            message = f"{self.label}: diverged at step {failure.step} (model call): {m.detail}"
            if self.mode is not ReplayMode.WARN:
                return await self._diverge(
                    request, on_text, failure.step, False, message, m.changes
                )
            warnings.warn(message, ReplayDivergenceWarning, stacklevel=3)
            self.diverge(failure.step)
        failure.raise_again()

    async def _live(self, request: LlmRequest, on_text: TextCallback | None) -> LlmResponse:
        assert self.live is not None
        return await self.live.complete(request, on_text=on_text)

    async def _diverge(
        self,
        request: LlmRequest,
        on_text: TextCallback | None,
        step: int,
        has_recording: bool,
        message: str,
        changes: list[Change],
    ) -> LlmResponse:
        self.diverge(step)
        self.verdicts[step] = DIVERGED
        if self.mode is ReplayMode.HYBRID and self.live is not None:
            return await self._live(request, on_text)
        if self.mode is ReplayMode.WARN and has_recording:
            warnings.warn(message, ReplayDivergenceWarning, stacklevel=2)
            rec = self.tape.take_next()
            assert rec is not None
            return await self._serve(rec, on_text, matched=False)
        if self.mode is ReplayMode.HYBRID:
            message += " (hybrid mode has no fallback provider to continue live)"
        raise ReplayDivergence(
            message, step=step, kind="model", diffs=changes, trace_path=self.trace.path
        )


def _hash_plain(canonical: dict[str, Any]) -> str:
    return request_hash(canonical, redact=False)


def _hash_current(canonical: dict[str, Any]) -> str:
    return request_hash(canonical)


def _request_hash(
    ev: LlmRequestEvent | ContextCompaction,
    build: Callable[[], LlmRequest],
    plain: Callable[[dict[str, Any]], str],
    current: Callable[[dict[str, Any]], str],
) -> str:
    """The hash a live request is compared with: the recorded one, in today's definition
    when it was recorded before secrets were redacted (see :func:`_current_hash`)."""
    if hashes_redacted(ev):
        return ev.request_hash
    return _current_hash(build(), ev.request_hash, plain, current)


def _current_hash(
    request: LlmRequest,
    recorded: str,
    plain: Callable[[dict[str, Any]], str],
    current: Callable[[dict[str, Any]], str],
) -> str:
    """A schema-1 ``request_hash`` (over the plain canonical JSON) in today's definition
    (secrets redacted), which a live request's hash is compared with. A request that does
    not rebuild to its recorded hash keeps it, and diverges as it would have."""
    canonical = request.canonical()
    return current(canonical) if plain(canonical) == recorded else recorded
