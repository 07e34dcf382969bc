"""Benchmark how fast ``regista --help`` and a command's ``--help`` answer.

Each run is a new process, as a person types it; the floor is the same interpreter doing
nothing (``python -c pass``), measured interleaved in the same run. Reports medians and
their ratio to the floor.

    .venv/bin/python bench/bench_cli_start.py [--repeat 15]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time


def _timed(argv: list[str]) -> float:
    t = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - t


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()
    runs = {
        "python -c pass (floor)": [sys.executable, "-c", "pass"],
        "regista --help": [sys.executable, "-m", "regista", "--help"],
        "regista fork --help": [sys.executable, "-m", "regista", "fork", "--help"],
        "regista show --help": [sys.executable, "-m", "regista", "show", "--help"],
    }
    times: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(args.repeat):
        for name, argv in runs.items():  # interleaved: noise hits every row alike
            times[name].append(_timed(argv))
    floor = statistics.median(times["python -c pass (floor)"])
    for name, ts in times.items():
        med = statistics.median(ts)
        print(f"{name:28s} median {med * 1000:7.1f} ms   {med / floor:5.2f}x floor")


if __name__ == "__main__":
    main()
