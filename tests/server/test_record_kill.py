"""`regista record` killed with SIGKILL mid-session: the trace written so far stays valid."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from fakes.anthropic_server import FakeAnthropicServer

from regista.trace.reader import Trace

HERE = Path(__file__).parent


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_kill_9_during_a_recorded_session_leaves_a_readable_trace(tmp_path: Path) -> None:
    with FakeAnthropicServer() as fake:
        fake.answer_with(lambda body: {"content": [{"type": "text", "text": "sunny"}]})
        env = {
            **os.environ,
            "PYTHONPATH": str(HERE),
            "ANTHROPIC_API_KEY": "sk-ant-kill-secret",
            "ANTHROPIC_BASE_URL": fake.url,
        }
        proc = subprocess.Popen(
            [sys.executable, "-m", "regista", "record", "--trace-dir", str(tmp_path), "--",
             sys.executable, str(HERE / "agent_main.py"), "anthropic-then-hang"],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )  # fmt: skip
        try:
            assert proc.stdout is not None
            line = proc.stdout.readline()  # the child has its answer: the call is on disk
            assert line.strip() == "called", proc.stderr.read() if proc.stderr else ""
        finally:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)
            if proc.stdout is not None:
                proc.stdout.close()
            if proc.stderr is not None:
                proc.stderr.close()
    (path,) = tmp_path.glob("*.jsonl")
    trace = Trace.load(path)
    assert [s.kind for s in trace.steps()] == ["model"]
    assert trace.end is None  # unfinished, not corrupt
    assert trace.llm_calls()[0][1].text == "sunny"
    assert "sk-ant-kill-secret" not in path.read_text()
