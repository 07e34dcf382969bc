"""``regista masks [--masks FILE] [--trace-dir DIR]``: the masks a strict replay applies;
``regista masks learn A B [C…] [-o FILE]``: masks learned from recordings of one task.

A mask names a part of a request that a client varies by itself (the date, its working
folder, …); a strict replay of an SDK or CLI agent matches a request with those parts
masked, and shows a difference there as ``masked`` (see :mod:`regista.diff.masks`).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from regista.cli._common import out
from regista.defaults import DEFAULT_TRACE_DIR


def add_mask_options(p: argparse.ArgumentParser) -> None:
    """``--masks FILE`` and ``--no-masks``, as every command that matches requests takes."""
    group = p.add_mutually_exclusive_group()
    group.add_argument(
        "--masks",
        metavar="FILE",
        help="a TOML file of more masks (default: masks.toml beside the traces, if any); "
        "regista masks lists the masks in effect",
    )
    group.add_argument(
        "--no-masks",
        action="store_true",
        help="no masks at all: every byte of a request counts in a strict match",
    )


def masks_from_args(args: argparse.Namespace, beside: Path) -> Any:
    """The :class:`~regista.diff.masks.MaskSet` that ``--masks`` / ``--no-masks`` ask for."""
    from regista.diff.masks import MaskSet, mask_set

    if getattr(args, "no_masks", False):
        return MaskSet()
    return mask_set(getattr(args, "masks", None), beside=beside)


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "masks",
        help="list the masks a strict replay applies (volatile parts of a client's requests)",
        description="List the masks in effect: the built-in ones (the date, working folder, "
        "platform and ids that Claude Code and Codex put in their requests), then those of "
        "--masks FILE or of masks.toml in the traces folder. A strict replay matches a "
        "request with these spans masked and shows a difference there as 'masked'. "
        "--toml prints them in the mask file's format.",
    )
    p.add_argument(
        "--trace-dir",
        default=str(DEFAULT_TRACE_DIR),
        help=f"the traces folder whose masks.toml is read (default {DEFAULT_TRACE_DIR})",
    )
    p.add_argument("--toml", action="store_true", help="print the masks as a mask file")
    add_mask_options(p)
    p.set_defaults(func=run)
    actions = p.add_subparsers(dest="action", metavar="learn")
    learn = actions.add_parser(
        "learn",
        help="learn masks from two or more recordings of the same task",
        description="Compare two or more recordings of the same task and write, as a mask "
        "file, the values that vary while the run's path stays the same (ids, timestamps, "
        "durations, uuids, dates, temp paths), each with one line of evidence. Differences "
        "of any other kind (another prompt, other words) are listed and never masked. Use "
        "the file with --masks FILE in regista replay, regista test, the pytest plugin "
        "(--regista-masks) and regista serve.",
        usage="regista masks learn TRACE TRACE [TRACE...] [-o FILE]",
    )
    learn.add_argument("traces", nargs="+", metavar="TRACE", help="recordings of one task")
    learn.add_argument(
        "-o", "--output", metavar="FILE", help="write the mask file here (default: print it)"
    )
    learn.set_defaults(func=run_learn)


def run(args: argparse.Namespace) -> int:
    masks = masks_from_args(args, Path(args.trace_dir))
    if args.toml:
        out(["\n".join(m.as_toml() for m in masks.masks).rstrip("\n")])
        return 0
    sources = " + ".join(masks.sources) or "none"
    lines = [f"{len(masks)} masks ({sources})"]
    if masks:
        lines.append(f"{'NAME':<20} {'CLIENT':<12} {'WHERE':<18} WHY")
        lines += masks.describe()
    out(lines)
    return 0


def run_learn(args: argparse.Namespace) -> int:
    """``regista masks learn``: the masks that make the recordings equal."""
    from regista.diff.learn import learn_masks
    from regista.errors import UserError
    from regista.trace.reader import Trace

    if len(args.traces) < 2:
        raise UserError("masks learn needs two or more recordings of the same task")
    traces = [Trace.load(t) for t in args.traces]
    learned = learn_masks(traces)
    runs = len(traces)
    lines = [
        f"learned {len(learned.masks)} mask{'s' if len(learned.masks) != 1 else ''} from "
        f"{learned.paired} model call{'s' if learned.paired != 1 else ''} of {runs} runs"
    ]
    for m in learned.masks:
        lines.append(f"  {m.name}: {m.evidence}")
    if learned.parted is not None:
        lines.append(
            f"the runs' paths part at step {learned.parted}: nothing is learned from there on"
        )
    if learned.real:
        lines.append("not masked (real differences):")
        lines += [f"  {r}" for r in learned.real[:20]]
        if len(learned.real) > 20:
            lines.append(f"  … and {len(learned.real) - 20} more")
    header = (
        "# Masks learned by regista masks learn from "
        + ", ".join(Path(t).name for t in args.traces)
        + "\n# Each mask names a value that varied between the runs while their path stayed "
        "the same.\n# Edit freely: see regista masks --help and docs/masks.md.\n"
    )
    body = "\n".join(m.as_toml() for m in learned.masks)
    if args.output:
        target = Path(args.output)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(header + "\n" + body, encoding="utf-8")
        lines.append(f"mask file: {target}")
        out(lines)
    else:
        import sys

        print("\n".join(lines), file=sys.stderr)
        out([header + "\n" + body.rstrip("\n")])
    return 0
