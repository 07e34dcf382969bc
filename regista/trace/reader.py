"""Reading traces: ``Trace.load(path)`` and the views built on it.

A half-written last line (a crash mid-write) is dropped with a :class:`TraceWarning`;
a corrupt line anywhere else raises :class:`TraceFormatError` naming file and line; a
trace newer than :data:`SCHEMA_VERSION` raises :class:`UnsupportedSchemaVersion`.
"""

from __future__ import annotations

import operator
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cached_property
from itertools import compress, repeat
from pathlib import Path
from typing import Any

from regista._gc import paused_gc
from regista.tokens import Tokens
from regista.trace.events import (
    ContextCompaction,
    ErrorEvent,
    LlmRequestEvent,
    LlmResponseEvent,
    SessionEnd,
    SessionStart,
    ToolResult,
)
from regista.trace.grouping import COUNTS, PRICED, TALLIES, run_counts
from regista.trace.lines import (
    checked_events,
    parse_line,
    parse_lines,
    read_events,
)
from regista.trace.names import CONTEXT_COMPACTION, ERROR, LLM_RESPONSE, TOOL_RESULT
from regista.trace.steps import Step, build_steps
from regista.types import LlmRequest, LlmResponse, Usage
from regista.vocab import RunOutcome, end_outcome

__all__ = [
    "Trace",
    "TraceSummary",
    "parse_line",
]


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
    tokens: Tokens = field(default_factory=Tokens)
    """Every token of the run (:mod:`regista.tokens`): ``usage`` with the cache split."""
    status: RunOutcome = "in_progress"
    """How the run ended (:func:`regista.vocab.run_outcome`)."""

    @property
    def cost_basis(self) -> str:
        """How :attr:`cost_usd` was made (see :func:`regista.pricing.cost_basis`)."""
        from regista.pricing import run_cost_basis

        return run_cost_basis(self.cost_usd, self.model)

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
            status=end_outcome(end),
            **counts,
        )


def cost_and_tokens(s: Any) -> dict[str, Any]:
    """A run's cost with its basis and its tokens, as every JSON view gives them (``show
    --json``, MCP, share, ``runs --json``): ``cost_usd`` rounded to the millionth (``None``:
    unknown), ``cost_basis`` and ``tokens`` (see :class:`~regista.tokens.Tokens`).

    ``s`` is a :class:`TraceSummary` or anything with ``cost_usd``, ``cost_basis`` and
    ``tokens``."""
    from regista.pricing import round_cost

    return {
        "cost_usd": round_cost(s.cost_usd),
        "cost_basis": s.cost_basis,
        "tokens": s.tokens.as_dict(),
    }


class Trace:
    """A loaded trace: its events in ``seq`` order and the views people use.

    Build with :meth:`load`; the constructor takes already-validated events.
    """

    def __init__(self, events: list[Any], path: Path | None = None, *, truncated: bool = False):
        self.events = events
        self.path = path
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
        events, truncated = read_events(path, messages=messages)
        return cls(events, Path(path), truncated=truncated)

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
            events, truncated = parse_lines(lines, path, unterminated, messages)
        return cls(checked_events(events, path), path, truncated=truncated)

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
    def _requests(self) -> _Requests:
        return _Requests(self.events)

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
        return self._requests.request_for(event)

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
            # The steps rebuild requests through what the trace holds, not through the
            # trace: they make no reference cycle with it, so a trace dropped is freed at
            # once (a cycle leaves its million objects to a full collection: seconds).
            return build_steps(self.events, self._requests.request_for)

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
        # Each type of event picked out, and counted, by C loops over the whole list: a
        # big trace has hundreds of thousands of events and a summary reads a few types.
        # (By class, compared by identity: each type has its own.)
        types = list(map(type, events))
        counts = Counter(types)
        class_of = {_type_of(cls): cls for cls in counts}

        def of(name: str) -> list[Any]:
            cls = class_of.get(name)
            if cls is None:
                return []
            return list(compress(events, map(operator.is_, types, repeat(cls))))

        steps = self.steps()
        by_index = dict(zip(map(_INDEX, steps), steps, strict=True))
        # The run's tallies, by the core's rule for each type (regista.trace.grouping).
        tallies = [0] * TALLIES
        for name, (tally, read, loose) in COUNTS.items():
            if read is None and not loose:
                cls = class_of.get(name)
                tallies[tally] += 0 if cls is None else counts[cls]
                continue
            picked = of(name)
            if read is not None:
                says = map(operator.attrgetter(read), picked)
                picked = list(compress(picked, map(operator.is_not, says, repeat(True))))
            if loose:
                picked = [ev for ev in picked if _loose(ev, by_index)]
            tallies[tally] += len(picked)
        responses, compactions = of(LLM_RESPONSE), of(CONTEXT_COMPACTION)
        turn, costs = -1, []
        if end is None:  # else its session.end says its turns and cost
            turn = max(map(_TURN, responses), default=-1)
            # Added in trace order (as the run added them): float sums depend on it.
            priced = {class_of[name] for name in PRICED if name in class_of}
            costs = list(map(_COST, compress(events, map(priced.__contains__, types))))
        # Only a step with an error event or an error result can be in error.
        suspects = set(map(_STEP, of(ERROR)))
        results = of(TOOL_RESULT)
        suspects.update(map(_STEP, compress(results, map(_IS_ERROR, results))))
        facts = run_counts(
            tallies,
            len(steps),
            Counter(by_index[n].flags for n in suspects if n in by_index),
            end,
            turn,
            costs,
            [*map(dict.get, map(_RESPONSE, responses), repeat("usage")), *map(_USAGE, compactions)],
        )
        return TraceSummary.of(start, end, usage=facts["tokens"].as_usage(), **facts)

    def __len__(self) -> int:
        return len(self.events)

    def __repr__(self) -> str:
        return f"<Trace {self.session_id} events={len(self.events)} path={self.path}>"


class _Requests:
    """Rebuilds the full requests of the ``llm.request`` events among ``events`` (a trace's,
    in order); holds no reference to the trace (see ``Trace._steps``). The requests are
    picked out when the first is rebuilt: a trace whose requests are never rebuilt (a
    listing of its steps, a summary) never pays for it."""

    __slots__ = ("all", "cache", "events", "pos")

    def __init__(self, events: list[Any]) -> None:
        self.all = events
        self.events: list[LlmRequestEvent] = []
        self.pos: dict[int, int] | None = None
        self.cache: dict[int, LlmRequest] = {}

    def request_for(self, event: LlmRequestEvent) -> LlmRequest:
        """See :meth:`Trace.request_for`."""
        cached = self.cache.get(event.seq)
        if cached is not None:
            return cached
        if self.pos is None:
            self.events = [ev for ev in self.all if isinstance(ev, LlmRequestEvent)]
            self.pos = {ev.seq: i for i, ev in enumerate(self.events)}
        pos = self.pos[event.seq]
        chain: list[LlmRequestEvent] = []
        j = pos
        while True:
            ev = self.events[j]
            chain.append(ev)
            if ev.messages_prefix == 0 or j == 0:
                break
            j -= 1
        messages: list[dict[str, Any]] = []
        for ev in reversed(chain):
            messages = messages[: ev.messages_prefix] + ev.messages
        request = _full_request(event, messages)
        if len(self.cache) >= 64:
            self.cache.pop(next(iter(self.cache)))
        self.cache[event.seq] = request
        return request


def _loose(error: ErrorEvent, steps: dict[int, Step]) -> bool:
    """An error event of no step (no number, a number no opener began, or met before its
    step's opener): an error of the run (``regista.trace.grouping``)."""
    step = steps.get(error.step) if error.step is not None else None
    return step is None or all(ev is not error for ev in step.events)


def _type_of(cls: Any) -> str:
    """The type an event class's events say (``"tool.call"`` of ``ToolCall``)."""
    return str(cls.model_fields["type"].default)


_TURN = operator.attrgetter("turn")
_COST = operator.attrgetter("cost_usd")
_INDEX = operator.attrgetter("index")
_STEP = operator.attrgetter("step")
_IS_ERROR = operator.attrgetter("is_error")
_RESPONSE = operator.attrgetter("response")
_USAGE = operator.attrgetter("usage")
