"""regista-tui beside a bare Textual app, in a real terminal (tmux 120×40), interleaved.

- First screen: seconds from starting the process until its first screen is in
  ``tmux capture-pane`` (regista-tui on the realistic 200 MB trace: its header and the
  timeline; the bare app: a header, a list of 30 lines and a footer).
- Step move: one key press at a time, the screen settled between presses; milliseconds
  from ``send-keys`` until the pane shows the move (regista-tui: the step counter in the
  timeline's title, and the step view redrawn after its settle delay counts as part of the
  move; the bare app: a counter in a label that the key press updates, and the cursor of
  an ``OptionList`` of 1,000 lines, Textual's own list of many lines, which moves with it:
  after the first screenful both lists scroll).
  Both apps run at once and take their presses in turn, as many each. Median and p95, and
  the same for each stretch of 40 presses (the first ones move within the first screen).

The bare app pays the same terminal, tmux and polling costs: the ratios are what regista
adds. Made with ``bench/realistic.py`` if missing.

``--before DIR`` also runs regista-tui from another source tree (e.g. ``git archive`` of an
older commit) in turn with the two, for a before / after of each ratio.

    .venv/bin/python bench/bench_tui_peer.py [--starts 7] [--moves 160] [--before DIR]
"""

from __future__ import annotations

import argparse
import atexit
import compileall
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from realistic import SHAPES, realistic_trace, trace_path

BARE = """
import sys

from textual.app import App
from textual.widgets import Footer, Header, Label, OptionList


class Bare(App[None]):
    CSS = "OptionList { height: 1fr; }"
    BINDINGS = [("j", "down", "Down"), ("k", "up", "Up"), ("q", "quit", "Quit")]

    def compose(self):
        yield Header()
        yield Label(f"Steps · 1/{ROWS}", id="where")
        yield OptionList(*(f"row {i} of the bare app" for i in range(ROWS)))
        yield Footer()

    def on_mount(self):
        self.n = 1
        self.query_one(OptionList).highlighted = 0

    def action_down(self):
        self.n += 1
        self.query_one("#where", Label).update(f"Steps · {self.n}/{ROWS}")
        self.query_one(OptionList).action_cursor_down()

    def action_up(self):
        self.n -= 1
        self.query_one("#where", Label).update(f"Steps · {self.n}/{ROWS}")
        self.query_one(OptionList).action_cursor_up()


ROWS = int(sys.argv[1]) if len(sys.argv) > 1 else 30
Bare().run()
"""


def _tmux(*args: str) -> str:
    return subprocess.run(["tmux", *args], capture_output=True, text=True).stdout


def _start(name: str, command: str) -> float:
    for _ in range(3):  # a tmux server that is just exiting refuses the first try
        t0 = time.perf_counter()
        done = subprocess.run(
            ["tmux", "new-session", "-d", "-s", name, "-x", "120", "-y", "40", command],
            capture_output=True,
        )
        if done.returncode == 0:
            return t0
        time.sleep(0.2)
    raise RuntimeError(f"tmux: {done.stderr.decode().strip()}")


def _wait(name: str, needles: list[str], since: float, timeout: float = 30) -> float:
    while time.perf_counter() - since < timeout:
        out = _tmux("capture-pane", "-t", name, "-p")
        if all(n in out for n in needles):
            return time.perf_counter() - since
        time.sleep(0.001)
    raise RuntimeError(f"tmux: {needles} not on screen after {timeout}s")


def _kill(name: str) -> None:
    subprocess.run(["tmux", "kill-session", "-t", name], check=False, capture_output=True)


def first_screen(command: str, needles: list[str], tag: str) -> float:
    name = f"peer{os.getpid()}-{tag}"
    t0 = _start(name, command)
    try:
        return _wait(name, needles, t0)
    finally:
        _kill(name)


def moves(apps: list[tuple[str, list[str], list[str]]], count: int) -> list[list[float]]:
    """Milliseconds per single ``j`` press, for each app (its command, what shows when it
    is ready, and what shows when the ``i``-th press is done: formatted with the 1-based
    position ``n`` and the ``step`` number), the apps pressed in turn."""
    names = [f"peer{os.getpid()}-m{k}" for k in range(len(apps))]
    out: list[list[float]] = [[] for _ in apps]
    try:
        for name, (command, ready, _) in zip(names, apps, strict=True):
            _wait(name, ready, _start(name, command))
        time.sleep(1.5)  # the background index scan
        for i in range(count):
            for k, (name, (_, _, where)) in enumerate(zip(names, apps, strict=True)):
                t = time.perf_counter()
                subprocess.run(["tmux", "send-keys", "-t", name, "j"], check=True)
                _wait(name, [w.format(n=i + 2, step=i + 1) for w in where], t)
                out[k].append((time.perf_counter() - t) * 1000)
                time.sleep(0.15)  # settled: a person reads before the next press
    finally:
        for name in names:
            _kill(name)
    return out


def _p95(values: list[float]) -> float:
    return sorted(values)[max(0, round(0.95 * len(values)) - 1)]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--starts", type=int, default=7)
    parser.add_argument("--moves", type=int, default=160)
    parser.add_argument("--mb", type=float, default=200.0)
    parser.add_argument("--shape", choices=SHAPES, default=SHAPES[0])
    parser.add_argument("--before", type=Path, default=None, help="an older source tree")
    args = parser.parse_args()
    path = realistic_trace(trace_path(args.mb, args.shape), args.mb, shape=args.shape)
    root = Path(__file__).resolve().parent.parent
    for tree in (root, args.before) if args.before else (root,):
        for package in ("regista", "regista_tui"):  # bytecode as after an install
            compileall.compile_dir(tree / package, quiet=1)
    # its own folder: benches run side by side must not share (and rewrite) one copy
    bare = Path(tempfile.mkdtemp(prefix="regista-bare-")) / "bare_app.py"
    atexit.register(shutil.rmtree, bare.parent, True)
    bare.write_text(BARE)
    tui = f"{Path(sys.executable).with_name('regista-tui')} {path}"
    peer = f"{sys.executable} {bare}"
    from regista.trace.index import TraceIndex

    index = TraceIndex(path)
    index.scan()
    steps = len(index)
    marker = index.start.task[:20] if index.start else "Steps"
    index.close()
    print(f"{path.name}: {path.stat().st_size / 1e6:.0f} MB, {steps} steps")

    tuis = {"now": tui}
    if args.before is not None:
        tuis["before"] = f"env PYTHONPATH={args.before.resolve()} {tui}"
    theirs: list[float] = []
    ours: dict[str, list[float]] = {label: [] for label in tuis}
    for i in range(args.starts):
        theirs.append(first_screen(peer, ["row 29 of the bare app"], f"b{i}"))
        # Each start in the other order: the first regista-tui after the bare app warms
        # what the second then finds warm.
        for label, command in list(tuis.items())[:: 1 if i % 2 else -1]:
            ours[label].append(first_screen(command, [marker, "Steps"], f"r{label}{i}"))
    b = statistics.median(theirs)
    for label, times in ours.items():
        r = statistics.median(times)
        print(f"  first screen {label:>6} regista-tui {r:6.3f} s   bare {b:6.3f} s   {r / b:5.2f}×")

    rows = 1000
    # The move is done when the timeline's counter and the step view's title both say so.
    done = ["· {n}/" + str(steps), "Step {step} ·"]
    apps = [(command, [marker, "Steps"], done) for command in tuis.values()]
    apps.append((f"{peer} {rows}", ["row 29"], ["Steps · {n}/" + str(rows)]))
    *results, bm = moves(apps, min(args.moves, rows - 1))
    for label, rm in zip(tuis, results, strict=True):
        for a in range(0, len(rm), 40):
            r, bb = rm[a : a + 40], bm[a : a + 40]
            mr, mb = statistics.median(r), statistics.median(bb)
            print(
                f"  {label:>6} presses {a + 1:>3}-{a + len(r):<3}  median {mr:5.1f} / {mb:5.1f} ms"
                f"  {mr / mb:4.2f}×   p95 {_p95(r):5.1f} / {_p95(bb):5.1f} ms"
                f"  {_p95(r) / _p95(bb):4.2f}×"
            )
        for name, f in (("median", statistics.median), ("p95", _p95)):
            r, bv = f(rm), f(bm)
            print(
                f"  {label:>6} move {name:6} regista-tui {r:6.1f} ms  bare app {bv:6.1f} ms"
                f"  {r / bv:5.2f}×"
            )


if __name__ == "__main__":
    main()
