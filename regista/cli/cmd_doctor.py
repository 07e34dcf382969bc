"""``regista doctor``: the tools' retention settings and what the library keeps."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import orjson

from regista.cli._common import add_source_options, check_source_options


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "doctor",
        help="report the tools' retention settings and what the library keeps that they deleted",
        description="Say how long Claude Code keeps its sessions (cleanupPeriodDays in "
        "~/.claude/settings.json, 30 days when unset), which sessions it will delete soon that "
        "the library does not hold yet, whether a regista watch keeps the library, and what "
        "the library holds that the sources no longer do. Nothing is written.",
    )
    add_source_options(p)
    p.add_argument("--library", type=Path, metavar="LIBRARY", help="the library folder")
    p.add_argument("--json", action="store_true", help="one JSON object, for scripts")
    p.set_defaults(func=run)


def _mb(n: int) -> str:
    return f"{n / 1e6:,.1f} MB"


def _ago(t: float) -> str:
    s = max(time.time() - t, 0)
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if s >= size:
            return f"{s / size:.0f} {unit} ago"
    return "just now"


def run(args: argparse.Namespace) -> int:
    from regista.store.doctor import SOON_DAYS, examine
    from regista.store.library import claude_home, default_library, default_roots

    check_source_options(args)
    library = args.library if args.library is not None else default_library()
    home = args.claude.parent if args.claude is not None else claude_home()
    report = examine(library, default_roots(args.claude, args.codex), home)
    if args.json:
        sys.stdout.write(orjson.dumps(report.to_dict(), option=orjson.OPT_INDENT_2).decode())
        sys.stdout.write("\n")
        return 0
    out = ["Claude Code retention", f"  {report.retention.describe()}", "", "Sources"]
    for src in report.sources:
        if not src.exists:
            out.append(f"  {src.root.tool:<12} {src.root.path}: not there")
            continue
        out.append(
            f"  {src.root.tool:<12} {src.root.path}: {src.sessions} session(s), {_mb(src.bytes)}"
            + (f"; {src.not_kept} not in the library as they are now" if src.not_kept else "")
        )
        if src.at_risk:
            out.append(
                f"    {len(src.at_risk)} will be deleted by Claude Code within {SOON_DAYS} days "
                "and are not in the library: run regista watch --once"
            )
            out.extend(f"      {p}" for p in src.at_risk[:5])
    out += ["", f"Library {library}"]
    if not report.library_exists:
        out.append("  not made yet: regista watch --once makes it")
    else:
        watch = (
            f"kept by regista watch (pid {report.watching})"
            if report.watching
            else "no regista watch keeps it now"
        )
        last = f"; last import {_ago(report.last_import)}" if report.last_import else ""
        out.append(
            f"  {len(report.sessions)} session(s) as {report.traces} trace(s), "
            f"{_mb(report.trace_bytes)}; {watch}{last}"
        )
        gone = report.gone
        if gone:
            out.append(
                f"  {len(gone)} session(s) kept that the sources no longer have "
                f"({_mb(report.kept_bytes)} of source copies):"
            )
            for s in gone[:10]:
                when = (s.started or "?")[:16].replace("T", " ")
                out.append(f"    {s.session_id or '?'}  {when}  {s.path}")
            if len(gone) > 10:
                out.append(f"    … and {len(gone) - 10} more (--json lists them all)")
        else:
            out.append("  nothing that the sources no longer have")
        failed = report.failed
        if failed:
            out.append(f"  {len(failed)} session(s) could not be imported:")
            out.extend(f"    {s.path}: {s.error}" for s in failed[:5])
    print("\n".join(out))
    return 0
