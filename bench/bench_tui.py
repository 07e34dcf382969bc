"""Benchmarks of regista-tui on big traces: time to first screen and time per step move.

Run: ``python bench/bench_tui.py [--dir DIR] [--steps 20000] [--tmux]``.

Two traces are generated (written with ``TraceWriter`` directly, for speed): about 200 MB
in about 20,000 steps, and a trace of very long lines (requests and tool results of
hundreds of KB). Each is opened headless with ``App.run_test()`` (time until the browser
shows its first step; then the mean and worst time of 300 step moves), and with
``--tmux`` in a real terminal: the time from starting ``regista-tui`` until its header
and timeline appear in ``tmux capture-pane`` (median and worst of 7 starts), and the mean
time per step move. The sample trace is measured the same way.
"""

from __future__ import annotations

import argparse
import asyncio
import compileall
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from regista.trace.events import (
    LlmRequestEvent,
    LlmResponseEvent,
    PermissionDecision,
    SessionEnd,
    SessionStart,
    ToolCall,
    ToolResult,
)
from regista.trace.index import TraceIndex
from regista.trace.writer import TraceWriter

TASK = "Benchmark task: reconcile the ledger"


def generate(path: Path, steps: int, text_size: int) -> None:
    """A session of ``steps`` steps (model call, tool call, …) with ``text_size`` payloads."""
    if path.exists():
        return
    filler = ("lorem ipsum dolor sit amet " * (text_size // 27 + 1))[:text_size]
    sid = "01BENCH" + "0" * 19
    with TraceWriter(path, sid) as w:
        w.write(SessionStart, task=TASK, model="claude-sonnet-4-6", provider="anthropic")
        n_messages = 1
        for step in range(0, steps, 2):
            turn = step // 2
            new = [{"role": "user", "content": [{"type": "text", "text": f"{turn} {filler}"}]}]
            w.write(
                LlmRequestEvent,
                step=step,
                turn=turn,
                request_hash="0" * 64,
                model="claude-sonnet-4-6",
                max_tokens=4096,
                messages_prefix=max(0, n_messages - 1),
                messages=new,
            )
            use = {
                "type": "tool_use",
                "id": f"toolu_{step}",
                "name": "ledger",
                "input": {"row": step},
            }
            w.write(
                LlmResponseEvent,
                step=step,
                turn=turn,
                provider="anthropic",
                response={
                    "content": [{"type": "text", "text": f"step {step}"}, use],
                    "stop_reason": "tool_use",
                    "usage": {"input_tokens": 1000, "output_tokens": 50},
                },
                duration_ms=812.0,
                cost_usd=0.001,
            )
            n_messages += 2
            w.write(
                ToolCall,
                step=step + 1,
                turn=turn,
                tool_use_id=f"toolu_{step}",
                name="ledger",
                input={"row": step},
            )
            w.write(PermissionDecision, step=step + 1, tool_use_id=f"toolu_{step}", allowed=True)
            w.write(
                ToolResult,
                step=step + 1,
                tool_use_id=f"toolu_{step}",
                name="ledger",
                content=filler,
                is_error=step % 997 == 0,
                duration_ms=3.0,
            )
        w.write(
            SessionEnd, stop_reason="end_turn", turns=steps // 2, steps=steps, tool_calls=steps // 2
        )


async def headless(path: Path, moves: int = 300) -> dict[str, float]:
    """Time to first screen and per-move times, with the app running headless."""
    from regista_tui.__main__ import open_index
    from regista_tui.app import RegistaApp
    from regista_tui.widgets.timeline.timeline import Timeline

    t0 = time.perf_counter()
    index, notice = open_index(path)
    app = RegistaApp(index, notice=notice)
    async with app.run_test(size=(120, 40)) as pilot:
        while not app.screen.query(Timeline):
            await asyncio.sleep(0.001)
        first = time.perf_counter() - t0
        await pilot.pause()
        await app.workers.wait_for_complete()  # the background index scan
        indexed = time.perf_counter() - t0
        timeline = app.screen.query_one(Timeline)
        handler: list[float] = []
        for i in range(moves):
            # A key through the pilot first (it waits for the app to idle, so its own round
            # trip, with the step view's settle delay, is not a measure of the move).
            await pilot.press("j" if i < moves * 2 // 3 else "k")
            t = time.perf_counter()
            timeline.action_cursor_down()  # the move itself, without the pilot's round trip
            for y in range(timeline.size.height):
                timeline.render_line(y)
            handler.append(time.perf_counter() - t)
        return {
            "headless_first_screen_s": first,
            "full_index_s": indexed,
            "steps": float(len(index)),
            "move_handler_mean_ms": statistics.mean(handler) * 1000,
            "move_handler_max_ms": max(handler) * 1000,
        }


def _tmux(*args: str) -> str:
    return subprocess.run(["tmux", *args], capture_output=True, text=True).stdout


def _start_in_tmux(name: str, command: str) -> float:
    """Start ``command`` in a new 120×40 tmux session; the perf_counter time it started."""
    for _ in range(3):  # a tmux server that is just exiting refuses the first try
        t0 = time.perf_counter()
        started = subprocess.run(
            ["tmux", "new-session", "-d", "-s", name, "-x", "120", "-y", "40", command],
            capture_output=True,
        )
        if started.returncode == 0:
            return t0
        time.sleep(0.2)
    raise RuntimeError(f"tmux: {started.stderr.decode().strip()}")


def _wait_for(name: str, *needles: str, since: float, timeout: float = 30) -> float:
    """Poll the pane until it shows every needle; seconds since ``since``."""
    while time.perf_counter() - since < timeout:
        out = _tmux("capture-pane", "-t", name, "-p")
        if all(n in out for n in needles):
            return time.perf_counter() - since
        time.sleep(0.002)
    raise RuntimeError(f"tmux: {needles} not on screen after {timeout}s")


def tmux_first_screen(path: Path, marker: str, runs: int = 7) -> list[float]:
    """In a real terminal (tmux, 120×40): seconds from starting ``regista-tui`` until its
    first screen (the header's ``marker`` and the timeline) is on screen, ``runs`` times."""
    exe = Path(sys.executable).with_name("regista-tui")
    times = []
    for i in range(runs):
        name = f"bench{os.getpid()}-{i}"
        t0 = _start_in_tmux(name, f"{exe} {path}")
        try:
            times.append(_wait_for(name, marker, "Steps", since=t0))
        finally:
            subprocess.run(["tmux", "kill-session", "-t", name], check=False)
        time.sleep(0.1)
    return times


def tmux_moves(path: Path, marker: str, moves: int = 150) -> float:
    """In a real terminal: mean milliseconds per step move, over ``moves`` presses of ``j``
    sent at once (until the timeline says it is on the last one)."""
    exe = Path(sys.executable).with_name("regista-tui")
    name = f"bench{os.getpid()}-moves"
    t0 = _start_in_tmux(name, f"{exe} {path}")
    try:
        _wait_for(name, marker, "Steps", since=t0)
        time.sleep(1.0)  # let the index finish
        t1 = time.perf_counter()
        subprocess.run(["tmux", "send-keys", "-t", name, *(["j"] * moves)], check=True)
        _wait_for(name, f"· {moves + 1}/", since=t1, timeout=60)
        return (time.perf_counter() - t1) * 1000 / moves
    finally:
        subprocess.run(["tmux", "kill-session", "-t", name], check=False)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--dir", type=Path, default=Path("/tmp/regista-bench"))
    parser.add_argument("--steps", type=int, default=20_000)
    parser.add_argument("--tmux", action="store_true")
    args = parser.parse_args()
    args.dir.mkdir(parents=True, exist_ok=True)
    big = args.dir / f"big-{args.steps}.jsonl"
    long = args.dir / "long-lines.jsonl"
    t = time.perf_counter()
    generate(big, args.steps, 9_500)
    generate(long, 200, 400_000)
    print(f"generated in {time.perf_counter() - t:.1f}s")
    if args.tmux:
        # Bytecode as after an install or a first run (pip compiles a wheel's modules; an
        # editable install compiles them on first import, unless PYTHONDONTWRITEBYTECODE).
        root = Path(__file__).resolve().parent.parent
        for package in ("regista", "regista_tui"):
            compileall.compile_dir(root / package, quiet=1)
    sample = Path(__file__).resolve().parent.parent / "sample_traces" / "refund_search_loop.jsonl"
    for path in (big, long, sample):
        size = path.stat().st_size / 1e6
        print(f"\n{path.name}: {size:.1f} MB")
        t = time.perf_counter()
        index = TraceIndex(path)
        index.scan()
        print(f"  {'index_whole_file_s':24} {time.perf_counter() - t:10.3f}")
        marker = index.start.task[:20] if index.start is not None else "Steps"
        moves = min(150, len(index) - 1)
        index.close()
        for key, value in asyncio.run(headless(path)).items():
            print(f"  {key:24} {value:10.3f}")
        if args.tmux:
            firsts = tmux_first_screen(path, marker)
            print(f"  {'tmux_first_screen_med_s':24} {statistics.median(firsts):10.3f}")
            print(f"  {'tmux_first_screen_max_s':24} {max(firsts):10.3f}")
            print(f"  {'tmux_move_mean_ms':24} {tmux_moves(path, marker, moves):10.3f}")


if __name__ == "__main__":
    main()
