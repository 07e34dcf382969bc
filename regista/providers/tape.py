"""One tape under every replay: recorded calls matched by request digest, with play counts.

:class:`Tape` holds a recording's model calls. A request is matched by its digest (by
default the full ``request_hash``); each recorded call plays once, so two identical
requests get the two recordings in order, and requests that arrive concurrently, in any
order, each get their own (as a cassette counts plays). Consumers that replay one loop
in order ask for ``in_order=True``: then only the next unplayed call can match, which is
how a sequential replay has always behaved.

:func:`mismatch` is the one check that explains a request the tape does not hold: the
structural diff against the call that was expected, and the nearest recorded requests
when another one is closer.

:class:`TapeProvider` is the base of the replay and fork providers: one live delegate
(:attr:`TapeProvider.live`) and :attr:`TapeProvider.diverged_at`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from regista.diff.structural import Change, format_changes, structural_diff
from regista.providers.base import Provider
from regista.types import LlmRequest

if TYPE_CHECKING:
    from regista.providers.replay import RecordedCall

__all__ = ["Mismatch", "Recorded", "Tape", "TapeProvider", "mismatch"]

#: How many recorded calls past the expected one a mismatch compares the request with.
NEAREST_WINDOW = 4


class Recorded(Protocol):
    """A recorded request that a live one can be compared with."""

    @property
    def step(self) -> int: ...

    @property
    def request(self) -> LlmRequest | None: ...


class Tape:
    """A recording's calls, played at most once each.

    Args:
        calls: The recorded calls, in trace order.
        key: The digest a call is matched by (default: its ``request_hash``).
    """

    def __init__(
        self, calls: list[RecordedCall], key: Callable[[RecordedCall], str] | None = None
    ) -> None:
        self.calls = calls
        self.plays = [0] * len(calls)
        self._by_key: dict[str, list[int]] = {}
        for i, call in enumerate(calls):
            self._by_key.setdefault(key(call) if key else call.request_hash, []).append(i)
        self._cursor = 0
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self.calls)

    @property
    def next_index(self) -> int:
        """The earliest call not played yet (``len(self)`` when all have played)."""
        return self._cursor

    @property
    def played(self) -> int:
        return sum(1 for p in self.plays if p)

    def expected(self) -> RecordedCall | None:
        """The earliest call not played yet."""
        return self.calls[self._cursor] if self._cursor < len(self.calls) else None

    def peek(self, digest: str) -> int | None:
        """The index of the earliest unplayed call recorded with ``digest``, if any."""
        with self._lock:
            return next((i for i in self._by_key.get(digest, ()) if not self.plays[i]), None)

    def take(self, digest: str, *, in_order: bool = False) -> RecordedCall | None:
        """The earliest unplayed call recorded with ``digest``, now played; ``None`` when
        there is none (or, ``in_order``, when it is not the next call)."""
        with self._lock:
            for i in self._by_key.get(digest, ()):
                if self.plays[i]:
                    continue
                if in_order and i != self._cursor:
                    return None
                self._play(i)
                return self.calls[i]
            return None

    def take_next(self) -> RecordedCall | None:
        """The earliest unplayed call, now played, whatever was asked (loose playback)."""
        with self._lock:
            if self._cursor >= len(self.calls):
                return None
            i = self._cursor
            self._play(i)
            return self.calls[i]

    def play(self, index: int) -> RecordedCall:
        """Mark call ``index`` played and return it."""
        with self._lock:
            self._play(index)
            return self.calls[index]

    def _play(self, i: int) -> None:
        self.plays[i] += 1
        while self._cursor < len(self.calls) and self.plays[self._cursor]:
            self._cursor += 1


@dataclass(frozen=True)
class Mismatch:
    """Why a request is not the recorded one.

    Attributes:
        changes: Structural diff, recorded (old) → live (new), under ``request``.
        detail: The changes in one line (or "the request hash differs").
        nearest: ``(step, number of differences)`` of recorded calls closer to the request
            than the expected one, nearest first.
    """

    changes: list[Change]
    detail: str
    nearest: list[tuple[int, int]]

    @property
    def nearest_note(self) -> str:
        if not self.nearest:
            return ""
        named = ", ".join(
            f"step {step} ({n} difference{'s' if n != 1 else ''})" for step, n in self.nearest
        )
        return f"; nearest recorded request{'s' if len(self.nearest) > 1 else ''}: {named}"


def mismatch(
    rec: Recorded | None,
    live: dict[str, Any],
    *,
    canonical: Callable[[LlmRequest], dict[str, Any]] = LlmRequest.canonical,
    others: Sequence[Recorded] = (),
    root: str = "request",
) -> Mismatch:
    """The one mismatch check: how ``live`` (a canonical request) differs from ``rec``.

    Args:
        rec: The call that was expected (``None``: the tape has nothing left).
        live: The live request in the same canonical form as ``canonical`` builds.
        canonical: What of a request is compared (default: everything that is hashed).
        others: Other recorded calls to look for a nearer one among.
        root: The path the diff's paths start with.
    """
    changes: list[Change] = []
    recorded = rec.request if rec is not None else None
    if recorded is not None:
        changes = structural_diff(canonical(recorded), live, root)
    detail = format_changes(changes) if changes else "the request hash differs"
    nearest: list[tuple[int, int]] = []
    best = len(changes) if recorded is not None else None
    for other in others[:NEAREST_WINDOW]:
        if other is rec or (req := other.request) is None:
            continue
        n = len(structural_diff(canonical(req), live, root))
        if best is None or n < best:
            nearest.append((other.step, n))
    nearest.sort(key=lambda item: item[1])
    return Mismatch(changes, detail, nearest[:2])


class TapeProvider:
    """Base of the providers that serve a tape: one live delegate and ``diverged_at``.

    Attributes:
        live: The real provider that calls past the tape go to (``None``: none).
        diverged_at: The step of the first divergence, if any.
        label: How messages name the recording.
    """

    name = "tape"

    def __init__(self, tape: Tape, live: Provider | None, label: str) -> None:
        self.tape = tape
        self.live = live
        self.label = label
        self.diverged_at: int | None = None

    @property
    def calls(self) -> list[RecordedCall]:
        return self.tape.calls

    def diverge(self, step: int) -> None:
        """Note the first divergence."""
        if self.diverged_at is None:
            self.diverged_at = step

    def unplayed_after(self, rec: RecordedCall | None) -> list[RecordedCall]:
        """Unplayed calls after ``rec`` (where a nearer recording may be)."""
        start = self.tape.next_index
        return [
            c
            for i, c in enumerate(self.tape.calls[start:], start)
            if not self.tape.plays[i] and c is not rec
        ][:NEAREST_WINDOW]
