"""The debugger's first screen on a 50 MB Claude Code transcript, as a ratio to a floor.

The transcript is the import benches' realistic one (``bench/realistic_cc.py``: distinct ids,
long tool results, progress lines); ``--simple`` takes the first, simpler one.

``regista-tui SESSION.jsonl`` in a new process until its first screen is drawn (Textual's
headless driver): CPU seconds of the whole process (user + system; on a shared machine the
wall clock mostly measures the other processes), medians over ``--repeat`` rounds, each
measured interleaved with the floor: a new process that imports the debugger and draws an
empty Textual app. Two rows: a finished transcript (last written an hour ago), and one
still being written (written just now: followed as it grows, with no end).

The target is printed with the figures: the first screen under 1 s.

    .venv/bin/python bench/bench_tui_transcript.py [--mb 50] [--repeat 5] [--simple]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_import import (
    FIRST_SCREEN,
    FLOOR_SCREEN,
    make_real_transcript,
    make_transcript,
    subprocess_wall,
    timed,
)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=int, default=50)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--simple", action="store_true", help="the first, simpler transcript")
    args = ap.parse_args()
    made = make_transcript(args.mb) if args.simple else make_real_transcript(args.mb)
    finished = made.with_name(f"{made.stem}-finished.jsonl")
    live = made.with_name(f"{made.stem}-live.jsonl")
    for path in (finished, live):
        if not path.exists():
            shutil.copyfile(made, path)
    mb = made.stat().st_size / 1e6
    print(f"transcript: {made} ({mb:.1f} MB)")
    floor = subprocess_wall(FLOOR_SCREEN)
    for name, path, age in (("finished", finished, 3600.0), ("being written", live, 0.0)):
        times, floors = [], []
        for _ in range(args.repeat):
            then = time.time() - age
            os.utime(path, (then, then))
            floors.append(timed(floor, wall=True))
            times.append(timed(subprocess_wall(FIRST_SCREEN, str(path)), wall=True))
        t, f = statistics.median(times), statistics.median(floors)
        print(
            f"first screen, {name:<13} {t:6.3f} s   floor {f:6.3f} s   ratio {t / f:5.2f}x"
            "   target < 1 s"
        )


if __name__ == "__main__":
    main()
