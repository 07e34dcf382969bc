"""Benchmark regista-tui's CPU use while it shows a trace that is not growing.

A session with no ``session.end`` is followed for what it may still append; while the file
is still, that must cost (almost) nothing. Measured in a real terminal (tmux, 120×40): the
CPU time the process uses over ``--seconds`` once its first screen is up, beside a bare
Textual app doing nothing (the floor), interleaved, median of ``--repeat`` runs.

    .venv/bin/python bench/bench_tui_idle.py [--seconds 10] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BARE = "from textual.app import App\nApp().run()\n"


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _idle_cpu(command: list[str], seconds: float) -> float:
    """Fraction of one core ``command`` uses over ``seconds``, after 4 s to settle."""
    session = f"regista-idle-{os.getpid()}"
    subprocess.run(
        ["tmux", "new-session", "-d", "-s", session, "-x", "120", "-y", "40", *command],
        check=True,
    )
    try:
        time.sleep(4)
        pid = int(
            subprocess.run(
                ["tmux", "list-panes", "-t", session, "-F", "#{pane_pid}"],
                capture_output=True,
                text=True,
                check=True,
            ).stdout.split()[0]
        )
        before = _cpu_seconds(pid)
        time.sleep(seconds)
        return (_cpu_seconds(pid) - before) / seconds
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session], check=False)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    if shutil.which("tmux") is None:
        sys.exit("bench_tui_idle needs tmux")
    with tempfile.TemporaryDirectory() as tmp:
        lines = (ROOT / "sample_traces" / "refund_happy.jsonl").read_bytes().splitlines(True)
        cut = Path(tmp) / "crashed.jsonl"
        cut.write_bytes(b"".join(lines[:10]) + lines[10][:200])  # no session.end, half a line
        bare = Path(tmp) / "bare.py"
        bare.write_text(BARE)
        runs = {
            "bare Textual app (floor)": [sys.executable, str(bare)],
            "regista-tui, unfinished trace": [sys.executable, "-m", "regista_tui", str(cut)],
        }
        cpu: dict[str, list[float]] = {name: [] for name in runs}
        for _ in range(args.repeat):
            for name, command in runs.items():  # interleaved: noise hits both alike
                cpu[name].append(_idle_cpu(command, args.seconds))
    floor = statistics.median(cpu["bare Textual app (floor)"])
    for name, values in cpu.items():
        med = statistics.median(values)
        ratio = f"{med / floor:5.2f}x floor" if floor else "(floor is 0)"
        print(f"{name:32s} {100 * med:6.2f} % of a core   {ratio}")


if __name__ == "__main__":
    main()
