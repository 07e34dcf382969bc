"""``regista show TRACE --by tool|model|turn|subagent``: where the time and the money went."""

from __future__ import annotations

import argparse
import json

from regista.breakdown import Group, StepNumbers, breakdown, subagent_of
from regista.tokens import compact_count
from regista.vocab import cost_amount

__all__ = ["run_by"]


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
