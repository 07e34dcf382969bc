"""``regista watch``: keep Claude Code and Codex sessions imported into a library folder."""

from __future__ import annotations

import argparse
import signal
import sys
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING

from regista.cli._common import add_source_options, check_source_options
from regista.errors import UserError

if TYPE_CHECKING:
    from regista.store.library import Library, SyncStats

#: Seconds between two looks at the sources (a stat of every file: about 60 ms for 3,000
#: sessions).
DEFAULT_INTERVAL = 2.0


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "watch",
        help="keep Claude Code and Codex sessions imported into a library folder",
        description="Import every Claude Code session (~/.claude/projects, or "
        "$CLAUDE_CONFIG_DIR/projects) and Codex rollout (~/.codex/sessions and "
        "archived_sessions, or under $CODEX_HOME) into LIBRARY as regista traces, then keep "
        "importing what changes, every INTERVAL seconds. Only what changed is imported again; "
        "a copy of every source file is kept, so the library outlives the tools' own "
        "clean-up. Read it with regista runs --library, regista recall --library, regista-tui.",
    )
    add_source_options(p)
    p.add_argument(
        "--into",
        type=Path,
        metavar="LIBRARY",
        help="the library folder (default $REGISTA_LIBRARY, else ~/.local/share/regista/library)",
    )
    p.add_argument("--once", action="store_true", help="import what is there, then exit")
    p.add_argument(
        "--interval",
        type=float,
        default=DEFAULT_INTERVAL,
        metavar="SECONDS",
        help=f"seconds between two looks (default {DEFAULT_INTERVAL:g})",
    )
    p.add_argument("-v", "--verbose", action="store_true", help="one line per session imported")
    p.set_defaults(func=run)


class _Stop(Exception):
    """SIGTERM (a service manager stopping the watch)."""


def _stamp() -> str:
    return datetime.now().strftime("%H:%M:%S")


def run(args: argparse.Namespace) -> int:
    from regista.store.library import Library, LibraryBusy, default_library, default_roots

    if args.interval <= 0:
        raise UserError(f"--interval must be more than 0 seconds, not {args.interval:g}")
    check_source_options(args)
    folder = args.into if args.into is not None else default_library()
    roots = default_roots(args.claude, args.codex)
    if args.claude is not None and args.codex is None:
        roots = [r for r in roots if r.tool == "claude-code"]
    elif args.codex is not None and args.claude is None:
        roots = [r for r in roots if r.tool == "codex"]
    if folder.exists() and not folder.is_dir():
        raise UserError(f"{folder}: is a file; the library is a folder")
    try:
        library = Library(folder, roots)
    except LibraryBusy as exc:
        raise UserError(
            f"{folder} is already kept by another regista watch (pid {exc.args[0]})"
        ) from None
    except OSError as exc:
        raise UserError(f"cannot keep a library in {folder}: {exc.strerror or exc}") from None

    def on_term(signum: int, frame: FrameType | None) -> None:
        raise _Stop

    signal.signal(signal.SIGTERM, on_term)
    log = (lambda line: print(line, flush=True)) if args.verbose else None
    found = [str(r.path) for r in roots if r.path.is_dir()]
    try:
        with library:
            stats = _first_pass(library, log)
            print(
                f"{folder}: {stats.sessions} session(s) at the sources; imported {stats.imported} "
                f"({stats.runs} trace(s), {stats.bytes / 1e6:.1f} MB)"
                + (f", {stats.failed} could not be imported" if stats.failed else "")
                + (f", {stats.gone} deleted at the source (kept)" if stats.gone else ""),
                flush=True,
            )
            for path, error in stats.errors[:5] if not args.verbose else []:
                print(f"  {path}: {error}", file=sys.stderr)
            if not found:
                print("no session folder found: " + ", ".join(str(r.path) for r in roots))
            if args.once:
                return 1 if stats.failed and not stats.imported else 0
            print(
                f"watching {', '.join(found) or 'nothing yet'} every {args.interval:g} s "
                "(Ctrl+C to stop)",
                flush=True,
            )
            while True:
                time.sleep(args.interval)
                stats = library.sync(throttle=True, log=log)
                if stats.imported or stats.failed or stats.gone:
                    print(
                        f"{_stamp()} imported {stats.imported} session(s)"
                        + (f", {stats.failed} failed" if stats.failed else "")
                        + (f", {stats.gone} deleted at the source (kept)" if stats.gone else ""),
                        flush=True,
                    )
    except KeyboardInterrupt:
        print(f"\nstopped; the library is in {folder}", file=sys.stderr)
        return 130
    except _Stop:
        print(f"stopped; the library is in {folder}", file=sys.stderr)
        return 0


def _first_pass(library: Library, log: Callable[[str], None] | None) -> SyncStats:
    """The first sync, with a progress bar on a terminal (a real home is thousands of files
    and gigabytes)."""
    if not sys.stderr.isatty():
        return library.sync(log=log)
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        DownloadColumn,
        Progress,
        TextColumn,
        TimeRemainingColumn,
        TransferSpeedColumn,
    )

    console = Console(stderr=True)
    with Progress(
        TextColumn("importing"),
        BarColumn(),
        DownloadColumn(),
        TransferSpeedColumn(),
        TimeRemainingColumn(),
        TextColumn("{task.fields[name]}", style="dim"),
        console=console,
        transient=True,
    ) as bar:
        task = bar.add_task("import", total=None, name="")

        def progress(done: int, total: int, path: str) -> None:
            bar.update(task, completed=done, total=total or None, name=Path(path).name[:40])

        def line(text: str) -> None:
            bar.console.print(text, highlight=False, markup=False)

        return library.sync(progress=progress, log=line if log is not None else None)
