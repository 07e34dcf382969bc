"""``regista fork|rewind SESSION … --resume-in claude|codex``: a coding-agent session
written back into its own CLI, to be continued there (see
:mod:`regista.importers.fork_cli`)."""

from __future__ import annotations

import argparse
from typing import Any

from regista.cli._common import out
from regista.errors import UserError

__all__ = ["add_resume_in", "fork_back"]


def add_resume_in(parser: argparse.ArgumentParser) -> None:
    """The options that send a fork or a rewind back into the CLI that recorded it."""
    parser.add_argument(
        "--resume-in",
        choices=("claude", "codex"),
        metavar="claude|codex",
        help="TRACE is a Claude Code or Codex session (a path or a session id): write the "
        "fork as a new session of that CLI and print the command that continues it "
        "(claude --resume ID / codex resume ID); the original file is only read",
    )
    parser.add_argument(
        "--cwd",
        metavar="DIR",
        help="with --resume-in: the folder the session continues in (default: the recorded one)",
    )


def fork_back(args: argparse.Namespace, edits: list[tuple[int, Any]]) -> int:
    """Write the fork (``edits``: one ``(step, edit)``; a rewind's edit is ``None``)."""
    from regista.importers.fork_cli import fork_into_cli

    if getattr(args, "child_command", None) is not None:
        raise UserError("--resume-in writes a session for its CLI: it runs no command after --")
    for name in ("agent", "trace_dir", "live_after"):
        if getattr(args, name, None) is not None:
            raise UserError(f"--{name.replace('_', '-')} is for a regista fork, not --resume-in")
    if getattr(args, "loose", False):
        raise UserError("--loose is for a regista fork, not --resume-in")
    if len(edits) != 1:
        raise UserError("--resume-in takes one edit: --at N with --tool-result or --answer")
    step, edit = edits[0]
    fork = fork_into_cli(args.trace, step, edit, resume_in=args.resume_in, cwd=args.cwd)
    out(fork.lines())
    return 0
