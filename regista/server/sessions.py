"""Turning SDK traffic into ordinary regista traces, one per agent session.

A call whose messages extend an open session's last request (same system prompt, the same
messages first) continues that session; any other call starts a new one. Between two model
calls, the ``tool_result`` blocks the agent sends back for the previous answer's
``tool_use`` blocks become tool steps, so the trace has the steps every consumer knows.
Only normalised bodies are written: never headers, so never an API key.

A session ends (``session.end`` with its last answer's stop reason) when the book is closed
— the recording child exits, or the server shuts down — or, with ``idle_seconds``, once no
call has continued it for that long (:meth:`SessionBook.sweep`). A call that extends a
session already ended starts a new trace whose ``session.start.metadata.continues`` names it.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ulid import ULID

from regista.pricing import cost_usd, price_for
from regista.trace.recorder import TraceRecorder
from regista.types import LlmRequest, LlmResponse, Message

__all__ = ["SdkSession", "SessionBook", "continues_conversation"]

#: Ended sessions kept (for ``continues`` links) once idle sessions are being ended.
_KEEP_ENDED = 64


@dataclass
class SdkSession:
    """One agent session being written."""

    rec: TraceRecorder
    system: str | None
    messages: list[Message]
    last: LlmResponse | None = None
    started: bool = False
    extra_start: dict[str, Any] = field(default_factory=dict)
    last_seen: float = 0.0
    #: When its first call was sent (the clock's seconds): the session's length runs from
    #: there to its last answer.
    first_at: float = 0.0
    continues: str | None = None

    @property
    def path(self) -> Path:
        return self.rec.path


def continues_conversation(
    system: str | None,
    messages: list[Message],
    last_system: str | None,
    last_messages: list[Message],
) -> bool:
    """Whether a call (``system``, ``messages``) continues a conversation whose last call
    sent ``last_system`` and ``last_messages``: the same system prompt, and the same
    messages first, with more after them. The one rule by which regista tells one agent
    session from another in traffic (the recording proxy) and in spans (the OTLP importer).
    """
    n = len(last_messages)
    return system == last_system and len(messages) > n and messages[:n] == last_messages


def _task(messages: list[Message]) -> str:
    for m in messages:
        if m.get("role") == "user":
            content = m.get("content")
            if isinstance(content, str):
                return content
            if isinstance(content, list):
                return "".join(
                    b.get("text", "") for b in content if isinstance(b, dict) and "text" in b
                )
    return ""


def _results(messages: list[Message]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for m in messages:
        content = m.get("content")
        if m.get("role") != "user" or not isinstance(content, list):
            continue
        for b in content:
            if isinstance(b, dict) and b.get("type") == "tool_result":
                out[str(b.get("tool_use_id"))] = b
    return out


def _in_event_loop() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


class SessionBook:
    """Open sessions of one recording, written into ``trace_dir``.

    Args:
        trace_dir: Where traces go (``<trace_dir>/<session_id>.jsonl``).
        forked_from: For a fork: the link every session written gets.
        idle_seconds: End a session no call has continued for this long (``None``: only
            when the book is closed).
        clock: Seconds, monotonic (tests pass a fake one).
    """

    def __init__(
        self,
        trace_dir: str | Path,
        forked_from: dict[str, Any] | None = None,
        *,
        idle_seconds: float | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.trace_dir = Path(trace_dir)
        self.forked_from = forked_from
        self.idle_seconds = idle_seconds
        self.clock = clock
        self.sessions: list[SdkSession] = []
        self._lock = threading.Lock()
        #: Answered calls not written yet (see :meth:`begin`).
        self._pending = 0
        self._written = threading.Condition(self._lock)
        #: For a fork's book: the requests its replay rejected so far (answered 409), which
        #: each session's ``session.end`` gives under ``replay.rejected``.
        self.rejected: Callable[[], int] | None = None

    @property
    def paths(self) -> list[Path]:
        return [s.path for s in self.sessions]

    def _find(self, request: LlmRequest) -> SdkSession:
        continues: str | None = None
        for s in reversed(self.sessions):
            if continues_conversation(request.system, request.messages, s.system, s.messages):
                if not s.rec.closed:
                    return s
                continues = continues or s.rec.session_id
        session_id = str(ULID())
        rec = TraceRecorder.create(self.trace_dir / f"{session_id}.jsonl", session_id)
        session = SdkSession(rec, request.system, [], continues=continues)
        self.sessions.append(session)
        return session

    def conversation_of(self, response_id: str) -> list[Message] | None:
        """The messages that end with the answer ``response_id`` (what a Responses API
        ``previous_response_id`` stands for), when a session of this book answered it last."""
        with self._lock:
            for s in reversed(self.sessions):
                if s.last is not None and response_id in (s.last.id, f"resp_{s.last.id}"):
                    return [*s.messages, {"role": "assistant", "content": list(s.last.content)}]
        return None

    def begin(self) -> None:
        """A call's answer is about to be passed on and written after: :meth:`close` waits
        for the matching :meth:`finish`."""
        with self._lock:
            self._pending += 1

    def finish(self) -> None:
        """The call announced by :meth:`begin` is written (or will not be)."""
        with self._lock:
            self._pending -= 1
            self._written.notify_all()

    def wait_written(self, timeout: float = 5.0) -> bool:
        """Wait until every call already answered is written; whether they all are."""
        with self._lock:
            return self._wait_written(timeout)

    def _wait_written(self, timeout: float) -> bool:
        if self._pending and not _in_event_loop():
            self._written.wait_for(lambda: self._pending <= 0, timeout)
        return self._pending <= 0

    def record(
        self,
        provider: str,
        request: LlmRequest,
        response: LlmResponse,
        *,
        source: str = "live",
        duration_ms: float = 0.0,
        matched: bool | None = None,
        stream: bool | None = None,
        server: dict[str, Any] | None = None,
        api: str | None = None,
    ) -> int:
        """Write one model call (and the tool steps before it); return its step.
        ``stream`` and ``server`` say how the call was made (see ``TraceRecorder.response``);
        ``api`` names the provider's API when it has several (``openai-responses``)."""
        with self._lock:
            self._sweep(self.clock())
            s = self._find(request)
            s.last_seen = self.clock()
            if not s.started:
                s.rec.start(
                    task=_task(request.messages),
                    model=request.model,
                    provider=provider,
                    instructions=request.system,
                    tools=request.tools,
                    max_tokens=request.max_tokens,
                    params=request.params,
                    forked_from=self.forked_from,
                    metadata={
                        "recorded_by": "regista record",
                        "api": api or provider,
                        **({"continues": s.continues} if s.continues else {}),
                    },
                )
                s.started = True
                s.first_at = s.last_seen - duration_ms / 1000
            if s.last is not None:
                results = _results(request.messages[len(s.messages) :])
                for use in s.last.tool_uses:
                    block = results.get(str(use.get("id")))
                    if block is None:
                        continue
                    content = block.get("content", "")
                    args = use.get("input")
                    s.rec.tool_step(
                        str(use.get("id")),
                        str(use.get("name")),
                        args if isinstance(args, dict) else {},
                        content if isinstance(content, str | list) else str(content),
                        is_error=bool(block.get("is_error")),
                        by="default",
                        source=source if source != "edit" else "recorded",
                    )
            step = s.rec.request(request)
            model = response.model or request.model
            cost = (
                0.0
                if source != "live"
                else cost_usd(model, response.usage)
                if price_for(model) is not None
                else None
            )
            s.rec.response(
                step,
                response,
                provider=provider,
                source=source,
                cost_usd=cost,
                duration_ms=duration_ms,
                matched=matched,
                stream=stream,
                server=server,
            )
            s.messages = list(request.messages)
            s.last = response
            return step

    def sweep(self) -> int:
        """End the sessions idle for ``idle_seconds`` or more; return how many ended."""
        with self._lock:
            return self._sweep(self.clock())

    def _sweep(self, now: float) -> int:
        if self.idle_seconds is None:
            return 0
        ended = 0
        for s in self.sessions:
            if not s.rec.closed and now - s.last_seen >= self.idle_seconds:
                self._end(s, self.rejected)
                ended += 1
        if ended:  # a long-running server keeps only the latest ended sessions in memory
            done = [s for s in self.sessions if s.rec.closed]
            drop = {id(s) for s in done[: max(0, len(done) - _KEEP_ENDED)]}
            self.sessions = [s for s in self.sessions if id(s) not in drop]
        return ended

    @property
    def open_sessions(self) -> int:
        """How many sessions are still being written."""
        return sum(1 for s in self.sessions if not s.rec.closed)

    def close(self, timeout: float = 5.0) -> None:
        """End every open session with how its last answer stopped, once the calls already
        answered are written (waiting up to ``timeout`` seconds for them; not at all on
        the thread of a running event loop, which is the one that writes them)."""
        with self._lock:
            self._wait_written(timeout)
            for s in self.sessions:
                if not s.rec.closed:
                    self._end(s, self.rejected)

    @staticmethod
    def _end(s: SdkSession, rejected: Callable[[], int] | None = None) -> None:
        if not s.started:
            s.rec.close()
            return
        last = s.last
        stop = (last.stop_reason or "end_turn") if last is not None else "error"
        s.rec.end(
            stop,
            output=last.text if last is not None else None,
            duration_ms=max(s.last_seen - s.first_at, 0.0) * 1000,
            replay=None
            if rejected is None
            else {**s.rec.sources, "diverged_at": None, "rejected": rejected()},
        )
        # the prefix is still needed to tell a continuation from a new conversation
