"""``regista recall WORDS… [--dir DIR]``: earlier runs that dealt with the same words."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import orjson

from regista.errors import UserError
from regista.store.recall import RecallHit, recall
from regista.vocab import cost_text


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "recall",
        help="find earlier runs that dealt with the same words",
        description="Search the runs of DIR for WORDS (the runs regista runs lists there; "
        "default .regista/traces, with .regista/imports and the forks of the sweeps in "
        ".regista/sweeps): successful "
        "runs first, each with the path its steps took and the steps where the words occur. "
        "The index (.regista-recall.sqlite in DIR) is updated first, reading only what changed.",
    )
    p.add_argument("words", nargs="+", help="the words to look for (every word given)")
    p.add_argument(
        "--dir", "-d", metavar="DIR", help="the traces folder to search (default .regista/traces)"
    )
    p.add_argument(
        "--library",
        action="store_true",
        help="search the library that regista watch keeps (the default when there is no "
        ".regista/traces here)",
    )
    p.add_argument("--json", action="store_true", help="one JSON array, for scripts")
    p.add_argument("--limit", type=int, default=10, metavar="N", help="at most N runs (10)")
    p.set_defaults(func=run)


def hit_lines(hit: RecallHit) -> list[str]:
    """How ``regista recall`` prints one run."""
    cost = cost_text(hit.cost_usd)
    steps = "?" if hit.steps is None else str(hit.steps)
    task = " ".join(hit.task.split())
    lines = [
        f"{'✓' if hit.ok else '✗'} {hit.session_id}  {hit.outcome} · {steps} steps · {cost} · "
        f"{hit.started[:16].replace('T', ' ')}",
        f"  task: {task[:110]}{'…' if len(task) > 110 else ''}",
        f"  path: {hit.skeleton_text(110)}",
    ]
    for step, snippet in hit.matches:
        where = {-1: "task", -2: "end"}.get(step, f"step {step}")
        lines.append(f"  {where}: {' '.join(snippet.split())[:120]}")
    return lines


def run(args: argparse.Namespace) -> int:
    words = " ".join(args.words)
    # a folder given as a word, as the command once took it: said, not searched for quietly
    folders = [w for w in args.words if os.sep in w and Path(w).is_dir()]
    hint = (
        f"every word is searched for; to search the runs of {folders[-1]}: --dir" if folders else ""
    )
    from regista.store.library import library_or

    try:
        hits = recall(words, library_or(args.dir, args.library), limit=max(1, args.limit))
    except UserError as exc:
        raise UserError(f"{exc} ({hint})" if hint else str(exc)) from None
    if args.json:
        sys.stdout.write(orjson.dumps([h.to_dict() for h in hits]).decode() + "\n")
        return 0
    if not hits:
        print(f"no runs mention {words!r}")
        if hint:
            print(f"({hint})")
        return 0
    out: list[str] = []
    for h in hits:
        out.extend([*hit_lines(h), ""])
    sys.stdout.write("\n".join(out))
    return 0
