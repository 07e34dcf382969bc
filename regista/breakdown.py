"""Where the time and the money went: a run's tokens, cost and time per group of steps.

``regista show TRACE --by tool|model|turn|subagent`` prints it, the share page and the
debugger show the same table. A step's numbers are defined once
(:func:`step_numbers`): its tokens and cost are those of the model answers and compactions
it holds (an unknown price stays unknown), its time :func:`took_ms`, the one definition of
how long a step (and a run) took that every view gives, and its place in time
(:func:`step_time`, :func:`run_span`), which the export's spans and the waterfalls draw.

How steps are grouped:

- ``tool``: a tool step goes to its tool; a model call goes to the first tool it asked for
  (its tokens bought that call), a model call that asked for none to ``(answer)``;
  compactions to ``(compaction)``. So the row of ``search_orders`` says what the searches
  cost in all: their own time, and the calls that decided on them.
- ``model``: a model call and a compaction go to the model that answered (``scripted`` for
  an offline model); a tool step to ``(tools)``.
- ``turn``: every step goes to the turn it belongs to (what the person typed).
- ``subagent``: a step that started a subagent (a Claude Code ``Task`` call) goes to that
  subagent; every other step to ``(main)``. The subagent's own run, when it is found
  beside the trace, is added to its row.

The groups add up to the run: their tokens and cost are the run's (a property test keeps
it so).
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from regista.pricing import add_costs
from regista.tokens import Tokens, tokens_of

__all__ = [
    "BY",
    "Group",
    "StepNumbers",
    "breakdown",
    "ns_of",
    "run_facts",
    "run_ms",
    "run_span",
    "step_ms",
    "step_numbers",
    "step_time",
    "subagent_of",
    "tokens_and_cost",
    "took_ms",
]

#: What a breakdown can group by.
BY = ("tool", "model", "turn", "subagent")


@dataclass(frozen=True, slots=True)
class StepNumbers:
    """What one step took.

    Attributes:
        tokens: The tokens of its model answers and compactions.
        cost: Their cost in US dollars (``None``: a price is unknown).
        ms: How long it took, in milliseconds (:func:`took_ms`; ``None``: its times are
            not times).
        span: When it started and ended, in nanoseconds since the epoch
            (:func:`step_time`; ``None``: its times are not times).
    """

    tokens: Tokens
    cost: float | None
    ms: float | None
    span: tuple[int, int] | None = None


# -- time --------------------------------------------------------------------------------

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def ns_of(ts: Any) -> int | None:
    """A recorded time (an event's ``ts``, ISO 8601; without a zone, UTC) in nanoseconds
    since the epoch, or ``None`` when it is not a time."""
    try:
        dt = datetime.fromisoformat(str(ts).replace("Z", "+00:00"))
    except ValueError:
        return None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return (dt - _EPOCH) // timedelta(microseconds=1) * 1000


def took_ms(first: Any, closing: Any, last: Any, *, ran: bool = True) -> float | None:
    """How long a step or a run took, in milliseconds: the one definition every view gives
    (``show``, ``show --json``, ``--by``, the debugger, share, MCP, ``/v1/runs``, the
    export's spans). See docs/readers.md, "How long a step took".

    - A step that ran nothing (``ran`` false: a denied tool call) took 0.
    - Else what its closing event recorded (``duration_ms`` of the model's answer, the
      tool's result, the compaction, the run's ``session.end``), where that is a positive
      number: the writer measured the call itself (a proxy writes a call's request and
      answer at one time, when the answer has come; a human's approval before a tool ran
      is not the tool's time).
    - Else the time from its first event to its closing one (to its last, when it has no
      closing event: cut short), from their recorded times: an importer's or an older
      writer's steps, which recorded no duration (0, the field's default: no call measured
      takes 0.000 ms).
    - ``None``: those times are not times.

    To the µs (3 decimals), so that every view gives the same number.

    Args:
        first: The step's first event (the run's ``session.start``).
        closing: Its closing event, or ``None`` (cut short).
        last: Its last event.
    """
    if not ran:
        return 0.0
    if closing is not None:
        ms: Any = getattr(closing, "duration_ms", None)
        if type(ms) in (float, int) and 0 < ms < math.inf:
            return round(float(ms), 3)
    a, b = ns_of(first.ts), ns_of((closing if closing is not None else last).ts)
    if a is None or b is None:
        return None
    return round(max(b - a, 0) / 1e6, 3)


def _placed(end_event: Any, ms: float | None) -> tuple[int, int] | None:
    """Where a step stands in time, in nanoseconds since the epoch (``None``: its times are
    not times): it ends at ``end_event`` (its closing event, its last when cut short),
    written when what it measured had ended, and starts ``ms`` (:func:`took_ms`) before,
    never before the epoch. Where no duration was recorded, that is its first event."""
    end = ns_of(end_event.ts)
    if end is None or ms is None:
        return None
    return max(0, end - round(ms * 1e6)), end


def _step_events(step: Any) -> tuple[Any, Any, Any, bool]:
    """A :class:`~regista.trace.steps.Step`'s first, closing and last events, and whether
    it ran (a denied tool call did not)."""
    if step.kind == "tool":
        return step.events[0], step.result, step.events[-1], not step.denied
    closing = step.response_event if step.kind == "model" else step.compaction
    return step.events[0], closing, step.events[-1], True


def step_ms(step: Any) -> float | None:
    """How long a :class:`~regista.trace.steps.Step` took (:func:`took_ms`)."""
    first, closing, last, ran = _step_events(step)
    return took_ms(first, closing, last, ran=ran)


def step_time(step: Any) -> tuple[float | None, tuple[int, int] | None]:
    """How long a :class:`~regista.trace.steps.Step` took (:func:`took_ms`) and when, in
    nanoseconds since the epoch: the one place in time the export's spans and the
    waterfalls draw (it ends at its closing event, its last when cut short, and starts as
    long before as it took)."""
    first, closing, last, ran = _step_events(step)
    ms = took_ms(first, closing, last, ran=ran)
    return ms, _placed(closing if closing is not None else last, ms)


def run_span(trace: Any, spans: Iterable[tuple[int, int] | None] = ()) -> tuple[int, int] | None:
    """When a run started and ended, in nanoseconds since the epoch (``None``: its times
    are not times): it lasts :func:`took_ms` of its ``session.start``, ``session.end`` and
    last event, from the earliest of its first event and its steps' starts (``spans``: a
    proxy writes ``session.start`` when the first call's answer has come)."""
    events = trace.events
    ms = took_ms(events[0], trace.end, events[-1])
    start = ns_of(events[0].ts)
    if ms is None or start is None:
        return None
    start = min([start, *(s[0] for s in spans if s is not None)])
    return start, start + round(ms * 1e6)


def run_ms(trace: Any) -> float | None:
    """How long a run (a :class:`~regista.trace.reader.Trace` or a listing) took:
    :func:`took_ms` of its ``session.start``, ``session.end`` and last event."""
    events = trace.events
    return took_ms(events[0], trace.end, events[-1])


def run_facts(trace: Any, s: Any) -> dict[str, Any]:
    """A run's facts as the JSON views give them (``show --json``, ``/v1/runs``, MCP, the
    share page): ``trace`` a :class:`~regista.trace.reader.Trace` (or a listing of one),
    ``s`` its summary. Each view adds its own."""
    from regista.trace.reader import cost_and_tokens

    return {
        "session_id": s.session_id,
        "task": s.task,
        "model": s.model,
        "provider": s.provider,
        "outcome": s.stop_reason or "unfinished",
        "status": s.status,
        "steps": s.steps,
        "turns": s.turns,
        "tool_calls": s.tool_calls,
        "errors": s.errors,
        "denials": s.denials,
        "compactions": s.compactions,
        **cost_and_tokens(s),
        "duration_ms": run_ms(trace),
        "output": s.output,
        "replay_of": s.replay_of,
        "forked_from": s.forked_from,
    }


def tokens_and_cost(events: Iterable[Any]) -> tuple[Tokens, float | None]:
    """What a step's events took: the tokens and cost of its model answers and compactions
    (events of the models, or a listing's light ones: read by their ``type``)."""
    tokens = Tokens()
    cost: float | None = 0.0
    for ev in events:
        what = getattr(ev, "type", None)
        if what == "llm.response":
            usage = ev.response.get("usage")
        elif what == "context.compaction":
            usage = ev.usage
        else:
            continue
        cost = add_costs(cost, ev.cost_usd)
        with contextlib.suppress(ValueError):  # an odd usage counts none
            tokens = tokens + tokens_of(usage)
    return tokens, cost


def step_numbers(step: Any) -> StepNumbers:
    """The tokens, cost and time of one :class:`~regista.trace.steps.Step`."""
    tokens, cost = tokens_and_cost(step.events)
    return StepNumbers(tokens, cost, *step_time(step))


@dataclass
class Group:
    """The steps of one group and what they took in all."""

    key: str
    steps: int = 0
    tokens: Tokens = field(default_factory=Tokens)
    cost: float | None = 0.0
    ms: float = 0.0

    def add(self, numbers: StepNumbers, steps: int = 1) -> None:
        self.steps += steps
        self.tokens = self.tokens + numbers.tokens
        self.cost = add_costs(self.cost, numbers.cost)
        self.ms += numbers.ms or 0.0

    def as_dict(self) -> dict[str, Any]:
        from regista.pricing import round_cost

        return {
            "key": self.key,
            "steps": self.steps,
            "tokens": self.tokens.as_dict(),
            "cost_usd": round_cost(self.cost),
            "ms": round(self.ms, 3),
        }


def _tool_key(step: Any) -> str:
    if step.kind == "tool":
        call = step.tool_call
        return str(call.name) if call is not None else "?"
    if step.kind == "compaction":
        return "(compaction)"
    resp = step.response_event
    content = resp.response.get("content") if resp is not None else None
    for block in content if isinstance(content, list) else ():
        if isinstance(block, dict) and block.get("type") == "tool_use":
            return str(block.get("name") or "?")
    return "(answer)"


def _model_key(step: Any) -> str:
    return "(tools)" if step.kind == "tool" else str(step.title)


def _turn_key(step: Any) -> str:
    return f"turn {step.turn}"


def breakdown(
    steps: Iterable[Any],
    by: str,
    *,
    subagent: Callable[[Any], tuple[str, Any] | None] | None = None,
) -> list[Group]:
    """The groups of ``steps`` by ``by`` (one of :data:`BY`), the costliest first (then
    the longest).

    Args:
        subagent: For ``by="subagent"``: a step's subagent, as ``(name, its run's numbers
            or None)``, or ``None`` for a step that started none.
    """
    if by not in BY:
        raise ValueError(f"by {by!r}: one of {', '.join(BY)}")
    groups: dict[str, Group] = {}
    for step in steps:
        numbers = step_numbers(step)
        extra: StepNumbers | None = None
        if by == "tool":
            key = _tool_key(step)
        elif by == "model":
            key = _model_key(step)
        elif by == "turn":
            key = _turn_key(step)
        else:
            found = subagent(step) if subagent is not None else None
            key, extra = found if found is not None else ("(main)", None)
        group = groups.get(key)
        if group is None:
            group = groups[key] = Group(key)
        group.add(numbers)
        if extra is not None:
            group.add(extra, steps=0)
    order = list(groups.values())
    if by == "turn":
        order.sort(key=lambda g: int(g.key.split()[1]))
    else:
        order.sort(key=lambda g: (-(g.cost or 0.0), -g.ms, g.key))
    return order


def subagent_of(beside: Path | None) -> Any:
    """For ``--by subagent``: a step's subagent (its description, and its run's numbers when
    the run is beside the trace), or ``None``."""
    from regista.errors import RegistaError
    from regista.subagents import find_run, subagent_link
    from regista.trace.reader import Trace

    def of(step: Any) -> tuple[str, StepNumbers | None] | None:
        link = subagent_link(step)
        if link is None:
            return None
        sid = link["session_id"]
        call = step.tool_call
        said = (
            call.input.get("description")
            if call is not None and isinstance(call.input, dict)
            else None
        )
        name = str(said or link.get("agent_id") or sid)
        run = None
        path = find_run(sid, beside) if beside is not None else None
        if path is not None:
            try:
                run = _run_numbers(Trace.load(path).steps())
            except RegistaError:
                run = None
        return f"subagent {name}", run

    return of


def _run_numbers(steps: list[Any]) -> StepNumbers:
    tokens, cost, ms = Tokens(), 0.0, 0.0
    total: float | None = cost
    for step in steps:
        n = step_numbers(step)
        tokens = tokens + n.tokens
        total = add_costs(total, n.cost)
        ms += n.ms or 0.0
    return StepNumbers(tokens, total, ms)
