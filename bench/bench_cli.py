"""Benchmark the ``regista`` commands that read a whole trace, on a 200 MB one.

Times, as a person would run them (a new process each, output to a pipe):
``regista show`` (summary and the table of 20,000 steps), ``regista diff`` of the trace with a
copy of itself, and ``regista export --console``; plus ``Trace.load`` in this process. The
trace is the one ``bench_tui.py`` generates (``/tmp/regista-bench/big-20000.jsonl``), made
here if it is missing.

    .venv/bin/python bench/bench_cli.py [--dir /tmp/regista-bench] [--repeat 3]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

from bench_tui import generate

from regista.trace.reader import Trace


def _timed(argv: list[str]) -> float:
    t = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - t


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--dir", type=Path, default=Path("/tmp/regista-bench"))
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    args.dir.mkdir(parents=True, exist_ok=True)
    big = args.dir / "big-20000.jsonl"
    generate(big, 20_000, 9_500)
    copy = args.dir / "big-copy.jsonl"
    if not copy.exists():
        shutil.copyfile(big, copy)
    regista = str(Path(sys.executable).with_name("regista"))
    print(f"{big.name}: {big.stat().st_size / 1e6:.0f} MB")

    loads = []
    for _ in range(args.repeat):
        t = time.perf_counter()
        Trace.load(big)
        loads.append(time.perf_counter() - t)
    print(f"  {'Trace.load':28} {statistics.median(loads):7.2f} s")
    for label, argv in [
        ("regista show", [regista, "show", str(big)]),
        ("regista diff (same run)", [regista, "diff", str(big), str(copy)]),
        ("regista export --console", [regista, "export", str(big), "--console"]),
    ]:
        times = [_timed(argv) for _ in range(args.repeat)]
        print(f"  {label:28} {statistics.median(times):7.2f} s")


if __name__ == "__main__":
    main()
