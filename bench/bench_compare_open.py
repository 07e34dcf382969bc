"""The two-run view's engine on two 200 MB runs, each start in a new process: what the view
does before its first aligned screen, and its peak memory.

``bench_tui_compare.py`` measures the view itself in a terminal, where a loaded machine mostly
measures Textual's start. This measures the reading it does, as the compare screen's worker
does it: both runs opened with ``RunFile``, the first slice of each read (``_FIRST`` of
``regista_tui.screens.compare``), the steps both begin with aligned (``aligned_head``): the
first aligned screen's rows. Then the rest read in slices and the whole alignment made
(``diff_files``). Each start is a new interpreter that imports what the view imports
(Textual included); it reports wall and CPU seconds from its start to the first aligned rows
and to the whole alignment, and its peak RSS (``VmHWM``). Run B is run A with a tool result
two thirds of the way through changed (see ``bench_tui_compare.py``).

    .venv/bin/python bench/bench_compare_open.py [--shape dense|sparse] [--starts 5]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
from pathlib import Path

from bench_tui_compare import changed_copy
from realistic import DIR, SHAPES, realistic_trace, trace_path

CHILD = """
import resource, sys, time
t0 = time.monotonic()
def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime
from regista.diff.runfile import RunFile
from regista.diff.runs import aligned_head, diff_files
from regista_tui.screens.compare import _FIRST, _SLICE
a, b = RunFile(sys.argv[1]), RunFile(sys.argv[2])
a.read(_FIRST); b.read(_FIRST)
head = aligned_head(a, b)
first, first_cpu, first_pairs = time.monotonic() - t0, cpu(), len(head.pairs)
while True:
    done = a.read(_SLICE)
    done = b.read(_SLICE) and done
    if done:
        break
    head = aligned_head(a, b, head)
diff = diff_files(a, b, settled=True)
whole, whole_cpu = time.monotonic() - t0, cpu()
hwm = next(x for x in open("/proc/self/status") if x.startswith("VmHWM")).split()[1]
print(first, first_cpu, whole, whole_cpu, int(hwm) / 1024, first_pairs, len(diff.pairs))
"""


def start(a: Path, b: Path) -> list[float]:
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(a), str(b)], capture_output=True, text=True, check=True
    )
    return [float(x) for x in out.stdout.split()]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--starts", type=int, default=5)
    parser.add_argument("--mb", type=float, default=200.0)
    parser.add_argument("--shape", choices=SHAPES, default=SHAPES[0])
    parser.add_argument("--dir", type=Path, default=DIR)
    args = parser.parse_args()
    args.dir.mkdir(parents=True, exist_ok=True)
    a = realistic_trace(trace_path(args.mb, args.shape, args.dir), args.mb, shape=args.shape)
    b = changed_copy(a, a.with_name(f"{a.stem}-late.jsonl"))
    print(f"A {a.name} {a.stat().st_size / 1e6:.0f} MB, B {b.name} {b.stat().st_size / 1e6:.0f} MB")
    runs = [start(a, b) for _ in range(args.starts)]
    first, first_cpu, whole, whole_cpu, rss, head, pairs = (
        statistics.median(col) for col in zip(*runs, strict=True)
    )
    print(
        f"  first aligned rows {first:.2f} s wall, {first_cpu:.2f} s CPU ({head:.0f} pairs); "
        f"whole alignment {whole:.2f} s wall, {whole_cpu:.2f} s CPU ({pairs:.0f} pairs); "
        f"peak RSS {rss:.0f} MB (medians of {args.starts} starts, each a new process)"
    )


if __name__ == "__main__":
    main()
