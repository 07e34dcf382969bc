"""``regista diff`` on a run whose tool name is 5 MB, as a ratio to reading the two traces.

The floor is ``Trace.load`` of both files (what any diff must do); the figure is the whole
``regista diff`` command (load, align, compare, lay out for the terminal), run in-process,
interleaved with the floor, median of N rounds::

    python bench/bench_diff_huge.py [ROUNDS]
"""

from __future__ import annotations

import contextlib
import io
import statistics
import sys
import tempfile
import time
from pathlib import Path

import orjson

from regista.cli.main import main
from regista.trace.reader import Trace

SAMPLE = Path(__file__).parents[1] / "sample_traces" / "refund_happy.jsonl"


def _huge(folder: Path) -> Path:
    out = []
    for raw in SAMPLE.read_bytes().split(b"\n")[:-1]:
        event = orjson.loads(raw)
        if event["type"] == "tool.call" and event["step"] == 1:
            event["name"] = "n" * 5_000_000
        out.append(orjson.dumps(event))
    path = folder / "huge.jsonl"
    path.write_bytes(b"\n".join(out) + b"\n")
    return path


def main_bench(rounds: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        huge = _huge(Path(tmp))
        floor, figure = [], []
        for _ in range(rounds):
            t0 = time.perf_counter()
            Trace.load(SAMPLE), Trace.load(huge)
            floor.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            with contextlib.redirect_stdout(io.StringIO()):
                main(["diff", str(SAMPLE), str(huge)])
            figure.append(time.perf_counter() - t0)
        f, d = statistics.median(floor), statistics.median(figure)
        print(f"load both: {f * 1000:.1f} ms; regista diff: {d * 1000:.1f} ms = {d / f:.2f}x")


if __name__ == "__main__":
    main_bench(int(sys.argv[1]) if len(sys.argv) > 1 else 7)
