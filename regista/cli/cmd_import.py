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
    from regista.importers import discover, import_runs
    from regista.importers._common import read_source
    from regista.trace.formats import compressed_error, is_pipe, read_head

    try:
        files = discover(args.format, list(args.paths))
    except FileNotFoundError as exc:
        raise UserError(f"{exc.args[0]}: no such file or folder") from None
    if not files:
        raise UserError(f"no {args.format} sessions under {', '.join(map(str, args.paths))}")
    given = {Path(p) for p in args.paths}
    # a pipe (``<(zcat session.jsonl.gz)``) can be read only once: it is read here, whole
    piped = {path: read_source(path) for path in files if is_pipe(path)}
    sources: list[Path] = []
    strays = 0
    for path in files:  # every file is checked before anything is written
        found = _format_of(path, args.format, piped.get(path))
        if found != args.format:
            if path in given:
                if found == "regista":
                    raise UserError(f"{path} is already a regista trace: nothing to import")
                if found is None:
                    head = piped.get(path) or read_head(path)
                    if (compressed := compressed_error(path, head)) is not None:
                        raise UserError(compressed)
                    raise UserError(f"{path} holds no {args.format} session: nothing to import")
                raise UserError(
                    f"{path} holds a {found} session, not {args.format}: "
                    f"regista import {found} {path}"
                )
            strays += 1
            continue
        sources.append(path)
    if not sources:
        raise UserError(f"no {args.format} sessions under {', '.join(map(str, args.paths))}")
    sessions = runs = 0
    for path in sources:
        data = piped.pop(path, None)
        # a file is read by the importer, in blocks (a Claude Code or Codex one written as it
        # converts)
        conv, written = import_runs(args.format, path, args.trace_dir, data)
        sessions += 1
        runs += len(written)
        steps = conv.main.steps
        extra = f" + {len(written) - 1} subagent run(s)" if len(written) > 1 else ""
        print(f"{path} → {written[0]} ({steps} steps{extra})")
        for line in conv.report.lines():
            print(f"  {line}")
    if strays:
        print(f"skipped {strays} file(s) that hold no {args.format} session")
    print(f"imported {sessions} session(s) as {runs} trace(s) in {args.trace_dir}")
    return 0


_HEAD = 4 << 20


def _format_of(path: Path, wanted: str, data: bytes | None = None) -> str | None:
    """The format ``path`` holds (``None``: none regista knows), from its content
    (``data``: its bytes, already read).

    The first lines usually say; when they do not, every line is asked whether it is one
    of ``wanted`` (a transcript whose first lines are damaged is still one).
    """
    from regista.importers._common import read_source
    from regista.importers.detect import any_line_is, detect

    if data is not None:
        head, whole = data, True
    else:
        try:
            with open(path, "rb") as f:
                head = f.read(_HEAD)
                whole = len(head) < _HEAD
        except OSError:
            return wanted  # the import itself says why it cannot be read
    found = detect(head)
    if found is not None or wanted == "otlp":  # an OTLP file's importer says what is wrong
        return found or wanted
    data = head if whole else read_source(path)
    if not whole and (found := detect(data)) is not None:
        return found
    return wanted if any_line_is(data, wanted) else None
