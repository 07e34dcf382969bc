"""The two-run view (``regista-tui A B``) on two realistic 200 MB traces, in tmux 120×40.

Run A is ``bench/realistic.py``'s trace; run B is a copy whose tool result two thirds of the
way through says something else (a replay or fork that went another way late). For each
start, interleaved with a bare Textual app's first screen (the peer):

- first aligned screen: seconds from starting the process until the pane shows aligned
  rows with the status line about them (the steps both runs begin with, or the first
  divergence);
- whole alignment: until the status line says where the first divergence is, with both
  files read;
- CPU time and peak RSS (``VmHWM``) of the process, read when it quits right after.

``--before DIR`` also starts the view from another source tree (e.g. ``git archive`` of an
older commit), interleaved, for a before / after ratio.

    .venv/bin/python bench/bench_tui_compare.py [--starts 3] [--dir /tmp/regista-bench]
"""

from __future__ import annotations

import argparse
import compileall
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import orjson
from bench_tui_peer import BARE, _kill, _start, _tmux
from realistic import DIR, SHAPES, realistic_trace, trace_path

#: Runs regista-tui from a source tree, and writes its CPU seconds and peak RSS on exit.
WRAPPER = """
import atexit, resource, sys
sys.path.insert(0, {root!r})
def _report():
    r = resource.getrusage(resource.RUSAGE_SELF)
    hwm = next(x for x in open("/proc/self/status") if x.startswith("VmHWM")).split()[1]
    open({out!r}, "w").write(f"{{r.ru_utime + r.ru_stime}} {{int(hwm) / 1024}}")
atexit.register(_report)
from regista_tui.__main__ import main
main([{a!r}, {b!r}])
"""

FIRST = ["begin with the same", "First divergence:", "step for step"]


def changed_copy(a: Path, b: Path) -> Path:
    """``a`` with the tool result two thirds of the way through changed (written once)."""
    if b.exists() and b.stat().st_mtime >= a.stat().st_mtime:
        return b
    lines = a.read_bytes().split(b"\n")[:-1]
    at = next(
        i
        for i in range(len(lines) * 2 // 3, len(lines))
        if b'"type":"tool.result"' in lines[i][:200]
    )
    event = orjson.loads(lines[at])
    event["content"] = "a different result: the tests fail in ledger/test_refund.py"
    lines[at] = orjson.dumps(event)
    part = b.with_suffix(".part")
    part.write_bytes(b"\n".join(lines) + b"\n")
    part.rename(b)
    return b


def _wait_any(name: str, needles: list[str], since: float, timeout: float = 120) -> float:
    while time.perf_counter() - since < timeout:
        out = _tmux("capture-pane", "-t", name, "-p")
        if any(n in out for n in needles):
            return time.perf_counter() - since
        time.sleep(0.002)
    raise RuntimeError(f"tmux: none of {needles} on screen after {timeout}s")


def _whole(name: str, since: float, timeout: float = 120) -> float:
    while time.perf_counter() - since < timeout:
        out = _tmux("capture-pane", "-t", name, "-p")
        if ("First divergence:" in out and "aligning" not in out) or "step for step" in out:
            return time.perf_counter() - since
        time.sleep(0.005)
    raise RuntimeError(f"tmux: no whole alignment after {timeout}s")


def view(root: Path, a: Path, b: Path, tag: str) -> tuple[float, float, float, float]:
    """(first aligned screen s, whole alignment s, CPU s, peak RSS MB) of one start."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "usage"
        script = Path(tmp) / "run.py"
        script.write_text(WRAPPER.format(root=str(root), out=str(out), a=str(a), b=str(b)))
        name = f"cmp{os.getpid()}-{tag}"
        t0 = _start(name, f"{sys.executable} {script}")
        try:
            first = _wait_any(name, FIRST, t0)
            whole = _whole(name, t0)
            subprocess.run(["tmux", "send-keys", "-t", name, "q"], check=True)
            deadline = time.perf_counter() + 30
            while not (out.exists() and out.read_text()) and time.perf_counter() < deadline:
                time.sleep(0.01)
        finally:
            _kill(name)
        cpu, rss = (float(x) for x in out.read_text().split())
    return first, whole, cpu, rss


def bare_first(tag: str) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        bare = Path(tmp) / "bare.py"
        bare.write_text(BARE)
        name = f"cmp{os.getpid()}-{tag}"
        t0 = _start(name, f"{sys.executable} {bare}")
        try:
            return _wait_any(name, ["row 29 of the bare app"], t0)
        finally:
            _kill(name)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--starts", type=int, default=3)
    parser.add_argument("--mb", type=float, default=200.0)
    parser.add_argument("--dir", type=Path, default=DIR)
    parser.add_argument("--before", type=Path, default=None, help="an older source tree")
    parser.add_argument("--shape", choices=SHAPES, default=SHAPES[0])
    args = parser.parse_args()
    args.dir.mkdir(parents=True, exist_ok=True)
    a = realistic_trace(trace_path(args.mb, args.shape, args.dir), args.mb, shape=args.shape)
    b = changed_copy(a, a.with_name(f"{a.stem}-late.jsonl"))
    root = Path(__file__).resolve().parent.parent
    trees = {"now": root}
    if args.before is not None:
        trees["before"] = args.before.resolve()
    for tree in trees.values():
        for package in ("regista", "regista_tui"):  # bytecode as after an install
            compileall.compile_dir(tree / package, quiet=1)
    print(f"A {a.name} {a.stat().st_size / 1e6:.0f} MB, B {b.name} {b.stat().st_size / 1e6:.0f} MB")
    results: dict[str, list[tuple[float, float, float, float]]] = {k: [] for k in trees}
    peer = []
    for i in range(args.starts):
        peer.append(bare_first(f"p{i}"))
        for label, tree in trees.items():
            results[label].append(view(tree, a, b, f"{label}{i}"))
    p = statistics.median(peer)
    print(f"bare Textual app, first screen: {p:.2f} s")
    for label, rows in results.items():
        first, whole, cpu, rss = (statistics.median(col) for col in zip(*rows, strict=True))
        print(
            f"{label:>6}: first aligned screen {first:.2f} s ({first / p:.1f}x the bare app), "
            f"whole alignment {whole:.2f} s, CPU {cpu:.2f} s, peak RSS {rss:.0f} MB"
        )


if __name__ == "__main__":
    main()
