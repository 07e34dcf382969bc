"""``regista show TRACE --by tool|model|turn|subagent``: where the time and the money went."""

from __future__ import annotations

import argparse
import json
from typing import Any

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
    print_groups(args.by, groups, "(run)", "STEPS", json_out=getattr(args, "json", False))
    return 0


def print_groups(
    by: str,
    groups: list[Group],
    total_name: str,
    count: str,
    *,
    json_out: bool = False,
    whole: str = "run's",
) -> None:
    """The breakdown table (or its JSON): one row per group, then their total, with each
    group's share of the total's cost and time; ``count`` heads the column of how many
    steps (or runs) each holds."""
    total = Group(total_name)
    for g in groups:
        total.add(StepNumbers(g.tokens, g.cost, g.ms), steps=g.steps)
    if json_out:
        counted = count.lower()

        def as_dict(g: Group) -> dict[str, Any]:
            d = g.as_dict()
            d[counted] = d.pop("steps")
            return d

        print(
            json.dumps(
                {"by": by, "groups": [as_dict(g) for g in groups], "total": as_dict(total)},
                indent=2,
            )
        )
        return
    from rich.console import Console
    from rich.table import Table

    console = Console(highlight=False)
    table = Table(box=None, pad_edge=False, header_style="bold")
    table.add_column(by.upper(), overflow="ellipsis", no_wrap=True, max_width=28, ratio=1)
    for name in (count, "IN", "OUT", "C.READ", "C.WRITE", "COST", "%", "TIME", "%"):
        # the figures keep their width; a long group name is what gets cut
        table.add_column(name, justify="right", no_wrap=True, min_width=len(name))
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
        f"hour); % is the share of the {whole} cost and time[/]"
    )
