"""Request hashing per model call over a growing session: the plain hash against the
incremental one (``PrefixHasher``), same values.

The requests are those of the realistic session (bench/realistic_session.py). Each round
hashes the whole session's requests in order with one and then the other (alternating
which goes first), in CPU time of the thread; medians of the per-call means are printed,
and the cost of the last call (the longest history) on its own.

    python bench/bench_hash.py [--rounds 9] [--calls 200]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from realistic_session import TASK, make_agent

from regista.trace.canonical import PrefixHasher, request_hash
from regista.trace.reader import Trace


def session_requests(calls: int) -> list[dict[str, Any]]:
    with tempfile.TemporaryDirectory() as tmp:
        trace = Trace.load(make_agent(Path(tmp), calls=calls).run_sync(TASK).trace_path)
        return [req.canonical() for _, req in trace.iter_requests()]


def time_plain(requests: list[dict[str, Any]]) -> tuple[float, float]:
    t0 = time.thread_time()
    for req in requests[:-1]:
        request_hash(req)
    t1 = time.thread_time()
    request_hash(requests[-1])
    t2 = time.thread_time()
    return (t2 - t0) / len(requests) * 1e6, (t2 - t1) * 1e6


def time_prefix(requests: list[dict[str, Any]]) -> tuple[float, float]:
    hasher = PrefixHasher()
    t0 = time.thread_time()
    for req in requests[:-1]:
        hasher(req)
    t1 = time.thread_time()
    hasher(requests[-1])
    t2 = time.thread_time()
    return (t2 - t0) / len(requests) * 1e6, (t2 - t1) * 1e6


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--calls", type=int, default=200)
    args = parser.parse_args(argv)
    requests = session_requests(args.calls)
    hasher = PrefixHasher()
    assert [hasher(r) for r in requests] == [request_hash(r) for r in requests]
    plain: list[tuple[float, float]] = []
    prefix: list[tuple[float, float]] = []
    for i in range(args.rounds):
        if i % 2:
            plain.append(time_plain(requests))
            prefix.append(time_prefix(requests))
        else:
            prefix.append(time_prefix(requests))
            plain.append(time_plain(requests))
    pm = statistics.median(p[0] for p in plain)
    qm = statistics.median(p[0] for p in prefix)
    pl = statistics.median(p[1] for p in plain)
    ql = statistics.median(p[1] for p in prefix)
    print(f"{len(requests)} requests of a growing session (medians of {args.rounds} rounds)")
    for name, a, b in (("per call, mean", pm, qm), ("the last call", pl, ql)):
        print(f"  {name:<16} request_hash {a:8.1f} µs   PrefixHasher {b:7.1f} µs   {a / b:.1f}×")


if __name__ == "__main__":
    main()
