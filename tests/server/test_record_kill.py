"""`regista record` killed with SIGKILL mid-session: the trace written so far stays valid,
and it loses at most the call in flight.

The proxy passes each answer on first and writes the call right after (in the same turn of
its event loop), so an agent that has its answer may be killed before that call is written;
every call before it is on disk.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from fakes.anthropic_server import FakeAnthropicServer

from regista.trace.reader import Trace

HERE = Path(__file__).parent
SECRET = "sk-ant-kill-secret"
pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")


def _record(trace_dir: Path, fake_url: str, mode: str) -> subprocess.Popen[str]:
    env = {
        **os.environ,
        "PYTHONPATH": str(HERE),
        "ANTHROPIC_API_KEY": SECRET,
        "ANTHROPIC_BASE_URL": fake_url,
    }
    return subprocess.Popen(
        [sys.executable, "-m", "regista", "record", "--trace-dir", str(trace_dir), "--",
         sys.executable, str(HERE / "agent_main.py"), mode],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )  # fmt: skip


def _kill(proc: subprocess.Popen[str]) -> None:
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    for pipe in (proc.stdout, proc.stderr):
        if pipe is not None:
            pipe.close()


def _tool_use(body: dict[str, Any]) -> dict[str, Any]:
    n = sum(1 for m in body["messages"] if m["role"] == "assistant")
    return {
        "content": [
            {"type": "text", "text": f"count {n}"},
            {"type": "tool_use", "id": f"toolu_{n}", "name": "count", "input": {"n": n}},
        ]
    }


def test_kill_9_during_a_recorded_session_leaves_a_readable_trace(tmp_path: Path) -> None:
    with FakeAnthropicServer() as fake:
        fake.answer_with(lambda body: {"content": [{"type": "text", "text": "sunny"}]})
        proc = _record(tmp_path, fake.url, "anthropic-then-hang")
        try:
            assert proc.stdout is not None
            line = proc.stdout.readline()  # the child has its answer
            assert line.strip() == "called", proc.stderr.read() if proc.stderr else ""
            path = _written_call(tmp_path, proc)  # the call is on disk, the session open
        finally:
            _kill(proc)
    # killed mid-session: the call written before is there, whole, and the trace reads
    assert list(tmp_path.glob("*.jsonl")) == [path]
    trace = Trace.load(path)
    assert trace.end is None  # unfinished, not corrupt
    assert [s.kind for s in trace.steps()] == ["model"]
    assert trace.llm_calls()[0][1].text == "sunny"
    assert SECRET not in path.read_text()


def _written_call(trace_dir: Path, proc: subprocess.Popen[str]) -> Path:
    """The trace of the recording, once its first answer is written (the proxy writes it
    right after passing it on); fails if the recorder exits first."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        for path in trace_dir.glob("*.jsonl"):
            if b'"type":"llm.response"' in path.read_bytes():
                return path
        assert proc.poll() is None, "the recorder exited before writing the call"
        time.sleep(0.02)
    raise AssertionError(f"no answer was written in {trace_dir}")


@pytest.mark.parametrize(
    ("seed", "mode"),
    [(1, "anthropic-loop"), (2, "anthropic-loop"), (3, "anthropic-stream-loop")],
)
def test_kill_9_loses_at_most_the_call_in_flight(tmp_path: Path, seed: int, mode: str) -> None:
    """Killed after the agent has had k answers (plus a random few milliseconds, so the kill
    lands anywhere in the next call): the first k - 1 calls are on disk, whole."""
    rng = random.Random(seed)
    k = rng.randint(2, 6)
    with FakeAnthropicServer() as fake:
        fake.answer_with(_tool_use)
        proc = _record(tmp_path, fake.url, mode)
        try:
            assert proc.stdout is not None
            for n in range(1, k + 1):
                line = proc.stdout.readline()
                assert line.strip() == f"called {n}", proc.stderr.read() if proc.stderr else ""
            time.sleep(rng.uniform(0, 0.004))
        finally:
            _kill(proc)
    (path,) = tmp_path.glob("*.jsonl")
    trace = Trace.load(path)  # every line whole, or a cut last line dropped
    assert trace.end is None
    calls = trace.llm_calls()
    assert len(calls) >= k - 1
    for n, (request, response) in enumerate(calls[: k - 1]):
        assert response.text == f"count {n}"
        assert len(request.messages) == 2 * n + 1
    kinds = [s.kind for s in trace.steps()]
    assert kinds[: 2 * (k - 1) - 1] == ["model", "tool"] * (k - 2) + ["model"]
    assert SECRET not in path.read_text()
