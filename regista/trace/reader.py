"""Reading traces: ``Trace.load(path)`` and the views built on it.

A half-written last line (a crash mid-write) is dropped with a :class:`TraceWarning`;
a corrupt line anywhere else raises :class:`TraceFormatError` naming file and line; a
trace newer than :data:`SCHEMA_VERSION` raises :class:`UnsupportedSchemaVersion`.
"""

from __future__ import annotations

import operator
import warnings
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cached_property, reduce
from itertools import compress, repeat
from pathlib import Path
from typing import Any

import orjson
from pydantic import ValidationError

from regista._gc import paused_gc
from regista.errors import TraceError, TraceFormatError, TraceWarning, UnsupportedSchemaVersion
from regista.trace.compact import RESOLVED, RequestDecoder, Resolver, TraceRefError
from regista.trace.events import (
    CONTEXT_COMPACTION,
    LLM_REQUEST,
    SCHEMA_VERSION,
    ContextCompaction,
    ErrorEvent,
    EventAdapter,
    LlmRequestEvent,
    LlmResponseEvent,
    PermissionDecision,
    SessionEnd,
    SessionStart,
    ToolCall,
    ToolResult,
)
from regista.trace.formats import HEAD_BYTES, is_regista_trace
from regista.trace.migrations import migrate
from regista.trace.steps import Step, build_steps
from regista.trace.validate import MAX_DEPTH, NOTHING_NESTED, check_event, too_deep
from regista.types import LlmRequest, LlmResponse, Usage

__all__ = ["Trace", "TraceSummary", "parse_line"]


def _full_request(ev: LlmRequestEvent, messages: list[dict[str, Any]]) -> LlmRequest:
    # The parts were validated when the events were loaded: no need to validate again
    # (validating every rebuilt history would make reading a long trace quadratic).
    return LlmRequest.model_construct(
        model=ev.model,
        system=ev.system,
        messages=messages,
        tools=ev.tools,
        tool_choice=ev.tool_choice,
        max_tokens=ev.max_tokens,
        params=ev.params,
    )


@dataclass(frozen=True)
class TraceSummary:
    """What a person wants to know about a session at a glance."""

    session_id: str
    task: str
    model: str
    provider: str
    turns: int
    steps: int
    tool_calls: int
    cost_usd: float | None
    stop_reason: str | None
    usage: Usage = field(default_factory=Usage)
    output: str | None = None
    replay_of: str | None = None
    forked_from: dict[str, Any] | None = None
    complete: bool = True
    errors: int = 0
    denials: int = 0
    compactions: int = 0

    @classmethod
    def of(cls, start: Any, end: Any, **counts: Any) -> TraceSummary:
        """The summary of a session that began with ``start`` and ended with ``end`` (a
        ``session.end`` event, or ``None`` for one that did not finish), with ``counts``:
        ``turns``, ``steps``, ``tool_calls``, ``cost_usd``, ``usage``, ``errors``,
        ``denials`` and ``compactions``."""
        return cls(
            session_id=start.session_id,
            task=start.task,
            model=start.model,
            provider=start.provider,
            stop_reason=end.stop_reason if end else None,
            output=end.output if end else None,
            replay_of=start.replay_of,
            forked_from=start.forked_from,
            complete=end is not None,
            **counts,
        )


def not_a_trace_file(folder: Path) -> str:
    """What to say when a folder is given for a trace: and which trace in it is newest."""
    try:
        traces = [p for p in folder.glob("*.jsonl") if p.is_file()]
        newest = max(traces, key=lambda p: p.stat().st_mtime) if traces else None
    except OSError:
        newest = None
    hint = f" (its newest trace is {newest})" if newest is not None else ""
    return f"{folder}: is a directory, not a trace file{hint}"


def parse_line(
    raw: bytes,
    path: Path,
    lineno: int,
    decoder: Resolver | None = None,
    *,
    messages: bool = True,
) -> Any:
    """Decode, version-check, migrate and validate one trace line.

    Args:
        raw: The line, without its newline.
        path: The trace (for messages).
        lineno: The 1-based line number (for messages).
        decoder: Completes compact ``llm.request`` lines from the lines before; give the
            same decoder every line of a trace in order. Without one, a compact request
            is returned as written (no ``system``/``tools``, referred results left out).
        messages: ``False``: an ``llm.request`` is read without its messages, system
            prompt and tools, and a ``context.compaction`` with empty placeholders for the
            messages it replaced (their number kept): neither is checked nor rebuilt.
            For listings of steps, which show neither (``regista show``); such a request
            line is not even decoded past its other fields (see :func:`_request_head`).
    """
    if not messages and raw.find(_B_REQUEST_TYPE, 0, 256) >= 0:
        event = _listed_request(raw, path, lineno)
        if event is not None:
            return event
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        if "depth limit" in str(exc) or "recursion" in str(exc):
            reason = f"a value nested more than {MAX_DEPTH} levels deep"
            raise TraceFormatError(path, lineno, reason) from None
        raise TraceFormatError(path, lineno, f"not valid JSON ({exc})") from None
    if type(data) is not dict:
        raise TraceFormatError(path, lineno, "an event must be a JSON object")
    kind = data.get("type")
    if not messages and kind in _MESSAGES_OF_NAMES:
        return _without_messages(data, path, lineno)
    if too_deep(raw, data):
        raise TraceFormatError(path, lineno, f"a value nested more than {MAX_DEPTH} levels deep")
    version = data.get("schema_version")
    if version != SCHEMA_VERSION:
        if not isinstance(version, int) or version < 1:
            raise TraceFormatError(path, lineno, "missing or invalid schema_version")
        if version > SCHEMA_VERSION:
            raise UnsupportedSchemaVersion(path, version, SCHEMA_VERSION)
        data = migrate(data)
    tools: Any = None  # the validated tool schemas this request shares with an earlier one
    if decoder is not None and kind in RESOLVED:
        try:
            decoder.resolve(data)
        except TraceRefError as exc:
            raise TraceFormatError(path, lineno, f"invalid 'llm.request' event: {exc}") from None
        if kind == LLM_REQUEST and isinstance(decoder, RequestDecoder):
            tools = decoder.validated_tools(data.get("tools"))
            if tools is not None:
                del data["tools"]  # validated and checked with the line that wrote them
    try:
        event = _validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = ".".join(str(p) for p in first["loc"])
        raise TraceFormatError(
            path, lineno, f"invalid {data.get('type', '?')!r} event: {loc}: {first['msg']}"
        ) from None
    except RecursionError:
        raise TraceFormatError(path, lineno, "an event nested too deeply") from None
    if tools is not None:
        event.__dict__["tools"] = tools
        event.__pydantic_fields_set__.add("tools")
    if kind not in NOTHING_NESTED:
        problem = check_event(event, tools=tools is None)
        if problem is not None:
            raise TraceFormatError(path, lineno, f"invalid {event.type!r} event: {problem}")
        if tools is None and kind == LLM_REQUEST and isinstance(decoder, RequestDecoder):
            decoder.checked(data["tools"], event.tools)
    return event


#: ``EventAdapter.validate_python`` without the adapter's own per-call work.
_validate = EventAdapter.validator.validate_python

#: What ``messages=False`` leaves out of each kind of event.
_MESSAGES_OF = {LLM_REQUEST: ("messages", "system", "tools", "result_refs"), CONTEXT_COMPACTION: ()}
#: The same kinds as a tuple: any ``type`` value, hashable or not, is looked for in it.
_MESSAGES_OF_NAMES = tuple(_MESSAGES_OF)


def _request_head(raw: bytes) -> bytes | None:
    """An ``llm.request`` line as written, without ``system``, ``tools`` and what follows
    ``max_tokens`` and ``params`` (its messages): the JSON object of its other fields, found
    without decoding the rest. ``None`` when the line is not laid out so.

    Inside a JSON string every ``"`` is escaped, so ``,"key":`` in the bytes is a key; the
    first one is the line's own when only plain values come before it (the writer's field
    order). A line laid out otherwise gives a head that does not decode, or lacks a field,
    and is then read whole.
    """
    if raw.find(_B_REQUEST_TYPE, 0, 256) < 0:
        return None
    end = raw.find(b',"messages_prefix":')
    if end < 0:
        return None
    start = raw.find(b',"system":', 0, end)
    if start < 0:  # a compact line: the previous request's system prompt and tools hold
        return raw[:end] + b"}"
    resume = raw.find(b',"tool_choice":', start, end)
    if resume < 0:
        return None
    return raw[:start] + raw[resume:end] + b"}"


_B_REQUEST_TYPE = b'"type":"llm.request"'


def _listed_request(raw: bytes, path: Path, lineno: int) -> Any:
    """The event of a request line read from its head alone, or ``None``: read it whole."""
    head = _request_head(raw)
    if head is None:
        return None
    try:
        data = orjson.loads(head)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(data, dict) or data.get("type") != LLM_REQUEST:
        return None
    try:
        return _without_messages(data, path, lineno)
    except TraceFormatError:
        return None  # the whole line says what is wrong


def _without_messages(data: dict[str, Any], path: Path, lineno: int) -> Any:
    """An ``llm.request`` or ``context.compaction`` line read for a listing of steps."""
    version = data.get("schema_version")
    if not isinstance(version, int) or version < 1:
        raise TraceFormatError(path, lineno, "missing or invalid schema_version")
    if version > SCHEMA_VERSION:
        raise UnsupportedSchemaVersion(path, version, SCHEMA_VERSION)
    if version != SCHEMA_VERSION:
        data = migrate(data)
    for key in _MESSAGES_OF[data["type"]]:
        data.pop(key, None)
    replaced = data.get("replaced")
    if isinstance(replaced, list):
        data["replaced"] = [{} for _ in replaced]
    if data["type"] == LLM_REQUEST:
        data["messages"] = []
    try:
        event = _validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = ".".join(str(p) for p in first["loc"])
        raise TraceFormatError(
            path, lineno, f"invalid {data['type']!r} event: {loc}: {first['msg']}"
        ) from None
    problem = check_event(event, messages=False)
    if problem is not None:
        raise TraceFormatError(path, lineno, f"invalid {event.type!r} event: {problem}")
    return event


class Trace:
    """A loaded trace: its events in ``seq`` order and the views people use.

    Build with :meth:`load`; the constructor takes already-validated events.
    """

    def __init__(self, events: list[Any], path: Path | None = None, *, truncated: bool = False):
        self.events = events
        self.path = path
        self._request_cache: dict[int, LlmRequest] = {}
        #: True when a half-written last line was dropped.
        self.truncated = truncated

    # -- loading -------------------------------------------------------------------------

    @classmethod
    def load(cls, path: str | Path, *, messages: bool = True) -> Trace:
        """Read and validate a trace file.

        Args:
            path: The trace.
            messages: ``False``: requests and compactions are read without their messages
                (see :func:`parse_line`): a listing of steps reads a big trace much faster,
                but its requests cannot be rebuilt.

        Raises:
            TraceError: The file is missing or empty.
            TraceFormatError: A line (other than a half-written last one) is corrupt.
            UnsupportedSchemaVersion: The trace is newer than this regista.
        """
        path = Path(path)
        try:
            with open(path, "rb", buffering=0) as file:
                head = file.read(_CHUNK)
                if not is_regista_trace(head[:HEAD_BYTES]):
                    data = head + file.read()
                else:
                    events, truncated = _parse_file(file, head, path, messages)
                    return cls._checked(events, path, truncated)
        except FileNotFoundError:
            raise TraceError(f"{path}: no such trace file") from None
        except IsADirectoryError:
            raise TraceError(not_a_trace_file(path)) from None
        except OSError as exc:
            raise TraceError(f"{path}: cannot read ({exc.strerror})") from None
        # Another tool's session (Claude Code, Codex): converted in memory.
        from regista.importers import convert_file

        conv = convert_file(path, data)
        if conv is not None:
            return cls.from_bytes(conv.main.to_bytes(), path, messages=messages)
        return cls.from_bytes(data, path, messages=messages)

    @classmethod
    def from_bytes(
        cls, data: bytes, path: Path | str = "<memory>", *, messages: bool = True
    ) -> Trace:
        path = Path(path)
        lines = data.split(b"\n")
        if lines and lines[-1] == b"":
            lines.pop()
        unterminated = bool(data) and not data.endswith(b"\n")
        with paused_gc():  # the events make no garbage; collecting while they pile up is waste
            events, truncated = _parse_lines(lines, path, unterminated, messages)
        return cls._checked(events, path, truncated)

    @classmethod
    def _checked(cls, events: list[Any], path: Path, truncated: bool) -> Trace:
        """The trace of ``events`` once they are known to be one whole session."""
        if not events:
            raise TraceError(f"{path}: empty trace (no events)")
        if not isinstance(events[0], SessionStart):
            raise TraceFormatError(path, 1, "a trace must begin with a session.start event")
        sid = events[0].session_id
        if len(set(map(_SESSION_ID, events))) > 1:
            for i, ev in enumerate(events):
                if ev.session_id != sid:
                    raise TraceFormatError(path, i + 1, "a trace holds exactly one session")
        return cls(events, path, truncated=truncated)

    # -- basic views ---------------------------------------------------------------------

    @property
    def session_id(self) -> str:
        return str(self.start.session_id)

    @property
    def start(self) -> SessionStart:
        ev = self.events[0]
        assert isinstance(ev, SessionStart)
        return ev

    @property
    def end(self) -> SessionEnd | None:
        """The ``session.end`` event, or ``None`` for a session that did not finish."""
        ev = self.events[-1]
        return ev if isinstance(ev, SessionEnd) else None

    @property
    def complete(self) -> bool:
        return self.end is not None

    def of_type(self, cls: type[Any]) -> list[Any]:
        return [ev for ev in self.events if isinstance(ev, cls)]

    # -- the public views ----------------------------------------------------------------

    @cached_property
    def _request_events(self) -> list[LlmRequestEvent]:
        return [ev for ev in self.events if isinstance(ev, LlmRequestEvent)]

    @cached_property
    def _request_pos(self) -> dict[int, int]:
        return {ev.seq: i for i, ev in enumerate(self._request_events)}

    def iter_requests(self) -> Iterator[tuple[LlmRequestEvent, LlmRequest]]:
        """Every ``llm.request`` event with its full rebuilt request, in order (one pass)."""
        prev: list[dict[str, Any]] = []
        for ev in self._request_events:
            messages = prev[: ev.messages_prefix] + ev.messages
            yield ev, _full_request(ev, messages)
            prev = messages

    def request_for(self, event: LlmRequestEvent) -> LlmRequest:
        """The full request that ``event`` records (rebuilt on demand, recent ones cached).

        A request stores only its new messages; the rest comes from the requests before it,
        back to the last one that started afresh (the first, or one after a compaction).
        """
        cached = self._request_cache.get(event.seq)
        if cached is not None:
            return cached
        pos = self._request_pos[event.seq]
        chain: list[LlmRequestEvent] = []
        j = pos
        while True:
            ev = self._request_events[j]
            chain.append(ev)
            if ev.messages_prefix == 0 or j == 0:
                break
            j -= 1
        messages: list[dict[str, Any]] = []
        for ev in reversed(chain):
            messages = messages[: ev.messages_prefix] + ev.messages
        request = _full_request(event, messages)
        if len(self._request_cache) >= 64:
            self._request_cache.pop(next(iter(self._request_cache)))
        self._request_cache[event.seq] = request
        return request

    def llm_calls(self) -> list[tuple[LlmRequest, LlmResponse]]:
        """(request, response) pairs of the agent's model calls, in order.

        A request whose response was never written (a crash) is left out.
        """
        responses = {ev.step: ev for ev in self.events if isinstance(ev, LlmResponseEvent)}
        out = []
        for ev, request in self.iter_requests():
            if ev.step in responses:
                resp = LlmResponse.model_validate(responses[ev.step].response)
                out.append((request, resp))
        return out

    def tool_results(self) -> dict[str, ToolResult]:
        """Recorded tool results by ``tool_use_id`` (denials included, as error results)."""
        return {ev.tool_use_id: ev for ev in self.events if isinstance(ev, ToolResult)}

    def steps(self) -> list[Step]:
        """The session's steps, numbered from 0 (see ``regista.trace.steps``)."""
        return self._steps

    def step_groups(self) -> list[Step]:
        """The steps, their events grouped, without rebuilding any full request
        (``Step.request`` is ``None``) unless :meth:`steps` already did."""
        if "_steps" in vars(self):
            return self._steps
        return build_steps(self.events)

    @cached_property
    def _steps(self) -> list[Step]:
        with paused_gc():  # tens of thousands of long-lived steps: nothing to collect
            return build_steps(self.events, self.request_for)

    def request_hashes(self) -> list[str]:
        """The chain of request hashes (model calls and compactions) in order."""
        return [
            ev.request_hash
            for ev in self.events
            if isinstance(ev, LlmRequestEvent | ContextCompaction)
        ]

    def summary(self) -> TraceSummary:
        start, end = self.start, self.end
        events = self.events
        # Each kind of event picked out, and counted, by C loops over the whole list: a
        # big trace has hundreds of thousands of events and a summary reads a few kinds.
        types = list(map(type, events))
        counts = Counter(types)

        def of(cls: type[Any]) -> list[Any]:
            if not counts[cls]:
                return []
            return list(compress(events, map(operator.is_, types, repeat(cls))))

        responses, compactions = of(LlmResponseEvent), of(ContextCompaction)
        usage = _usage_of(
            [*map(dict.get, map(_RESPONSE, responses), repeat("usage")), *map(_USAGE, compactions)]
        )
        if usage is None:  # an odd one: read as ``Usage`` reads it, in trace order
            totals = [0, 0, 0, 0]
            for ev in compress(events, map(_PRICED.__contains__, types)):
                _add_usage(
                    totals, ev.response.get("usage") if type(ev) is LlmResponseEvent else ev.usage
                )
            usage = Usage(**dict(zip(_USAGE_FIELDS, totals, strict=True)))
        if end is not None:
            cost, turns = end.cost_usd, end.turns
        else:
            turns = max(0, max(map(_TURN, responses), default=-1) + 1)
            # Added in trace order (as the run added them): float sums depend on it.
            priced = compress(events, map(_PRICED.__contains__, types))
            costs = list(map(_COST, priced if compactions else responses))
            cost = None if None in costs else reduce(operator.add, costs, 0.0)
        errors: list[ErrorEvent] = of(ErrorEvent)
        results = of(ToolResult)
        denials = list(map(_ALLOWED, of(PermissionDecision))).count(False)
        steps = self.steps()
        by_index = dict(zip(map(_INDEX, steps), steps, strict=True))
        # One failure is counted once: a step in error (a denial is counted apart), or an
        # error event outside any step. Only a step with an error event or an error result
        # can be in error.
        suspects = {ev.step for ev in errors}
        suspects.update(map(_STEP, compress(results, map(_IS_ERROR, results))))
        failed = sum(_failed(by_index[n]) for n in suspects if n in by_index)
        return TraceSummary.of(
            start,
            end,
            turns=turns,
            steps=len(steps),
            tool_calls=counts[ToolCall],
            cost_usd=cost,
            usage=usage,
            errors=failed + sum(1 for ev in errors if ev.step not in by_index),
            denials=denials,
            compactions=counts[ContextCompaction],
        )

    def __len__(self) -> int:
        return len(self.events)

    def __repr__(self) -> str:
        return f"<Trace {self.session_id} events={len(self.events)} path={self.path}>"


_USAGE_FIELDS = (
    "input_tokens",
    "output_tokens",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
)


def _failed(step: Step) -> bool:
    """``step.is_error and not step.denied``, in one look at its events."""
    result = decision = None
    error = False
    for ev in step.events:
        kind = type(ev)
        if kind is ErrorEvent:
            error = True
        elif kind is ToolResult and result is None:
            result = ev
        elif kind is PermissionDecision and decision is None:
            decision = ev
    error = error or (result is not None and result.is_error)
    return error and not (decision is not None and not decision.allowed)


def _add_usage(totals: list[int], raw: Any) -> None:
    """Add a recorded usage dict to ``totals`` (what ``Usage.__add__`` would, with no
    model made per call; an odd value is validated, and refused, as ``Usage`` would)."""
    if not raw:
        return
    values = [raw.get(f, 0) for f in _USAGE_FIELDS] if isinstance(raw, dict) else None
    if values is None or not all(type(v) is int for v in values):
        usage = Usage.model_validate(raw)
        values = [getattr(usage, f) for f in _USAGE_FIELDS]
    for i, v in enumerate(values):
        totals[i] += v


#: How much of a trace file is read at a time. The lines of one piece are freed before the
#: next is read, so the same memory serves every piece: reading the file whole and
#: splitting it costs a second copy of it and the page faults of both.
_CHUNK = 1 << 20


class _LineParser:
    """Parses the lines of one trace in order into ``events``."""

    def __init__(self, path: Path, messages: bool) -> None:
        self.path = path
        self.messages = messages
        self.events: list[Any] = []
        self.decoder = RequestDecoder()
        self.truncated = False

    def feed(self, raw: bytes, lineno: int, last: bool, unterminated: bool) -> None:
        """Parse line ``lineno``; ``last``: no line follows it; ``unterminated``: nor does
        a newline (only such a line can be half-written: the writer ends each event with
        its newline in the same write). A whole line that is corrupt is an error."""
        events = self.events
        if not raw.strip():
            if last:
                return
            raise TraceFormatError(self.path, lineno, "empty line")
        try:
            event = parse_line(raw, self.path, lineno, self.decoder, messages=self.messages)
        except TraceFormatError:
            if last and events and unterminated:
                warnings.warn(
                    f"{self.path}:{lineno}: dropped a half-written last line "
                    "(the writing process probably died mid-write)",
                    TraceWarning,
                    stacklevel=4,
                )
                self.truncated = True
                return
            raise
        if event.seq != len(events):
            raise TraceFormatError(
                self.path, lineno, f"seq {event.seq} out of order (expected {len(events)})"
            )
        events.append(event)


_PRICED = frozenset((LlmResponseEvent, ContextCompaction))
_SESSION_ID = operator.attrgetter("session_id")
_TURN = operator.attrgetter("turn")
_COST = operator.attrgetter("cost_usd")
_ALLOWED = operator.attrgetter("allowed")
_INDEX = operator.attrgetter("index")
_STEP = operator.attrgetter("step")
_IS_ERROR = operator.attrgetter("is_error")
_RESPONSE = operator.attrgetter("response")
_USAGE = operator.attrgetter("usage")


def _usage_of(raws: list[Any]) -> Usage | None:
    """Recorded usage dicts added up (what ``Usage.__add__`` would, with no model made per
    event), each count summed in C; ``None`` when one is not of the plain shape."""
    usages = list(filter(None, raws))  # an empty usage adds nothing
    if not set(map(type, usages)) <= {dict}:
        return None
    columns = [[u.get(f, 0) for u in usages] for f in _USAGE_FIELDS]
    if not all(set(map(type, column)) <= {int} for column in columns):
        return None
    return Usage(**dict(zip(_USAGE_FIELDS, map(sum, columns), strict=True)))


def _parse_lines(
    lines: list[bytes], path: Path, unterminated: bool, messages: bool = True
) -> tuple[list[Any], bool]:
    """The events of ``lines``, and whether a half-written last line was dropped."""
    parser = _LineParser(path, messages)
    last = len(lines)
    for lineno, raw in enumerate(lines, start=1):
        parser.feed(raw, lineno, lineno == last, lineno == last and unterminated)
    return parser.events, parser.truncated


def _parse_file(file: Any, head: bytes, path: Path, messages: bool) -> tuple[list[Any], bool]:
    """The events of a trace file read a piece at a time (``head``: its first piece,
    already read), and whether a half-written last line was dropped.

    Every line but the last is parsed here, in line: only the last (which may be blank,
    or half-written) goes through :meth:`_LineParser.feed`'s rules.
    """
    parser = _LineParser(path, messages)
    events = parser.events
    append = events.append
    decoder = parser.decoder if messages else None  # a listing rebuilds no request
    lineno = 0
    rest = b""  # the start of a line the next piece ends
    chunk = head or file.read(_CHUNK)
    held: bytes | None = None  # the last whole line so far: the file's last, if nothing follows
    with paused_gc():  # the events make no garbage; collecting while they pile up is waste
        while chunk:
            lines = chunk.split(b"\n")
            if rest:
                lines[0] = rest + lines[0]
            rest = lines.pop()
            if lines:
                if held is not None:
                    lines[0:0] = (held,)
                held = lines.pop()
                for raw in lines:  # none of them is the file's last line
                    lineno += 1
                    try:
                        event = parse_line(raw, path, lineno, decoder, messages=messages)
                    except TraceFormatError:
                        if not raw.strip():
                            raise TraceFormatError(path, lineno, "empty line") from None
                        raise
                    if event.seq != lineno - 1:
                        raise TraceFormatError(
                            path, lineno, f"seq {event.seq} out of order (expected {lineno - 1})"
                        )
                    append(event)
            chunk = file.read(_CHUNK)
        if held is not None:
            lineno += 1
            parser.feed(held, lineno, not rest, False)
        if rest:
            lineno += 1
            parser.feed(rest, lineno, True, True)
    return events, parser.truncated
