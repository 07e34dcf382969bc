"""Reading a realistic 200 MB trace, each figure as a ratio to its floor in the same run.

Times are CPU time (user + system, children included): on a machine shared with other work
the wall clock mostly measures the others. The floor is ``orjson.loads`` of every line (the
file read and split included): what any reader of the trace must at least pay. The rows,
measured interleaved with the floor (floor, row, floor, row, …) and reported as medians:

- ``open+summary``: ``read_summary(path)`` (what ``Trace.load(path).summary()`` says);
- ``full decode``: every step of the trace, decoded and validated (the clock stops before
  the trace is dropped);
- ``free decoded``: dropping that trace, until its memory is freed (a collection included);
- ``regista show``: the command in a new process, output to a pipe (the floor here is
  ``python -c 'orjson.loads of every line'`` in a new process too);
- ``diff_runs``: two 10k-step runs, loading included (floor: ``orjson.loads`` of both);
- ``tui search``: the first match of a common word, from an index that is fully scanned
  (``search_steps`` alone, against the floor), and in regista-tui (headless, 120×40): wall
  seconds from Enter in the search prompt until the status line names the first match,
  while the search goes on counting the others in its thread.

The trace is made by ``bench/realistic.py`` (by the real agent loop) if it is missing.

    .venv/bin/python bench/bench_read.py [--mb 200] [--repeat 5] [--only ROW,ROW]
"""

from __future__ import annotations

import argparse
import gc
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import orjson
from realistic import DIR, SHAPES, realistic_trace, trace_path

FLOOR_SRC = "import orjson,sys\nfor line in open(sys.argv[1],'rb').read().split(b'\\n'):\n" + (
    "    line and orjson.loads(line)\n"
)


def floor(path: Path) -> None:
    for line in path.read_bytes().split(b"\n"):
        if line:
            orjson.loads(line)


def _cpu() -> float:
    """CPU seconds of this process and of its finished children (on a shared machine the
    wall clock mostly measures the other processes)."""
    me, kids = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def _timed(fn: Callable[[], object]) -> float:
    gc.collect()
    t = _cpu()
    kept = fn()
    took = _cpu() - t
    del kept  # a decoded trace is freed after the clock stops: ``free`` times that apart
    return took


def interleaved(row: Callable[[], object], base: Callable[[], object], repeat: int) -> str:
    """``row`` and ``base`` timed alternately; the medians and their ratio."""
    rows, bases = [], []
    for _ in range(repeat):
        bases.append(_timed(base))
        rows.append(_timed(row))
    r, b = statistics.median(rows), statistics.median(bases)
    return f"{r:7.3f} s   floor {b:7.3f} s   {r / b:5.2f}×   (CPU time, median of {repeat})"


def _run(argv: list[str]) -> None:
    subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, check=False)


def row_summary(path: Path) -> Callable[[], object]:
    from regista.trace.index import read_summary

    return lambda: read_summary(path)


def row_decode(path: Path) -> Callable[[], object]:
    from regista.trace.reader import Trace

    def decode() -> Trace:
        trace = Trace.load(path)
        for step in trace.steps():
            step.events  # noqa: B018
        return trace  # kept until the clock stops

    return decode


def row_free(path: Path, repeat: int) -> str:
    """CPU seconds to free a decoded trace once dropped (a collection included: a trace
    whose objects made reference cycles is freed only by the cyclic collector)."""
    decode, times = row_decode(path), []
    for _ in range(repeat):
        trace = decode()
        gc.collect()
        t = _cpu()
        del trace
        gc.collect()
        times.append(_cpu() - t)
    return f"{statistics.median(times):7.3f} s   (CPU time, median of {repeat})"


def row_show(path: Path) -> tuple[Callable[[], object], Callable[[], object]]:
    regista = str(Path(sys.executable).with_name("regista"))
    return (
        lambda: _run([regista, "show", str(path)]),
        lambda: _run([sys.executable, "-c", FLOOR_SRC, str(path)]),
    )


def row_diff(repeat: int) -> str:
    sys.path.insert(0, str(Path(__file__).parent))
    from bench_diff import build_pair
    from realistic import current_schema

    from regista.diff import diff_runs

    folder = DIR / "diff-10k"
    a, b = folder / "a.jsonl", folder / "b.jsonl"
    if not (a.exists() and b.exists() and current_schema(a) and current_schema(b)):
        folder.mkdir(parents=True, exist_ok=True)
        build_pair(folder, 10_000)

    def run() -> None:
        diff_runs(a, b)  # as `regista diff A B` does: each file read once

    return interleaved(run, lambda: (floor(a), floor(b)), repeat)


def row_search(path: Path, word: str) -> Callable[[], object]:
    from regista.trace.index import TraceIndex
    from regista_tui.search import search_steps

    index = TraceIndex(path)
    index.scan()

    class Found(Exception):
        pass

    def first(pos: int) -> None:
        raise Found

    def search() -> None:
        try:
            search_steps(index, word, start=len(index) // 3, on_first=first)
        except Found:
            return
        raise AssertionError(f"no step shows {word!r}")

    return search


def tui_search(path: Path, word: str, repeat: int) -> str:
    """Wall seconds from Enter in the search prompt to the first match in the status line."""
    import asyncio

    from textual.widgets import Static

    from regista_tui.__main__ import open_index
    from regista_tui.app import RegistaApp

    async def run() -> list[float]:
        index, notice = open_index(path)
        app = RegistaApp(index, notice=notice)
        out = []
        async with app.run_test(size=(120, 40)) as pilot:
            await app.workers.wait_for_complete()  # the background index scan
            browser = app.screen
            for i in range(repeat):
                await pilot.press("end" if i % 2 else "home", "slash", *word)
                await pilot.pause(0.2)
                status = browser.query_one("#status", Static)
                t = time.perf_counter()
                pressed = asyncio.create_task(pilot.press("enter"))  # it waits for idle
                while "counting" not in str(status.content):
                    await asyncio.sleep(0.002)
                out.append(time.perf_counter() - t)
                await pressed
                await app.workers.wait_for_complete()
        return out

    times = asyncio.run(run())
    return (
        f"{statistics.median(times):7.3f} s to the first match on screen (wall, median of {repeat})"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mb", type=float, default=200.0)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--only", default="summary,decode,show,diff,search")
    parser.add_argument("--shape", choices=SHAPES, default=SHAPES[0])
    args = parser.parse_args()
    DIR.mkdir(parents=True, exist_ok=True)
    path = realistic_trace(trace_path(args.mb, args.shape), args.mb, shape=args.shape)
    print(f"{path.name}: {path.stat().st_size / 1e6:.0f} MB")
    only = set(args.only.split(","))
    base = lambda: floor(path)  # noqa: E731
    if "summary" in only:
        print(f"  {'open+summary':16}", interleaved(row_summary(path), base, args.repeat))
    if "decode" in only:
        print(f"  {'full decode':16}", interleaved(row_decode(path), base, args.repeat))
        print(f"  {'free decoded':16}", row_free(path, args.repeat))
    if "show" in only:
        show, show_floor = row_show(path)
        print(f"  {'regista show':16}", interleaved(show, show_floor, args.repeat))
    if "diff" in only:
        print(f"  {'diff_runs 10k':16}", row_diff(args.repeat))
    if "search" in only:
        print(f"  {'search_steps':16}", interleaved(row_search(path, "deploy"), base, args.repeat))
        print(f"  {'tui search':16}", tui_search(path, "deploy", args.repeat))


if __name__ == "__main__":
    main()
