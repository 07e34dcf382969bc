"""One-line summaries of steps for the timeline, made from a decoded step."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the event models load after the first screen (a cold start)
    from regista.engine import Step

__all__ = ["Row", "gist_of", "row_of"]


def gist_of(step: Step) -> str:
    """The one-line gist of ``step`` (what ``regista show`` says of it)."""
    from regista.engine import step_line

    return step_line(step)


@dataclass(frozen=True)
class Row:
    """What a timeline row shows for one step."""

    number: int
    kind: str
    title: str
    gist: str
    tokens: int | None
    """Every token of the step (:attr:`regista.tokens.Tokens.total`: cache included)."""
    duration_ms: float | None
    error: bool
    denied: bool
    source: str
    complete: bool
    cost: float | None = None
    """What the step's model answers cost (``None``: unknown; a tool step costs nothing)."""


def row_of(step: Step, model_label: str | None = None) -> Row:
    """The timeline row of ``step``; ``model_label`` replaces the model name (``scripted``)."""
    from regista.engine import step_ms, tokens_and_cost, tokens_of

    tokens: int | None = None
    # how long it took, as every view says (a denied call never ran: it shows none)
    duration = None if step.denied else step_ms(step)
    if step.kind == "model":
        ev = step.response_event
        if ev is not None:
            tokens = tokens_of(ev.response.get("usage")).total  # cache included
    elif step.kind == "compaction":
        comp = step.compaction
        if comp is not None:
            tokens = tokens_of(comp.usage).total
    title = step.title
    if step.kind == "model" and model_label:
        title = model_label
    try:
        gist = gist_of(step)
    except Exception as exc:  # a malformed but valid-looking step must not break the list
        gist = f"(cannot summarise: {exc})"
    return Row(
        number=step.index,
        kind=step.kind,
        title=title,
        gist=gist,
        tokens=tokens,
        duration_ms=duration,
        error=step.is_error,
        denied=step.denied,
        source=step.source,
        complete=step.complete,
        cost=tokens_and_cost(step.events)[1],
    )
