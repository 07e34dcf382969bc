"""Full collections in a process that reads a small trace, then a big one: this tree
against another (``--old DIR``: ``git archive main | tar -x -C DIR``).

Each round, in a new process per tree (interleaved): ``read_summary`` of a sample trace
(its block imports the readers: the first measure of what lives), then ``Trace.load`` of
the dense trace of ``--mb`` MB (``bench/realistic.py``) and its steps. The generation-2
collections during the big read are counted and timed (``gc.callbacks``), with the big
read's wall time. Medians over ``--repeat`` rounds, with the spread: the machine is shared.

    .venv/bin/python bench/bench_paused_gc.py --old /tmp/old [--mb 200] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from realistic import realistic_trace

ROOT = Path(__file__).resolve().parents[1]

READS = """
import gc, sys, time
import regista
from regista.trace.index import read_summary
assert regista.__file__.startswith(sys.argv[3]), regista.__file__
full, start = [], [0.0]
def seen(phase, info):
    if info["generation"] == 2:
        if phase == "start":
            start[0] = time.perf_counter()
        else:
            full.append(time.perf_counter() - start[0])
gc.callbacks.append(seen)
read_summary(sys.argv[1])
before = len(full)
t = time.perf_counter()
trace = regista.Trace.load(sys.argv[2])
trace.steps()
print(len(full) - before, sum(full[before:]), time.perf_counter() - t)
"""


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=float, default=200.0)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--old", type=Path, required=True)
    ap.add_argument("--dir", type=Path, default=Path("/tmp/regista-bench"))
    args = ap.parse_args()
    args.dir.mkdir(parents=True, exist_ok=True)
    big = realistic_trace(args.dir / f"dense_{args.mb:g}mb.jsonl", args.mb, shape="dense")
    small = ROOT / "sample_traces" / "refund_happy.jsonl"
    rows: dict[str, list[tuple[int, float, float]]] = {"new": [], "old": []}
    for _ in range(args.repeat):
        for name, where in (("new", ROOT), ("old", args.old)):
            env = dict(os.environ, PYTHONPATH=str(where), PYTHONDONTWRITEBYTECODE="1")
            done = subprocess.run(
                [sys.executable, "-c", READS, str(small), str(big), str(where)],
                check=True,
                capture_output=True,
                text=True,
                env=env,
                cwd=where,  # ``-c`` puts the working folder first on the path
            )
            count, spent, read = done.stdout.split()
            rows[name].append((int(count), float(spent), float(read)))
    print(f"small trace, then the dense {args.mb:g} MB trace loaded with its steps")
    print("version  full collections  their time s        big read s")
    for name, got in rows.items():
        counts = sorted({c for c, _, _ in got})
        spent = [s for _, s, _ in got]
        read = [r for _, _, r in got]
        print(
            f"{name:<7}  {'/'.join(map(str, counts)):<16}  "
            f"{statistics.median(spent):.2f} ({min(spent):.2f}-{max(spent):.2f})     "
            f"{statistics.median(read):.2f} ({min(read):.2f}-{max(read):.2f})"
        )


if __name__ == "__main__":
    main()
