"""``regista show TRACE --by tool|model|turn|subagent``: where the time and the money went."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from regista.breakdown import Group, StepNumbers, breakdown, step_numbers
from regista.pricing import add_costs
from regista.subagents import find_run, subagent_link
from regista.tokens import Tokens, compact_count
from regista.vocab import cost_amount

__all__ = ["run_by", "subagent_of"]


def subagent_of(beside: Path | None) -> Any:
    """For ``--by subagent``: a step's subagent (its description, and its run's numbers when
    the run is beside the trace), or ``None``."""
    from regista.errors import RegistaError
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


def _share(part: float | None, whole: float | None) -> str:
    if part is None or not whole:
        return ""
    return f"{100 * part / whole:.0f}%"


def run_by(args: argparse.Namespace) -> int:
    from regista.trace.reader import Trace

    trace = Trace.load(args.trace)
    steps = trace.steps()
    groups = breakdown(
        steps, args.by, subagent=subagent_of(trace.path) if args.by == "subagent" else None
    )
    total = Group("(run)")
    for g in groups:
        total.add(StepNumbers(g.tokens, g.cost, (0, int(g.ms * 1e6))), steps=g.steps)
    if getattr(args, "json", False):
        print(
            json.dumps(
                {"by": args.by, "groups": [g.as_dict() for g in groups], "total": total.as_dict()},
                indent=2,
            )
        )
        return 0
    from rich.console import Console
    from rich.table import Table

    console = Console(highlight=False)
    table = Table(box=None, pad_edge=False, header_style="bold")
    table.add_column(args.by.upper(), overflow="ellipsis", no_wrap=True, max_width=28)
    for name in ("STEPS", "IN", "OUT", "C.READ", "C.WRITE", "COST", "%", "TIME", "%"):
        table.add_column(name, justify="right", no_wrap=True)
    for g in [*groups, total]:
        t = g.tokens
        last = g is total
        table.add_row(
            g.key,
            f"{g.steps:,}",
            compact_count(t.input),
            compact_count(t.output),
            compact_count(t.cache_read),
            compact_count(t.cache_write),
            cost_amount(g.cost),
            "" if last else _share(g.cost, total.cost),
            f"{g.ms / 1000:.2f} s",
            "" if last else _share(g.ms, total.ms),
            style="bold" if last else None,
        )
    console.print(table)
    console.print(
        "[dim]tokens: IN and OUT, C.READ cache reads, C.WRITE cache writes (5 minutes and 1 "
        "hour); % is the share of the run's cost and time[/]"
    )
    return 0
