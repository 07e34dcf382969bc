"""``regista-tui TRACE`` browses a trace; ``regista-tui A B`` compares two runs;
``regista-tui DIR`` (or no argument: the default traces folder) lists the runs of a folder.
``regista-tui SWEEP`` shows a sweep's parent and forks in columns.
``regista-tui TRACE -- CMD`` forks a recorded program by running ``CMD`` against the fork,
as ``regista fork TRACE … -- CMD`` does."""

from __future__ import annotations

import argparse
import gc
import sys
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any

from regista.engine import DEFAULT_TRACE_DIR

if TYPE_CHECKING:
    from regista.engine import TraceIndex

__all__ = ["main", "open_index"]

#: Indexed before the app starts (fatal errors surface here); the rest in a worker.
FIRST_SCAN_BYTES = 4 * 1024 * 1024
#: A transcript's trace is converted as it is indexed: before the first frame, about a
#: screen's worth of it (46 steps of a realistic Claude Code transcript; 0.07 s less on a
#: 50 MB one's first screen than 4 MB). The rest converts in the worker, as for a trace.
FIRST_TRANSCRIPT_BYTES = 512 * 1024


def open_index(path: Path) -> tuple[TraceIndex, str]:
    """Open and start indexing ``path``.

    Returns:
        The index and a notice for the header ("" when all is well).

    Raises:
        RegistaError: The trace cannot be shown at all.
    """
    from regista import open_run
    from regista.engine import TraceIndex

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        # Another tool's session is converted in memory (nothing is written beside it): a
        # Claude Code transcript's index converts as it scans (the first screen needs only
        # its start), the others are converted whole; either, written in the last minute,
        # is followed as it grows.
        # A subagent's run started while its session is followed grows with it (there is
        # none unless a transcript was converted: a trace's first screen imports no more).
        memory = sys.modules.get("regista.importers.memory")
        followed = memory.followed_index(path) if memory is not None else None
        index = followed or open_run(path).index()
    index.path = path
    # A regista trace's first screen needs no event decoded: the scan keeps session.start
    # raw (checked as far as it can be without the event models) and the browser loads the
    # models once the first screen is up, whatever the trace's size (loading them first
    # would make a small trace's first screen slower than a huge one's).
    index.cold = type(index) is TraceIndex
    index.scan(FIRST_SCAN_BYTES if index.cold else min(FIRST_SCAN_BYTES, FIRST_TRANSCRIPT_BYTES))
    notice = ""
    skipped = [str(w.message) for w in caught if w.category.__name__ == "TranscriptWarning"]
    if skipped:
        notice = skipped[0] if len(skipped) == 1 else f"{skipped[0]} (and {len(skipped) - 1} more)"
    # A half-written last line is said by the browser (and by the header's status), once.
    return index, notice


def _check_run(path: Path) -> None:
    """Raise what is wrong with a run to compare, reading only its start (the comparison
    reads the runs itself, once)."""
    from regista import open_run
    from regista.engine import RunFile

    if not open_run(path).in_place:  # another tool's session: converted on opening
        return
    with RunFile(path) as run:
        run.read(64 * 1024, final=True)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="regista-tui",
        description="Scrub an agent trace, compare two runs side by side, see a sweep's "
        "forks in columns, or list the runs of a folder (no argument: .regista/traces and "
        ".regista/imports).",
        usage="regista-tui [TRACE [TRACE] | SWEEP | DIR] [--agent MODULE:ATTR] [--trace-dir DIR] "
        "[-- CMD [ARGS...]]",
        epilog="-- CMD: the program a fork runs (e and r on a trace recorded with "
        "regista record -- CMD, which has no regista Agent): its calls before the edit are "
        "answered from the recording, the rest go live, as regista fork TRACE ... -- CMD.",
    )
    parser.add_argument(
        "traces",
        nargs="*",
        type=Path,
        metavar="TRACE",
        help="a trace to browse, two traces to compare, a sweep (regista sweep's "
        "sweep.json or its folder) to see its forks side by side, or a folder to list its "
        "runs (default: the runs of .regista/traces)",
    )
    parser.add_argument(
        "--agent",
        metavar="MODULE:ATTR",
        help="the agent for a fork's live half (an Agent, or a factory); "
        "default: the trace's agent_ref",
    )
    parser.add_argument(
        "--trace-dir",
        metavar="DIR",
        type=Path,
        default=DEFAULT_TRACE_DIR,
        help="where forks write their traces (default: .regista/traces)",
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``regista-tui`` console script."""
    argv = sys.argv[1:] if argv is None else list(argv)
    command = None
    if "--" in argv:  # regista-tui TRACE -- CMD ARGS…: the program a fork runs
        cut = argv.index("--")
        argv, command = argv[:cut], argv[cut + 1 :]
    args = _parser().parse_args(argv)
    args.command = command
    if command is not None and (not command or args.agent):
        why = "give the program after --" if not command else "--agent or -- CMD, not both"
        print(f"regista-tui: {why}, e.g. regista-tui TRACE -- python agent.py", file=sys.stderr)
        return 2
    if len(args.traces) > 2:
        print("regista-tui: give one trace to browse or two to compare", file=sys.stderr)
        return 2
    # Start-up allocates a great many long-lived objects (modules, models, styles) and
    # no garbage worth collecting: the collector waits until the first screen is drawn
    # (see RegistaApp.on_mount), then starts with those objects frozen out of its scans.
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _run(args)
    finally:
        if collecting:
            gc.enable()


def _run(args: argparse.Namespace) -> int:
    from regista import RegistaError, UserError
    from regista.engine import demo_pace
    from regista_tui.app import RegistaApp

    # The sample agents' offline demo model answers instantly; in the debugger it takes a
    # moment per answer, so a fork of a sample trace visibly streams in.
    demo_pace(0.35)
    try:
        args.traces = [_spooled(path) for path in args.traces]
        sweep = _sweep_file(args.traces[0]) if len(args.traces) == 1 else None
        if sweep is not None:
            app = RegistaApp(sweep=sweep, agent=args.agent, trace_dir=args.trace_dir)
        elif len(args.traces) == 0 or (len(args.traces) == 1 and args.traces[0].is_dir()):
            app = _runs_app(args)
        elif len(args.traces) == 2:
            for path in args.traces:  # fail early and plainly, before the screen opens
                _check_run(path)
            app = RegistaApp(
                compare=(args.traces[0], args.traces[1]),
                agent=args.agent,
                trace_dir=args.trace_dir,
            )
        else:
            index, notice = open_index(args.traces[0])
            app = RegistaApp(
                index,
                agent=args.agent,
                trace_dir=args.trace_dir,
                notice=notice,
                command=args.command,
            )
    except RegistaError as exc:
        print(f"regista-tui: {exc}", file=sys.stderr)
        return 2 if isinstance(exc, UserError) else 1  # as `regista` does (README)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        app.run()
    return app.return_code or 0


def _sweep_file(path: Path) -> Path | None:
    """The sweep file ``path`` names (the file, or a folder holding ``sweep.json``), read
    once here so that a bad one fails before the screen opens; ``None``: not a sweep."""
    target = path / "sweep.json" if path.is_dir() else path
    if not target.is_file():
        return None
    try:
        with open(target, "rb") as f:
            head = f.read(256)
    except OSError:
        return None
    if b'"regista.sweep/' not in head and target.name != "sweep.json":
        return None
    from regista.engine import load_sweep

    load_sweep(target)
    return target


def _spooled(path: Path) -> Path:
    """``path``, or for a pipe (``<(zcat trace.jsonl.gz)``) an in-memory file of its bytes:
    a pipe can be read only once, and the viewer reads a trace many times (a fork reads it
    again). A device is refused when it is read."""
    from regista import open_run
    from regista.engine import is_pipe, memory_file

    if not is_pipe(path):
        return path
    data = open_run(path).data
    assert data is not None  # a pipe is read whole to tell its format
    return memory_file(path.name, data)


def _runs_app(args: argparse.Namespace) -> Any:
    """The app on the run list of the folder given, or of the default folder."""
    from regista import UserError
    from regista.engine import DEFAULT_DIR, RunList, has_default_runs, list_runs
    from regista_tui.app import RegistaApp

    folder: Path | None = args.traces[0] if args.traces else None
    if folder is None and not has_default_runs():
        raise UserError(
            f"no traces folder here ({DEFAULT_DIR} does not exist); "
            "name a trace or a folder: regista-tui TRACE | DIR"
        )
    listing: RunList = list_runs(folder)
    return RegistaApp(
        runs=listing,
        runs_folder=str(folder if folder is not None else DEFAULT_DIR),
        agent=args.agent,
        trace_dir=args.trace_dir,
        command=args.command,
    )


if __name__ == "__main__":
    sys.exit(main())
