"""``regista diff A B``: compare two runs step by step.

Prints the first divergence on top (its steps in each run, its kind and what changed field
by field), then the two runs' steps side by side, long stretches of identical steps folded.
``--json`` prints :meth:`regista.diff.RunDiff.to_dict` instead.

Exit status, as with ``diff(1)``: 0 when the runs are the same, 1 when they differ, 2 when
a trace cannot be read.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from regista.cli.cmd_masks import add_mask_options, masks_from_args
from regista.errors import RegistaError
from regista.vocab import KIND_COLOURS

if TYPE_CHECKING:
    from rich.console import Console

    from regista.diff import DiffKind, RunDiff

EXIT_SAME = 0
EXIT_DIFFERENT = 1
EXIT_TROUBLE = 2

#: The colour of each kind (the same as in regista-tui).
STYLES = KIND_COLOURS


def register(subparsers: Any) -> None:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "diff",
        help="compare two runs step by step",
        description="Align the steps of two runs and show where and how they differ. "
        "Exit status: 0 same, 1 different, 2 trouble.",
    )
    parser.add_argument("a", metavar="A", help="the first trace (the old side)")
    parser.add_argument("b", metavar="B", help="the second trace (the new side)")
    parser.add_argument("--json", action="store_true", help="print the diff as JSON")
    parser.add_argument(
        "--context",
        type=int,
        default=2,
        metavar="N",
        help="identical steps shown around each difference (default 2)",
    )
    parser.add_argument("--all", action="store_true", help="show every step, fold nothing")
    parser.add_argument(
        "--changes",
        type=int,
        default=10,
        metavar="N",
        help="field-level changes listed for the first divergence (default 10)",
    )
    add_mask_options(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from regista.diff import diff_runs

    try:
        masks = masks_from_args(args, Path(args.a).parent)
        diff = diff_runs(args.a, args.b)
    except RegistaError as exc:
        print(f"regista: {exc}", file=sys.stderr)
        return EXIT_TROUBLE
    if args.json:
        import orjson

        from regista.diff.masks import pair_verdicts, verdict_summary

        data = diff.to_dict()
        verdicts = pair_verdicts(diff, masks)
        for pair, verdict in zip(data["pairs"], verdicts, strict=True):
            pair["verdict"] = verdict
        data["verdicts"] = verdict_summary(verdicts)
        sys.stdout.write(orjson.dumps(data, option=orjson.OPT_INDENT_2).decode() + "\n")
    else:
        from rich.console import Console

        console = Console(file=sys.stdout, highlight=False, soft_wrap=True)
        context = None if args.all else max(args.context, 0)
        print_diff(
            console,
            diff,
            args.a,
            args.b,
            context=context,
            max_changes=max(args.changes, 0),
            masks=masks,
        )
    return EXIT_SAME if diff.identical else EXIT_DIFFERENT


def _styled(kind: DiffKind, label: str) -> str:
    return f"[{STYLES[kind]}]{label}[/]"


def print_diff(
    console: Console,
    diff: RunDiff,
    a_name: str,
    b_name: str,
    *,
    context: int | None = 2,
    max_changes: int = 10,
    masks: Any = None,
) -> None:
    """Print ``diff`` for people: header, first divergence, aligned table, counts.

    With ``masks`` (a :class:`~regista.diff.masks.MaskSet`), a change that only masked
    parts explain (the date or folder a client put in its prompt) is listed as ``masked``;
    steps that differ only there are named before the first divergence that is real."""
    from rich.markup import escape
    from rich.table import Table

    from regista.diff import LABELS, step_summary

    for label, name, trace in (("A", a_name, diff.a), ("B", b_name, diff.b)):
        end = trace.end
        how = end.stop_reason if end else "unfinished"
        console.print(f"[bold]{label}[/]  {escape(name)}  [dim]{trace.session_id} · {how}[/]")
    console.print()
    first = diff.first_divergence
    if first is None:
        console.print(f"The runs are the same ({len(diff.pairs)} steps).")
        return
    changes: list[Any] = first.changes
    masked: list[str] = []
    only_masked: list[int] = []
    if masks:
        from regista.diff.masks import split_changes
        from regista.diff.runs import Divergence

        for i in diff.differences:
            real, lines = split_changes(diff.pairs[i].changes, masks)
            if not real:
                only_masked.append(i)
                masked = masked or lines
                continue
            first, changes, masked = Divergence(i, diff.pairs[i]), real, lines
            break
        else:
            changes = []
    if only_masked:
        steps = ", ".join(str(diff.pairs[i].a_step) for i in only_masked[:10])
        etc = " …" if len(only_masked) > 10 else ""
        console.print(f"Steps that differ only in masked parts (see regista masks): {steps}{etc}")
    if changes or not only_masked:
        console.print(
            f"[bold]First divergence:[/] {escape(fit(first.describe('A', 'B')))}",
            style=STYLES[first.kind],
        )
    for change in changes[:max_changes]:
        console.print("  " + escape(fit(change.describe("A", "B"))))
    for line in masked[:max_changes]:
        console.print("  " + escape(fit(line)))
    if len(changes) > max_changes:
        more = len(changes) - max_changes
        console.print(f"  … and {more} more difference{'s' if more > 1 else ''}")
    console.print()

    table = Table(show_edge=False, pad_edge=False, expand=True)
    table.add_column("A", justify="right", style="bold", no_wrap=True, min_width=3)
    table.add_column("run A", no_wrap=True, overflow="ellipsis", ratio=1)
    table.add_column("", no_wrap=True, min_width=len("changed · decision"))
    table.add_column("B", justify="right", style="bold", no_wrap=True, min_width=3)
    table.add_column("run B", no_wrap=True, overflow="ellipsis", ratio=1)
    from regista.diff.masks import MASKED, pair_verdicts, verdict_counts

    verdicts = pair_verdicts(diff, masks)
    for what, n in fold(len(diff.pairs), diff.differences, context):
        if what == "fold":
            table.add_row("", f"[dim]… {n} same step{'s' if n > 1 else ''} …[/]", "", "", "")
            continue
        pair = diff.pairs[n]
        table.add_row(
            "" if pair.a is None else str(pair.a.index),
            "" if pair.a is None else escape(fit(step_summary(pair.a))),
            "[dim]masked[/]" if verdicts[n] == MASKED else _styled(pair.kind, pair.label),
            "" if pair.b is None else str(pair.b.index),
            "" if pair.b is None else escape(fit(step_summary(pair.b))),
        )
    console.print(table)
    console.print()
    counts = ", ".join(_styled(kind, f"{n} {LABELS[kind]}") for kind, n in diff.counts.items() if n)
    line = f"{len(diff.differences)} of {len(diff.pairs)} steps differ: {counts}"
    if only_masked and len(only_masked) == len(diff.differences):
        line += " (only in masked parts)"
    elif only_masked:
        line += f" ({len(only_masked)} before the first divergence only in masked parts)"
    console.print(line)
    if masks:
        console.print(f"Verdicts: {verdict_counts(verdicts)}")


#: The most characters of one value the table or a change line shows (a terminal line).
FIT = 400


def fit(text: str, limit: int = FIT) -> str:
    """``text`` cut to ``limit`` characters, saying how long it was: laying out a huge value
    (a 5 MB tool name) for the terminal would cost far more than comparing it."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text):,} characters)"


def fold(total: int, differences: list[int], context: int | None) -> list[tuple[str, int]]:
    """The rows to show: ``("pair", i)`` for pair ``i``, ``("fold", n)`` for ``n`` identical
    pairs left out. Pairs within ``context`` of a difference are shown; ``None`` shows all.
    """
    if context is None:
        return [("pair", i) for i in range(total)]
    shown: set[int] = set()
    for d in differences:
        shown.update(range(max(0, d - context), min(total, d + context + 1)))
    rows: list[tuple[str, int]] = []
    hidden = 0
    for i in range(total):
        if i in shown:
            if hidden:
                rows.append(("fold", hidden))
                hidden = 0
            rows.append(("pair", i))
        else:
            hidden += 1
    if hidden:
        rows.append(("fold", hidden))
    return rows
