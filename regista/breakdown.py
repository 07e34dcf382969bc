"""Where the time and the money went: a run's tokens, cost and time per group of steps.

``regista show TRACE --by tool|model|turn|subagent`` prints it, the share page and the
debugger show the same table. A step's numbers are defined once
(:func:`step_numbers`): its tokens and cost are those of the model answers and compactions
it holds (an unknown price stays unknown), its time the span the export gives it
(:func:`~regista.trace.otel_spans.step_span`).

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
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from regista.pricing import add_costs
from regista.tokens import Tokens, tokens_of

__all__ = [
    "BY",
    "Group",
    "StepNumbers",
    "breakdown",
    "step_numbers",
    "subagent_of",
    "tokens_and_cost",
]

#: What a breakdown can group by.
BY = ("tool", "model", "turn", "subagent")


@dataclass(frozen=True, slots=True)
class StepNumbers:
    """What one step took.

    Attributes:
        tokens: The tokens of its model answers and compactions.
        cost: Their cost in US dollars (``None``: a price is unknown).
        span: When it started and ended, in nanoseconds since the epoch (``None``: its
            times are not times).
    """

    tokens: Tokens
    cost: float | None
    span: tuple[int, int] | None

    @property
    def ms(self) -> float | None:
        """How long it took, in milliseconds."""
        return None if self.span is None else (self.span[1] - self.span[0]) / 1e6


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
    from regista.errors import RegistaError
    from regista.trace.otel_spans import step_span, ts_ns

    tokens, cost = tokens_and_cost(step.events)
    span: tuple[int, int] | None
    try:
        span = step_span(step, ts_ns)
    except RegistaError:
        span = None
    return StepNumbers(tokens, cost, span)


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
    return StepNumbers(tokens, total, (0, int(ms * 1e6)))
