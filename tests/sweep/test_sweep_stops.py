"""A sweep that is stopped: Ctrl+C keeps the finished forks and says which were cut short;
a ``kill -9`` leaves the finished forks and a sweep file that reads back.

The sweep runs as its own process, one fork at a time, with the demo model taking a moment
per answer, so that it is stopped after its first fork and before its last.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from sweeps import sweep_argv

from regista.sweep import load_sweep, sweep_rows, table_text
from regista.trace.reader import Trace

LIMIT_S = 60.0


def _until(holds: Callable[[], object], what: str) -> None:
    deadline = time.monotonic() + LIMIT_S
    while not holds():
        if time.monotonic() > deadline:
            raise AssertionError(f"never happened: {what}")
        time.sleep(0.02)


def _status(out: Path) -> list[str]:
    try:
        return [f.status for f in load_sweep(out).forks]
    except Exception:
        return []


def _start(tmp_path: Path) -> tuple[subprocess.Popen[bytes], Path]:
    out = tmp_path / "sw"
    env = {**os.environ, "REGISTA_DEMO_DELAY": "0.1"}
    env.pop("REGISTA_SAMPLE_DB", None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "regista", *sweep_argv(out, "-j", "1")],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    _until(lambda: _status(out)[:2] == ["done", "running"], "fork 1 done, fork 2 running")
    _until(lambda: _fork_trace(out, 1) is not None, "fork 2 has written its first line")
    return proc, out


def _fork_trace(out: Path, i: int) -> Path | None:
    """The fork's trace once its first line says whose fork it is (a file just created
    is empty for a moment: a fork killed then has nothing to compare)."""
    sweep = load_sweep(out)
    return sweep.fork_trace(sweep.forks[i])


def _fork_processes(folder: Path) -> list[int]:
    """The processes whose command line names ``folder`` (a fork of the sweep)."""
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmdline = (entry / "cmdline").read_bytes()
            except OSError:
                continue
            if str(folder).encode() in cmdline:
                pids.append(int(entry.name))
    return pids


def test_ctrl_c_keeps_the_finished_forks_and_says_which_were_cut_short(tmp_path: Path) -> None:
    proc, out = _start(tmp_path)
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=LIMIT_S)
    assert proc.returncode == 130, stderr
    text = stdout.decode()
    assert "cut short: fork 2, fork 3 (the sweep was cancelled)" in text
    assert "Traceback" not in stderr.decode()
    sweep = load_sweep(out)
    assert sweep.cancelled and sweep.ended is not None
    assert [f.shown_status for f in sweep.forks] == ["done", "cut_short", "cut_short"]
    assert Trace.load(sweep.fork_trace(sweep.forks[0])).end is not None  # kept, whole
    assert not (out / "fork-3").exists()  # never started
    lines = text.splitlines()
    assert "end_turn" in lines[2] and "cut short" in lines[3] and "cut short" in lines[4]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="children die with it on Linux")
def test_kill_9_leaves_the_finished_forks_and_a_readable_sweep_file(tmp_path: Path) -> None:
    proc, out = _start(tmp_path)
    proc.kill()
    proc.communicate(timeout=LIMIT_S)
    # the running fork dies with the sweep; it does not carry on alone
    _until(lambda: not _fork_processes(out / "fork-2"), "the running fork is gone")
    sweep = load_sweep(out)
    assert sweep.ended is None and not sweep.running
    assert [f.status for f in sweep.forks] == ["done", "running", "pending"]
    assert [f.shown_status for f in sweep.forks] == ["done", "cut_short", "cut_short"]
    first = Trace.load(sweep.fork_trace(sweep.forks[0]))
    assert first.end is not None and first.end.stop_reason == "end_turn"
    rows = sweep_rows(sweep)
    assert [r.status for r in rows] == ["done", "done", "cut_short", "cut_short"]
    assert rows[1].divergence == "step 2: changed · decision"
    assert rows[2].divergence == "none"  # cut short on the parent's path: nothing missing
    assert "cut short" in table_text(rows).splitlines()[3]
    assert not list(out.glob(".*.tmp"))  # the file was never left half-written
