"""The recorder: what turns "this happened" into the valid events of one trace.

:class:`TraceRecorder` numbers steps, stores each request as a delta on the previous one
(``messages_prefix``) with its ``request_hash``, counts turns, tool calls and who answered,
sums usage and cost, and closes the session with its totals. The agent loop uses it, and so
can anything else that writes traces without running an agent (a recording proxy, an
importer of another tool's sessions)::

    with TraceRecorder.create(path, session_id) as rec:
        rec.start(task="hi", model="claude-sonnet-4-6", provider="anthropic")
        step = rec.request(request)
        rec.response(step, response, provider="anthropic", cost_usd=0.0)
        rec.end("end_turn", output=response.text)

The recorder decides nothing: the caller says what happened, in order.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import compress, count
from operator import is_not
from pathlib import Path
from typing import Any, get_args

from pydantic import ValidationError

from regista._version import __version__
from regista.errors import TraceWriteError
from regista.harness_notes import typed
from regista.pricing import add_costs
from regista.trace.canonical import PrefixHasher
from regista.trace.events import (
    ContextCompaction,
    ErrorEvent,
    EventBase,
    LlmRequestEvent,
    LlmResponseEvent,
    PermissionDecision,
    SessionEnd,
    SessionStart,
    Source,
    ToolCall,
    ToolResult,
)
from regista.trace.writer import TraceWriter, too_deep_error
from regista.types import LlmRequest, LlmResponse, Message, Usage

__all__ = ["TraceRecorder", "common_prefix", "tool_result_block"]


def common_prefix(prev: list[Message], cur: list[Message]) -> int:
    """How many leading messages ``cur`` shares with ``prev``: the same objects (the agent
    loop passes its history on), told apart at C speed, then equal ones."""
    n = min(len(prev), len(cur))
    i: int = next(compress(count(), map(is_not, prev, cur)), n)
    while i < n and prev[i] == cur[i]:
        i += 1
    return i


def tool_result_block(tool_use_id: str, content: Any, is_error: bool) -> dict[str, Any]:
    """The ``tool_result`` content block that carries a tool's outcome back to the model."""
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": tool_use_id, "content": content}
    if is_error:
        block["is_error"] = True
    return block


#: The values of ``source`` and ``by``, and the types of a duration or a cost.
_SOURCES = frozenset(get_args(Source))
_BY = frozenset(("policy", "default", "recorded"))
_NUMBERS = frozenset((float, int))


def _objects(value: Any) -> bool:
    """Whether ``value`` is a list of JSON objects (a tool result's content blocks)."""
    if type(value) is not list:
        return False
    for item in value:  # noqa: SIM110 - no generator made on a result's path
        if type(item) is not dict:
            return False
    return True


def _how(stream: bool | None, server: dict[str, Any] | None) -> dict[str, Any]:
    """The optional ``stream`` / ``server`` fields of an answer, when known."""
    how: dict[str, Any] = {}
    if stream is not None:
        how["stream"] = stream
    if server:
        how["server"] = server
    return how


class TraceRecorder:
    """Writes one session's events through a :class:`TraceWriter`, keeping the bookkeeping.

    Args:
        writer: Where the events go; the recorder owns it from now on (:meth:`end` and
            :meth:`close` close it).

    Attributes:
        steps: Steps numbered so far (the next step's number).
        turns: Turns so far: the requests whose last message is new text the person typed
            (:func:`regista.harness_notes.typed`), as an importer counts them; a loop's
            task is its one turn.
        answers: Model answers recorded so far (what ``max_turns`` limits).
        tool_calls: Tool calls recorded so far.
        usage: Token usage summed over model answers and compactions.
        cost_usd: Cost summed likewise; ``None`` once any part's cost is unknown.
        sources: How many answers (model, compaction, tool) came from each source
            (``live``, ``recorded``, ``edit``).
    """

    def __init__(self, writer: TraceWriter) -> None:
        self.writer = writer
        self.steps = 0
        self.turns = 0
        self.answers = 0
        self.tool_calls = 0
        self.usage = Usage()
        self.cost_usd: float | None = 0.0
        self.sources: dict[str, int] = {"recorded": 0, "edit": 0, "live": 0}
        self._prev_messages: list[Message] = []
        #: Hashes each request from where the previous one's messages left off.
        self._hasher = PrefixHasher()

    @property
    def turn(self) -> int:
        """The number of the turn under way (from 0), written as ``turn`` on its events."""
        return max(self.turns - 1, 0)

    @classmethod
    def create(
        cls,
        path: str | Path,
        session_id: str,
        *,
        fsync: bool = False,
        clock: Callable[[], str] | None = None,
        redact: bool | None = None,
    ) -> TraceRecorder:
        """Open a recorder on a new trace file (see :class:`TraceWriter` for the arguments)."""
        return cls(TraceWriter(path, session_id, fsync=fsync, clock=clock, redact=redact))

    @property
    def path(self) -> Path:
        return self.writer.path

    @property
    def session_id(self) -> str:
        return self.writer.session_id

    @property
    def closed(self) -> bool:
        return self.writer.closed

    def add_listener(self, callback: Callable[[Any], Any]) -> None:
        """Call ``callback(event)`` after each event is on disk."""
        self.writer.add_listener(callback)

    def next_step(self) -> int:
        """Number a new step and return its number."""
        step = self.steps
        self.steps += 1
        return step

    def _check(self, event_cls: type[EventBase], fields: dict[str, Any]) -> None:
        """Refuse ``fields`` when the event's model refuses them (a value of another type
        than its field's, which the reader would refuse): nothing is written, and the trace
        stays readable. The common calls are told apart by a few type tests first."""
        try:
            event_cls.model_validate({"session_id": self.session_id, "seq": 0, **fields})
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            kind = event_cls.model_fields["type"].default
            article = "an" if str(kind)[:1] in "aeiou" else "a"
            raise TraceWriteError(
                f"cannot record {article} {kind} event in {self.path}: {where}: {first['msg']}"
            ) from None
        except RecursionError:
            kind = event_cls.model_fields["type"].default
            raise too_deep_error(str(kind), self.path) from None

    def _count(self, source: str) -> None:
        self.sources[source] = self.sources.get(source, 0) + 1

    # -- the session -----------------------------------------------------------------------

    def start(
        self,
        *,
        task: str,
        model: str,
        provider: str,
        instructions: str | None = None,
        tools: list[dict[str, Any]] | None = None,
        policy: str | None = None,
        context: dict[str, Any] | None = None,
        max_turns: int = 20,
        max_tokens: int = 4096,
        params: dict[str, Any] | None = None,
        agent_ref: str | None = None,
        replay_of: str | None = None,
        forked_from: dict[str, Any] | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> SessionStart:
        """Write ``session.start``: the configuration the session runs with."""
        fields = dict(
            task=task,
            instructions=instructions,
            model=model,
            provider=provider,
            tools=tools or [],
            policy=policy,
            context=context,
            max_turns=max_turns,
            max_tokens=max_tokens,
            params=params or {},
            agent_ref=agent_ref,
            replay_of=replay_of,
            forked_from=forked_from,
            metadata=metadata or {},
            regista_version=__version__,
        )
        self._check(SessionStart, fields)
        event: SessionStart = self.writer.write(SessionStart, **fields)
        return event

    def end(
        self,
        stop_reason: str,
        *,
        output: str | None = None,
        duration_ms: float = 0.0,
        error: str | None = None,
        replay: dict[str, Any] | None = None,
    ) -> SessionEnd:
        """Write ``session.end`` with the totals counted so far, and close the trace."""
        fields = dict(
            stop_reason=stop_reason,
            output=output,
            turns=self.turns,
            steps=self.steps,
            tool_calls=self.tool_calls,
            usage=self.usage.model_dump(),
            cost_usd=self.cost_usd,
            duration_ms=duration_ms,
            error=error,
            replay=replay,
        )
        self._check(SessionEnd, fields)
        event: SessionEnd = self.writer.write(SessionEnd, **fields)
        self.close()
        return event

    def error(
        self, where: str, error_type: str, message: str, *, step: int | None = None
    ) -> ErrorEvent:
        """Write an ``error`` event (``where``: provider, tool, agent or replay)."""
        fields = dict(step=step, where=where, error_type=error_type, message=message)
        self._check(ErrorEvent, fields)
        event: ErrorEvent = self.writer.write(ErrorEvent, **fields)
        return event

    # -- model calls -----------------------------------------------------------------------

    def _account(self, usage: Usage, cost_usd: float | None, source: str) -> None:
        self.usage = self.usage + usage
        self.cost_usd = add_costs(self.cost_usd, cost_usd)
        self._count(source)

    def request(
        self, request: LlmRequest, *, step: int | None = None, side: str | None = None
    ) -> int:
        """Write ``llm.request``: only the messages new since the previous request are
        stored, after ``messages_prefix`` shared ones.

        Args:
            request: The full request sent to the model.
            step: Its step number (default: a new one).
            side: A side call of the conversation (``"call"``: a title, a topic, …;
                ``"count_tokens"``), written as ``side`` on the event.

        Returns:
            The step number.
        """
        if step is None:
            step = self.next_step()
        messages = request.messages
        prefix = common_prefix(self._prev_messages, messages)
        if side is None and messages and prefix < len(messages) and typed(messages[-1]):
            self.turns += 1  # the person spoke (a retry or a compaction repeats no message)
        fields = {
            "step": step,
            "turn": self.turn,
            "request_hash": request.hash_by(self._hasher),
            "model": request.model,
            "system": request.system,
            "tools": request.tools,
            "tool_choice": request.tool_choice,
            "max_tokens": request.max_tokens,
            "params": request.params,
            "messages_prefix": prefix,
            "messages": messages[prefix:],
        }
        if side is not None:
            fields["side"] = side
        self.writer.append(LlmRequestEvent, fields)
        self._prev_messages = list(messages)
        return step

    def response(
        self,
        step: int,
        response: LlmResponse,
        *,
        provider: str,
        source: str = "live",
        cost_usd: float | None = None,
        duration_ms: float = 0.0,
        matched: bool | None = None,
        stream: bool | None = None,
        server: dict[str, Any] | None = None,
    ) -> None:
        """Write ``llm.response`` for the request of ``step``; it ends a turn, and its
        usage and cost join the totals. ``stream`` (whether the call streamed) and
        ``server`` (``{"address", "port"}`` of the API) are written when known."""
        try:
            payload = response.payload()
        except (ValueError, RecursionError):  # nested past what can be serialised
            raise too_deep_error("llm.response", self.path) from None
        fields = {
            "step": step,
            "turn": self.turn,
            "response": payload,
            "provider": provider,
            "source": source,
            "cost_usd": cost_usd,
            "duration_ms": duration_ms,
            "matched": matched,
            **_how(stream, server),
        }
        if not (
            type(step) is int
            and type(provider) is str
            and type(source) is str
            and source in _SOURCES
            and (cost_usd is None or type(cost_usd) in _NUMBERS)
            and type(duration_ms) in _NUMBERS
            and (matched is None or type(matched) is bool)
        ):
            self._check(LlmResponseEvent, fields)
        self.writer.append(LlmResponseEvent, fields)
        self._account(response.usage, cost_usd, source)
        self.answers += 1

    def model_step(
        self,
        request: LlmRequest,
        response: LlmResponse,
        *,
        provider: str,
        source: str = "live",
        cost_usd: float | None = None,
        duration_ms: float = 0.0,
        stream: bool | None = None,
        server: dict[str, Any] | None = None,
    ) -> int:
        """Write a whole model step (request and response); return its number."""
        step = self.request(request)
        self.response(
            step,
            response,
            provider=provider,
            source=source,
            cost_usd=cost_usd,
            duration_ms=duration_ms,
            stream=stream,
            server=server,
        )
        return step

    def compaction(
        self,
        step: int,
        request: LlmRequest,
        response: LlmResponse,
        *,
        replaced: list[Message],
        tokens_before: int,
        provider: str,
        source: str = "live",
        cost_usd: float | None = None,
        duration_ms: float = 0.0,
    ) -> None:
        """Write ``context.compaction``: ``replaced`` messages summarised by ``response``
        (whose usage and cost join the totals)."""
        self._account(response.usage, cost_usd, source)
        self.writer.append(
            ContextCompaction,
            {
                "step": step,
                "turn": self.turn,
                "replaced": replaced,
                "summary": response.text,
                "request_hash": request.hash,
                "tokens_before": tokens_before,
                "provider": provider,
                "source": source,
                "usage": response.usage.model_dump(),
                "cost_usd": cost_usd,
                "duration_ms": duration_ms,
            },
        )

    # -- tool calls ------------------------------------------------------------------------

    def tool_call(self, tool_use_id: str, name: str, input: dict[str, Any]) -> int:
        """Write ``tool.call`` (of the last model answer) as a new step; return its number."""
        step = self.steps
        fields = {
            "step": step,
            "turn": self.turn,
            "tool_use_id": tool_use_id,
            "name": name,
            "input": input,
        }
        if not (type(tool_use_id) is str and type(name) is str and type(input) is dict):
            self._check(ToolCall, fields)
        self.writer.append(ToolCall, fields)
        self.next_step()
        self.tool_calls += 1
        return step

    def decision(
        self, step: int, tool_use_id: str, *, allowed: bool, reason: str | None, by: str
    ) -> None:
        """Write ``permission.decision`` (``by``: policy, default or recorded)."""
        fields = {
            "step": step,
            "tool_use_id": tool_use_id,
            "allowed": allowed,
            "reason": reason,
            "by": by,
        }
        if not (
            type(step) is int
            and type(tool_use_id) is str
            and type(allowed) is bool
            and (reason is None or type(reason) is str)
            and type(by) is str
            and by in _BY
        ):
            self._check(PermissionDecision, fields)
        self.writer.append(PermissionDecision, fields)

    def tool_result(
        self,
        step: int,
        tool_use_id: str,
        name: str,
        content: str | list[dict[str, Any]],
        *,
        is_error: bool = False,
        source: str = "live",
        duration_ms: float = 0.0,
    ) -> None:
        """Write ``tool.result``; it ends the tool step."""
        fields = {
            "step": step,
            "tool_use_id": tool_use_id,
            "name": name,
            "content": content,
            "is_error": is_error,
            "source": source,
            "duration_ms": duration_ms,
        }
        if not (
            type(step) is int
            and type(tool_use_id) is str
            and type(name) is str
            and (type(content) is str or _objects(content))
            and type(is_error) is bool
            and type(source) is str
            and source in _SOURCES
            and type(duration_ms) in _NUMBERS
        ):
            self._check(ToolResult, fields)
        self.writer.append(ToolResult, fields)
        self._count(source)

    def tool_step(
        self,
        tool_use_id: str,
        name: str,
        input: dict[str, Any],
        content: str | list[dict[str, Any]],
        *,
        is_error: bool = False,
        allowed: bool = True,
        reason: str | None = None,
        by: str = "default",
        source: str = "live",
        duration_ms: float = 0.0,
    ) -> int:
        """Write a whole tool step (call, decision, result); return its number."""
        step = self.tool_call(tool_use_id, name, input)
        self.decision(step, tool_use_id, allowed=allowed, reason=reason, by=by)
        self.tool_result(
            step,
            tool_use_id,
            name,
            content,
            is_error=is_error,
            source=source,
            duration_ms=duration_ms,
        )
        return step

    def close(self) -> None:
        """Close the trace file (without ``session.end``: the session stays unfinished)."""
        self.writer.close()

    def __enter__(self) -> TraceRecorder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
