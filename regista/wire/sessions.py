"""Turning SDK traffic into ordinary regista traces, one per agent session.

A call whose messages extend an open session's last request (same system prompt, the same
messages first) continues that session; any other call starts a new one. Between two model
calls, the ``tool_result`` blocks the agent sends back for the previous answer's
``tool_use`` blocks become tool steps, so the trace has the steps every consumer knows.
Only normalised bodies are written: never headers, so never an API key.

Two calls of one conversation are compared without their ``cache_control`` markers:
Claude Code moves its cache breakpoint to the newest message on every call, so the message
that held it last time comes back without it.

**Side calls.** A call that continues no session, sent without tools while a conversation
with tools is open, is a side call of that conversation when it names the same sender in
``metadata.user_id`` (Claude Code does), or, where neither names one, asks another model: a
title or topic asked of a small model, a quota check. So is a ``count_tokens`` call. It is
written into the conversation's trace as a model step of its own, marked
``"side": "call"`` (or ``"count_tokens"``) on its ``llm.request``, and leaves the
conversation as it was: the next call still extends the conversation's last request, and
its tool steps are still found. A replay serves side steps like any other (by their
digest); a ``count_tokens`` answer is kept whole under the response's ``count_tokens``
field, with no usage (nothing was generated, nothing billed). A tool-less call of the same
model that names no sender is a conversation of its own.

A session ends (``session.end`` with its last answer's stop reason) when the book is closed
— the recording child exits, or the server shuts down — or, with ``idle_seconds``, once no
call has continued it for that long (:meth:`SessionBook.sweep`). A call that extends a
session already ended starts a new trace whose ``session.start.metadata.continues`` names it.
"""

from __future__ import annotations

import asyncio
import copy
import threading
import time
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ulid import ULID

from regista.harness_notes import asked
from regista.pricing import cost_usd, price_for
from regista.trace.recorder import TraceRecorder
from regista.trace.validate import check_messages, check_response
from regista.types import LlmRequest, LlmResponse, Message, tool_results_of
from regista.wire.openai_responses import substitute_outputs
from regista.wire.shapes import openai_tool_result, openai_tool_text

__all__ = [
    "SdkSession",
    "SessionBook",
    "continues_conversation",
    "edit_tool_results",
    "substitute_tool_results",
    "with_tool_edits",
]

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
    #: When its last answer came back (its tools ran from then until the next call).
    answered_at: float = 0.0
    #: When its first call was sent (the clock's seconds): the session's length runs from
    #: there to its last answer.
    first_at: float = 0.0
    continues: str | None = None
    #: Who sent its first call (``metadata.user_id``), when it said.
    sender: str | None = None
    #: Whether its conversation offers the model tools.
    tools: bool = False
    #: The model its first call asked.
    model: str = ""

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
    messages first (``cache_control`` markers aside: Claude Code moves its cache breakpoint
    to the newest message on every call), with more after them. The one rule by which
    regista tells one agent session from another in traffic (the recording proxy) and in
    spans (the OTLP importer).
    """
    return system == last_system and _extends(messages, last_messages)


def _task(messages: list[Message]) -> str:
    """What the person asked: the first user text that is not a harness's note (Claude
    Code's reminders, Codex's environment and AGENTS.md messages: :mod:`regista.harness_notes`);
    the first user message whole when there is nothing else."""
    first: str | None = None
    for m in messages:
        if m.get("role") != "user":
            continue
        content = m.get("content")
        if isinstance(content, str):
            texts = [content]
        elif isinstance(content, list):
            texts = [
                str(b.get("text", ""))
                for b in content
                if isinstance(b, dict) and b.get("type", "text") == "text" and "text" in b
            ]
        else:
            continue
        said = [t for t in map(asked, texts) if t]
        if said:
            return "\n\n".join(said)
        if first is None:
            first = "".join(texts)
    return first or ""


def _unmarked(message: Message) -> Message:
    """``message`` without ``cache_control`` markers (on its blocks, and the blocks of its
    tool results)."""
    content = message.get("content")
    if not isinstance(content, list):
        return message
    blocks = []
    for b in content:
        if isinstance(b, dict):
            b = {k: v for k, v in b.items() if k != "cache_control"}
            inner = b.get("content")
            if isinstance(inner, list):
                b["content"] = [
                    {k: v for k, v in x.items() if k != "cache_control"}
                    if isinstance(x, dict)
                    else x
                    for x in inner
                ]
        blocks.append(b)
    return {**message, "content": blocks}


def _extends(request: list[Message], before: list[Message]) -> bool:
    """Whether ``request`` holds ``before`` first and more after, ``cache_control``
    markers aside."""
    n = len(before)
    if len(request) <= n:
        return False
    pairs = zip(request[:n], before, strict=True)
    return all(a == b or _unmarked(a) == _unmarked(b) for a, b in pairs)


def _sender(request: LlmRequest) -> str | None:
    """Who sent the call, when it says (the Messages API's ``metadata.user_id``)."""
    metadata = request.params.get("metadata")
    user = metadata.get("user_id") if isinstance(metadata, dict) else None
    return user if isinstance(user, str) else None


def _edited(block: Any, edits: Mapping[str, Any]) -> str | None:
    """The tool_use_id of ``block`` when it is a tool result that ``edits`` replaces (an id
    that is not text, as any part of a request may be, is none)."""
    if not isinstance(block, dict) or block.get("type") != "tool_result":
        return None
    tool_use_id = block.get("tool_use_id")
    return tool_use_id if isinstance(tool_use_id, str) and tool_use_id in edits else None


def edit_tool_results(
    messages: list[Any], edits: Mapping[str, Any], errors: Collection[str] = ()
) -> None:
    """Put the edited results (by tool_use_id) in place of the ``tool_result`` blocks of
    Anthropic-shaped ``messages``, in place; ``errors``: the ids whose edit is an error."""
    for m in messages:
        if not isinstance(m, dict):
            continue
        content = m.get("content")
        if m.get("role") != "user" or not isinstance(content, list):
            continue
        for b in content:
            tool_use_id = _edited(b, edits)
            if tool_use_id is not None:
                b["content"] = edits[tool_use_id]
                if tool_use_id in errors:
                    b["is_error"] = True
                else:
                    b.pop("is_error", None)


def with_tool_edits(
    request: LlmRequest,
    edits: Mapping[str, Any],
    errors: Collection[str] = (),
    provider: str = "anthropic",
) -> LlmRequest:
    """``request`` (normalised from ``provider``'s shape) as the model of a fork sees it:
    the edited tool results in place of the agent's own, as that provider carries them
    (``request`` itself when no message holds one)."""
    if not edits or not any(
        _edited(b, edits) is not None
        for m in request.messages
        if isinstance(m.get("content"), list)
        for b in m["content"]
    ):
        return request
    if provider == "openai":  # a tool message is text: read back as text blocks
        edits = {k: openai_tool_result(v) for k, v in edits.items()}
    messages = copy.deepcopy(request.messages)
    edit_tool_results(messages, edits, errors)
    return request.model_copy(update={"messages": messages})


def _in_event_loop() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def _answer(
    s: SdkSession,
    step: int,
    provider: str,
    request: LlmRequest,
    response: LlmResponse,
    source: str,
    duration_ms: float,
    matched: bool | None,
    stream: bool | None,
    server: dict[str, Any] | None,
) -> None:
    """Write the answer of ``step``: a live call costs what the price table says (unknown
    for a model it lacks), a served one $0."""
    model = response.model or request.model
    cost = (
        (cost_usd(model, response.usage) if price_for(model) is not None else None)
        if source == "live"
        else 0.0
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


class SessionBook:
    """Open sessions of one recording, written into ``trace_dir``.

    Args:
        trace_dir: Where traces go (``<trace_dir>/<session_id>.jsonl``).
        forked_from: For a fork: the link every session written gets.
        idle_seconds: End a session no call has continued for this long (``None``: only
            when the book is closed).
        clock: Seconds, monotonic (tests pass a fake one).
        tool_edits: For a fork: edited tool results by tool_use_id. Every call is written
            with them in place of the agent's own results (what the model saw), and their
            tool steps are written as edits.
        tool_errors: The tool_use_ids whose edited result is an error.
        live_from: For a fork: its first live step. A tool step before it is written as
            recorded, one from it on as live, whichever call brought its result (the
            agent runs its tools either way; this is where the harness's fork takes them
            from).
    """

    def __init__(
        self,
        trace_dir: str | Path,
        forked_from: dict[str, Any] | None = None,
        *,
        idle_seconds: float | None = None,
        clock: Callable[[], float] = time.monotonic,
        tool_edits: Mapping[str, Any] | None = None,
        tool_errors: Collection[str] = (),
        live_from: int | None = None,
    ) -> None:
        self.trace_dir = Path(trace_dir)
        self.forked_from = forked_from
        self.tool_edits = dict(tool_edits or {})
        self.tool_errors = frozenset(tool_errors)
        self.live_from = live_from
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
        side: str | None = None,
    ) -> int:
        """Write one model call (and the tool steps before it); return its step.
        ``stream`` and ``server`` say how the call was made (see ``TraceRecorder.response``).
        ``api`` names the provider's API when it has several (``openai-responses``);
        ``side``: a ``count_tokens`` call (``"count_tokens"``), written as a side step.

        Raises:
            ValueError: The call would not read back (the reader's check says why); nothing
                is written.
        """
        # what is written must read back: checked with the reader's own check first
        check_messages(request.messages)
        check_response(response.payload())
        # the same request whether it was served or went live (where the agent's own
        # result was replaced on its way upstream): one conversation, one trace
        request = with_tool_edits(request, self.tool_edits, self.tool_errors, provider)
        with self._lock:
            self._sweep(self.clock())
            main = self._side_of(request, bool(side)) if side or not request.tools else None
            if main is not None or side:
                if main is None:  # counted before any conversation: one of its own
                    main = self._find(request)
                    if not main.started:
                        self._start(main, provider, request, duration_ms, api)
                # a side call: written into ``main``, leaving its conversation as it was
                main.last_seen = self.clock()
                step = main.rec.request(request, side=side or "call")
                _answer(
                    main, step, provider, request, response, source, duration_ms, matched,
                    stream, server,
                )  # fmt: skip
                return step
            s = self._find(request)
            s.last_seen = self.clock()
            if not s.started:
                self._start(s, provider, request, duration_ms, api)
            if s.last is not None:
                # The tools ran between the answer that asked for them and this call: the
                # agent sends their results as it starts the call.
                tools_ms = max(s.last_seen - duration_ms / 1000 - s.answered_at, 0.0) * 1000
                results = tool_results_of(request.messages[len(s.messages) :])
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
                        source=self._tool_source(str(use.get("id")), s.rec.steps, source),
                        duration_ms=tools_ms,
                    )
            step = s.rec.request(request)
            _answer(
                s, step, provider, request, response, source, duration_ms, matched, stream, server
            )
            s.messages = list(request.messages)
            s.last = response
            s.answered_at = s.last_seen
            return step

    def _start(
        self,
        s: SdkSession,
        provider: str,
        request: LlmRequest,
        duration_ms: float,
        api: str | None = None,
    ) -> None:
        s.last_seen = self.clock()
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
        s.sender = _sender(request)
        s.tools = bool(request.tools)
        s.model = request.model
        s.first_at = s.last_seen - duration_ms / 1000

    def _side_of(self, request: LlmRequest, counted: bool = False) -> SdkSession | None:
        """The open conversation a call that continues none is a side call of (see the
        module's docstring), or ``None``. A tool-less call is one when it names the
        conversation's sender, or, where neither names one, asks another model (a
        tool-less chat of the same model is a conversation of its own); a token count
        (``counted``) is one of the latest conversation of its sender."""
        if any(
            continues_conversation(request.system, request.messages, s.system, s.messages)
            for s in self.sessions
            if not s.rec.closed
        ):
            return None
        sender = _sender(request)
        for s in reversed(self.sessions):
            if s.rec.closed or not s.started or not (s.tools or counted):
                continue
            if sender is not None or s.sender is not None:
                if sender == s.sender:
                    return s
                continue
            if counted or request.model != s.model:
                return s
        return None

    def _tool_source(self, tool_use_id: str, step: int, call_source: str) -> str:
        """Where a tool step's result is said to come from (see ``live_from``)."""
        if tool_use_id in self.tool_edits:
            return "edit"
        if self.live_from is not None:
            return "live" if step >= self.live_from else "recorded"
        return call_source if call_source != "edit" else "recorded"

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

    def _end(self, s: SdkSession, rejected: Callable[[], int] | None = None) -> None:
        if not s.started:
            s.rec.close()
            return
        last = s.last
        stop = (last.stop_reason or "end_turn") if last is not None else "error"
        replay: dict[str, Any] | None = None
        if rejected is not None or self.forked_from:
            # a fork says, as the harness's does, how many steps came from where
            replay = {**s.rec.sources, "diverged_at": None}
            if rejected is not None:
                replay["rejected"] = rejected()
        s.rec.end(
            stop,
            output=last.text if last is not None else None,
            duration_ms=max(s.last_seen - s.first_at, 0.0) * 1000,
            replay=replay,
        )
        # the prefix is still needed to tell a continuation from a new conversation


def substitute_tool_results(
    body: dict[str, Any],
    provider: str,
    edits: dict[str, Any],
    errors: Collection[str] = (),
) -> None:
    """Put edited tool results in place of the agent's own, in a body about to go upstream
    (the model sees the edit whatever the agent's real tool returned); ``errors``: the
    tool_use_ids whose edit is an error (Anthropic's ``is_error``; OpenAI has no such flag)."""
    if provider == "openai" and isinstance(body.get("input"), list):
        substitute_outputs(body["input"], edits)
        return
    if provider == "openai":
        for m in body.get("messages") or []:
            call_id = m.get("tool_call_id") if isinstance(m, dict) else None
            if isinstance(call_id, str) and call_id in edits and m.get("role") == "tool":
                m["content"] = openai_tool_text(edits[call_id])
    else:
        edit_tool_results(body.get("messages") or [], edits, errors)
