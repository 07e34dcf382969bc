"""Benchmark one growth of a followed Claude Code session whose subagent is running.

A session followed in the debugger (:func:`regista.importers.memory.follow`) calls ``Task``;
its subagent's transcript then grows by one exchange per growth. What a growth costs must
not depend on the session's size: the same subagent is followed beside a small session and
beside a large one (``--mb``), interleaved, and each growth's time (the index's ``scan``:
the folder listed, the subagent's appended lines converted and written, the session's file
looked at) is reported as the median of ``--growths`` growths per run, over ``--repeat``
runs, with the large session's ratio to the small one's (the floor).

    .venv/bin/python bench/bench_follow_subagent.py [--mb 50] [--growths 200] [--repeat 3]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from importers.cc_fixtures import CCSession, tool_use  # noqa: E402

from regista.importers.memory import follow  # noqa: E402


def _growths(mb: float, growths: int) -> list[float]:
    folder = Path(tempfile.mkdtemp(prefix="bench-follow-sub-"))
    s = CCSession()
    s.prompt("Read everything, then search")
    exchanges = max(1, int(mb * 1e6 / 2700))
    for i in range(exchanges):
        s.answer(tool_use(f"toolu_{i}", "Read", file_path="m" * 200), stop_reason="tool_use")
        s.tool_result(f"toolu_{i}", "x" * 2000)
    s.answer(tool_use("toolu_T", "Task", prompt="search", description="s"), stop_reason="tool_use")
    path = folder / f"{s.session_id}.jsonl"
    path.write_bytes(s.data())
    index = follow(path, path.read_bytes(), "claude-code")
    assert index is not None
    index.scan()
    c = CCSession(agent_id="a1b2c3d4", sidechain=True)
    c.prompt("search")
    sub = folder / s.session_id / "subagents" / "agent-a1b2c3d4.jsonl"
    sub.parent.mkdir(parents=True)
    sub.write_bytes(c.data())
    index.scan()
    times = []
    for k in range(growths):
        c.lines.clear()
        c.answer(tool_use(f"toolu_G{k}", "Grep", pattern="refund"), stop_reason="tool_use")
        c.tool_result(f"toolu_G{k}", "refund.py:2")
        with open(sub, "ab") as f:
            f.write(c.data())
        t = time.perf_counter()
        index.scan()
        times.append(time.perf_counter() - t)
    (run,) = index.streaming.job.followed
    assert run.builder is not None and run.builder.step == 2 * growths  # every step converted
    index.close()
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=50.0)
    parser.add_argument("--growths", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    small: list[float] = []
    large: list[float] = []
    for _ in range(args.repeat):  # interleaved
        small.append(statistics.median(_growths(0.5, args.growths)))
        large.append(statistics.median(_growths(args.mb, args.growths)))
    ms = [f"{x * 1e3:.3f}" for x in small]
    ml = [f"{x * 1e3:.3f}" for x in large]
    lo, hi = statistics.median(small), statistics.median(large)
    print(f"one growth, session of 0.5 MB: {lo * 1e3:.3f} ms (runs {ms})")
    print(f"one growth, session of {args.mb:g} MB: {hi * 1e3:.3f} ms (runs {ml})")
    print(f"ratio: {hi / lo:.2f}")


if __name__ == "__main__":
    main()
