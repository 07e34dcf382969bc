"""``regista import FORMAT PATH…``: write other tools' sessions as regista traces."""

from __future__ import annotations

import argparse
from pathlib import Path

from regista.defaults import DEFAULT_TRACE_DIR
from regista.errors import UserError

__all__ = ["register", "run"]

_FORMATS = ("claude-code", "codex", "otlp")


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``import`` subcommand."""
    p = sub.add_parser(
        "import",
        help="write Claude Code or Codex sessions, or OTLP GenAI spans, as regista traces",
        description="Convert Claude Code transcripts (~/.claude/projects/…) or Codex rollouts "
        "(~/.codex/sessions/…) into regista traces, one per session and one per subagent. "
        "A PATH may be a session file, a session folder or the tool's root. Importing the "
        "same session again gives the same session id and the same bytes. The transcripts "
        "are only read. 'otlp' reads an OTLP JSON file of OpenTelemetry GenAI spans (one "
        "run per OTel trace).",
    )
    p.add_argument("format", choices=_FORMATS, metavar="FORMAT", help=" | ".join(_FORMATS))
    p.add_argument("paths", nargs="+", type=Path, metavar="PATH", help="files or folders")
    p.add_argument(
        "--trace-dir",
        type=Path,
        default=DEFAULT_TRACE_DIR,
        metavar="DIR",
        help="where the traces are written (default: .regista/traces)",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from regista.importers import convert, discover, write_runs
    from regista.importers._common import read_source
    from regista.importers.detect import detect

    try:
        files = discover(args.format, list(args.paths))
    except FileNotFoundError as exc:
        raise UserError(f"{exc.args[0]}: no such file or folder") from None
    if not files:
        raise UserError(f"no {args.format} sessions under {', '.join(map(str, args.paths))}")
    given = {Path(p) for p in args.paths}
    sources: list[tuple[Path, bytes]] = []
    strays = 0
    for path in files:  # every file is checked before anything is written
        data = read_source(path)
        found = detect(data)
        if found is not None and found != args.format:
            if path in given:
                if found == "regista":
                    raise UserError(f"{path} is already a regista trace: nothing to import")
                raise UserError(
                    f"{path} holds a {found} session, not {args.format}: "
                    f"regista import {found} {path}"
                )
            strays += 1
            continue
        sources.append((path, data))
    if not sources:
        raise UserError(f"no {args.format} sessions under {', '.join(map(str, args.paths))}")
    sessions = runs = 0
    for path, data in sources:
        conv = convert(args.format, path, data)
        written = write_runs(conv, args.trace_dir)
        sessions += 1
        runs += len(written)
        steps = sum(1 for ev in conv.main.events if ev["type"] in ("llm.request", "tool.call"))
        extra = f" + {len(written) - 1} subagent run(s)" if len(written) > 1 else ""
        print(f"{path} → {written[0]} ({steps} steps{extra})")
        for line in conv.report.lines():
            print(f"  {line}")
    if strays:
        print(f"skipped {strays} file(s) that hold no {args.format} session")
    print(f"imported {sessions} session(s) as {runs} trace(s) in {args.trace_dir}")
    return 0
