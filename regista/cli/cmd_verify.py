"""``regista verify TRACE``: check a whole trace file, every line and every request hash."""

from __future__ import annotations

import argparse
import warnings

from regista.errors import TraceWarning


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "verify",
        help="check a trace: every line, and every rebuilt request against its hash",
        description="Read the whole trace: every line must be a valid event (payloads "
        "included), in order, of one session, and every request rebuilt from the stored "
        "deltas must hash to its recorded request_hash. Prints one line; exits 1 at the "
        "first problem (named by file and line).",
    )
    p.add_argument("trace", metavar="TRACE", help="the trace file (.jsonl)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from regista.trace.reader import Trace
    from regista.trace.verify import is_imported, verify_requests

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", TraceWarning)
        trace = Trace.load(args.trace)
    if is_imported(trace):
        print(f"{args.trace}: readable; an imported session has no request hashes to check")
        return 0
    report = verify_requests(trace)
    ending = "ended" if trace.complete else "unfinished (no session.end)"
    if any(issubclass(w.category, TraceWarning) for w in caught):
        ending += ", a half-written last line dropped"
    print(
        f"{args.trace}: OK: {len(trace)} events, {report.requests} requests and "
        f"{report.compactions} compactions match their hashes; {ending}"
    )
    return 0
