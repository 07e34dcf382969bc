"""``regista masks [--masks FILE] [--trace-dir DIR]``: the masks a strict replay applies.

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
