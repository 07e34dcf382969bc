"""``regista share TRACE [TRACE_B] -o run.html``: a run as one self-contained web page."""

from __future__ import annotations

import argparse
from pathlib import Path

from regista.share import write_share


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "share",
        help="write a run (or two, side by side) as one self-contained HTML page",
        description="One HTML file with everything inline (no network): header, timeline, "
        "step detail and request diff; with TRACE_B, both runs side by side, aligned.",
    )
    p.add_argument("trace", help="the trace to show")
    p.add_argument("trace_b", nargs="?", help="a second trace, shown side by side")
    p.add_argument("-o", "--output", metavar="FILE", help="the page (default: <trace>.html)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    out = Path(args.output) if args.output else Path(args.trace).with_suffix(".html")
    path = write_share(out, args.trace, args.trace_b)
    print(f"wrote {path} ({path.stat().st_size:,} bytes)")
    return 0
