"""The memory a trace's index holds, per GB of trace, and the debugger's first screen:
this tree against another (``--old DIR``: ``git archive main | tar -x -C DIR``).

A realistic Claude Code transcript of ``--mb`` MB (``bench/realistic_cc.py``) is
imported once into a regista trace. Then, interleaved (new, old, new, old, …) for
``--repeat`` rounds, each in a new process:

- ``index``: ``TraceIndex(trace).scan()`` to the end; the process's RSS after the scan
  minus before it (the index's lines and steps: what stays in memory while the debugger
  shows the trace), in MB and MB per GB of trace, and the scan's CPU seconds;
- ``first screen``: ``regista-tui TRANSCRIPT`` until its first screen is drawn (Textual's
  headless driver), CPU seconds of the whole process (``bench_import.FIRST_SCREEN``),
  on the transcript's first ``--screen-mb`` MB.

Medians and the spread (min-max) are printed: the machine is shared and noisy.

    .venv/bin/python bench/bench_index_memory.py --old /tmp/old [--mb 1000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_import import FIRST_SCREEN, make_real_transcript

ROOT = Path(__file__).resolve().parents[1]

IMPORT = """
import sys
from pathlib import Path
from regista.importers import import_runs
conv, files = import_runs("claude-code", Path(sys.argv[1]), Path(sys.argv[2]))
print(max(files, key=lambda f: f.stat().st_size))
"""

INDEX = """
import os, resource, sys, time
def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime
import regista.trace.events, regista.trace.lines, regista.trace.index
from regista.trace.index import TraceIndex
before, t = rss(), cpu()
index = TraceIndex(sys.argv[1])
index.scan()
assert regista.trace.index.__file__.startswith(sys.argv[2]), regista.trace.index.__file__
print(rss() - before, cpu() - t, len(index.steps), len(index.offsets))
"""


def _run(src: str, where: Path, *args: str) -> str:
    env = dict(os.environ, PYTHONPATH=str(where), PYTHONDONTWRITEBYTECODE="1")
    done = subprocess.run(
        [sys.executable, "-c", src, *args],
        check=True,
        capture_output=True,
        text=True,
        env=env,
        cwd=where,  # ``-c`` puts the working folder first on the path
    )
    return done.stdout


def _spread(values: list[float], fmt: str) -> str:
    mid, low, high = (format(v, fmt) for v in (statistics.median(values), min(values), max(values)))
    return f"{mid} ({low}-{high})"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=int, default=1000)
    ap.add_argument("--screen-mb", type=int, default=50)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--old", type=Path, required=True)
    ap.add_argument("--dir", type=Path, default=Path("/tmp/regista-bench"))
    args = ap.parse_args()
    args.dir.mkdir(parents=True, exist_ok=True)
    transcript = make_real_transcript(args.mb, args.dir)
    screen = make_real_transcript(args.screen_mb, args.dir)
    for path in (transcript, screen):  # not a session still being written: not followed
        os.utime(path, (path.stat().st_mtime - 600,) * 2)
    out = Path(tempfile.mkdtemp(dir=args.dir))
    trace = Path(_run(IMPORT, ROOT, str(transcript), str(out)).split()[-1])
    gb = trace.stat().st_size / 1e9
    versions = {"new": ROOT, "old": args.old}
    rss: dict[str, list[float]] = {v: [] for v in versions}
    scan: dict[str, list[float]] = {v: [] for v in versions}
    first: dict[str, list[float]] = {v: [] for v in versions}
    counts = ""
    for _ in range(args.repeat):
        for name, where in versions.items():
            held, cpu, steps, lines = _run(INDEX, where, str(trace), str(where)).split()
            rss[name].append(int(held) / 1e6)
            scan[name].append(float(cpu))
            counts = f"{int(steps):,} steps, {int(lines):,} lines"
            first[name].append(float(_run(FIRST_SCREEN, where, str(screen)).split()[-1]))
    print(f"trace: {trace.stat().st_size / 1e6:.0f} MB ({counts}) from a {args.mb} MB transcript")
    print("version  index RSS MB          MB per GB   scan CPU s         first screen CPU s")
    for name in versions:
        per_gb = [r / gb for r in rss[name]]
        print(
            f"{name:<7}  {_spread(rss[name], '.0f'):<20}  {statistics.median(per_gb):9.0f}   "
            f"{_spread(scan[name], '.2f'):<17}  {_spread(first[name], '.2f')}"
        )
    new, old = statistics.median(rss["new"]), statistics.median(rss["old"])
    print(f"index RSS new/old: {new / old:.2f}x")
    print(
        "first screen new/old: "
        f"{statistics.median(first['new']) / statistics.median(first['old']):.2f}x"
    )


if __name__ == "__main__":
    main()
