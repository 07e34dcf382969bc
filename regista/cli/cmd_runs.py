"""``regista runs [DIR]``: every run of a traces folder, newest first, with its links."""

from __future__ import annotations

import argparse
import shutil
import sys
from typing import Any

import orjson

from regista.errors import UserError
from regista.store.runs import RunInfo, filter_runs, list_runs, parse_since, under_parents
from regista.vocab import cost_amount, outcome_text


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "runs",
        help="list the runs of a traces folder, newest first",
        description="Every run in DIR (default .regista/traces, .regista/imports and the "
        "forks of the sweeps in .regista/sweeps): id, when, outcome, steps, cost, task, and "
        "how it is linked to others (replay of, resumed from, fork of at step N, with the "
        "parent's outcome and cost). A run's forks, replays and resumes are listed right "
        "under it; the newest family first.",
    )
    p.add_argument("dir", nargs="?", help="the traces folder (default .regista/traces)")
    p.add_argument(
        "--library",
        action="store_true",
        help="list the library that regista watch keeps (the default when there is no "
        ".regista/ folder here)",
    )
    p.add_argument("--json", action="store_true", help="one JSON array, for scripts")
    p.add_argument("--failed", action="store_true", help="only runs that did not end well")
    p.add_argument("--task", metavar="WORDS", help="only runs whose task has all these words")
    p.add_argument("--forks-of", metavar="ID", help="a run and its forks (an id or its start)")
    p.add_argument("--since", metavar="WHEN", help="only runs started since (2h, 3d, 2026-07-02)")
    p.add_argument(
        "--by",
        choices=["project", "day", "model"],
        help="where the time and the money went: tokens (cache split), cost and time of the "
        "runs listed, per project (where each was launched), day or model",
    )
    p.set_defaults(func=run)


def _when(ts: str) -> str:
    return ts[:16].replace("T", " ") if ts else "?"


def _cut(text: str, width: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: max(0, width - 1)] + "…"


def outcome_cell(r: RunInfo) -> str:
    """How a run ended in the table: its stop reason when it is a telling one, else the
    outcome's words (an imported transcript "ended without a stop reason", a run without
    its end is "in progress"), as every view says it (:func:`regista.vocab.outcome_text`)."""
    return outcome_text(r.outcome if r.complete else None, r.status)


def run_lines(runs: list[RunInfo], width: int) -> list[str]:
    """The table ``regista runs`` prints: one row per run, links on a line under it."""
    outcomes = [outcome_cell(r) for r in runs]
    wide = max([10, *map(len, outcomes)])
    head = f"{'ID':<26}  {'STARTED':<16}  {'OUTCOME':<{wide}}  {'STEPS':>5}  {'COST':>9}  TASK"
    lines = [head]
    task_width = max(20, width - len(head) + 4)
    for r, outcome in zip(runs, outcomes, strict=True):
        steps = "?" if r.steps is None else str(r.steps)
        lines.append(
            f"{r.session_id:<26}  {_when(r.started):<16}  {outcome:<{wide}}  "
            f"{steps:>5}  {cost_amount(r.cost_usd):>9}  {_cut(r.task, task_width)}"
        )
        notes = []
        if r.link:
            note = r.link
            if r.parent is not None:
                note += f" (parent: {r.parent.outcome}, {cost_amount(r.parent.cost_usd)})"
            notes.append(note)
        if r.savings is not None:
            notes.append(r.savings.describe())
        if r.error:
            notes.append(f"error: {_cut(r.error, 120)}")
        for note in notes:
            lines.append(f"{'':<28}↳ {note}")
    return lines


def runs_by(runs: list[RunInfo], by: str) -> list[Any]:
    """The runs' tokens, cost and time per project, day or model (the costliest first)."""
    from regista.breakdown import Group, StepNumbers

    groups: dict[str, Group] = {}
    for r in runs:
        key = {"project": r.project, "day": r.started[:10], "model": r.model}[by] or "?"
        group = groups.setdefault(key, Group(key))
        group.add(StepNumbers(r.tokens, r.cost_usd if r.complete else None, r.duration_ms))
    order = list(groups.values())
    if by == "day":
        order.sort(key=lambda g: g.key, reverse=True)
    else:
        order.sort(key=lambda g: (-(g.cost or 0.0), -g.ms, g.key))
    return order


def repeats_of_run(run: RunInfo) -> dict[str, Any] | None:
    """The run's repeats and what they took, as ``show --json`` gives them (the run is read
    once for it; ``None`` when it has none, or cannot be read)."""
    import warnings

    from regista.cli.cmd_show import repeats_of
    from regista.cli.show_pass import StepsPass
    from regista.errors import RegistaError
    from regista.trace.listing import Listing

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return repeats_of(StepsPass(Listing.load(run.path), 0))
    except (RegistaError, OSError):
        return None


def run(args: argparse.Namespace) -> int:
    from regista.store.library import library_or

    listing = list_runs(library_or(args.dir, args.library))
    parent = None
    if args.forks_of:
        parent = listing.by_id(args.forks_of)
        if parent is None:
            raise UserError(f"--forks-of {args.forks_of}: no single run with that id in the folder")
    since = parse_since(args.since) if args.since else None
    runs = filter_runs(
        listing.runs, failed=args.failed, task=args.task, forks_of=parent, since=since
    )
    # each run's forks (a sweep's too), replays and resumes under it; with --forks-of,
    # the parent first
    runs = under_parents(runs)
    if parent is not None:
        runs.sort(key=lambda r: r.session_id != parent.session_id)
    if args.by:
        from regista.cli.show_by import print_groups

        print_groups(
            args.by,
            runs_by(runs, args.by),
            "(all)",
            "RUNS",
            json_out=args.json,
            whole="runs'",
        )
        return 0
    if args.json:
        rows = [r.to_dict() | {"repeats": repeats_of_run(r)} for r in runs]
        sys.stdout.write(orjson.dumps(rows).decode() + "\n")
        return 0
    width = shutil.get_terminal_size((120, 24)).columns
    if not runs:
        print("no runs" + (" match" if len(listing.runs) else " in the folder"))
    else:
        sys.stdout.write("\n".join(run_lines(runs, width)) + "\n")
    if listing.skipped:
        n = len(listing.skipped)
        first, why = listing.skipped[0]
        print(
            f"({n} file{'s' if n != 1 else ''} skipped, not readable as runs: {first.name}: {why}"
            f"{' …' if n > 1 else ''})",
            file=sys.stderr,
        )
    return 0
