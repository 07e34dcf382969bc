"""A full disk: one clear error, no empty trace, as much recorded as fits, no effect twice."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
import textwrap
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from regista.errors import TraceWriteError
from regista.trace.events import SessionStart, ToolResult
from regista.trace.reader import Trace
from regista.trace.writer import TraceWriter

HERE = Path(__file__).parent


class _FullDisk:
    """A file that takes ``room`` more bytes, then fails like a full disk (after a
    partial write, as a real one may)."""

    def __init__(self, real: Any, room: int) -> None:
        self.real = real
        self.room = room

    def write(self, data: Any) -> int:
        if len(data) > self.room:
            if self.room:
                self.real.write(bytes(data[: self.room]))
            self.room = 0
            raise OSError(errno.ENOSPC, "No space left on device")
        self.room -= len(data)
        return int(self.real.write(data))

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real, name)


def test_a_failed_write_leaves_the_trace_whole_and_later_events_may_fit(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    w = TraceWriter(path, "S1")
    w.write(SessionStart, task="t", model="m", provider="scripted")
    good = path.read_bytes()
    w._file = _FullDisk(w._file, room=300)  # type: ignore[assignment]
    with pytest.raises(TraceWriteError, match="No space left on device") as info:
        w.write(ToolResult, step=0, tool_use_id="t", name="f", content="x" * 10_000)
    assert "\n" not in str(info.value)
    assert path.read_bytes() == good  # the partial line was cut back
    w._file.room = 10_000  # type: ignore[attr-defined]
    w.write(ToolResult, step=0, tool_use_id="t", name="f", content="small")
    w.close()
    assert [ev.seq for ev in Trace.load(path).events] == [0, 1]


def test_no_empty_trace_when_nothing_fits(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    w = TraceWriter(path, "S1")
    w._file = _FullDisk(w._file, room=10)  # type: ignore[assignment]
    with pytest.raises(TraceWriteError):
        w.write(SessionStart, task="t", model="m", provider="scripted")
    assert not path.exists()


_AGENT = textwrap.dedent(
    """
    import os, resource, sys
    from pathlib import Path
    from regista import Agent, RegistaError, tool
    from regista.providers import ScriptedProvider
    from regista.tools import current_tool_call

    @tool
    def fetch(item: str) -> str:
        \"\"\"Fetch an item (an effect that must happen once).\"\"\"
        with open(os.environ["REGISTA_EFFECTS"], "a") as f:
            f.write(current_tool_call().id + "\\n")
        return item * int(os.environ.get("REGISTA_RESULT_SIZE", "1"))

    def model(request):
        if any(m["role"] == "assistant" for m in request.messages):
            return {"content": [{"type": "text", "text": "done"}]}
        return {"content": [{"type": "tool_use", "id": "toolu_big", "name": "fetch",
                             "input": {"item": "x"}}], "stop_reason": "tool_use"}

    def agent():
        return Agent(tools=[fetch], provider=ScriptedProvider(model),
                     trace_dir=os.environ["REGISTA_TRACE_DIR"])

    if __name__ == "__main__":
        limit = int(sys.argv[1])
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
        try:
            agent().run_sync("fetch")
        except RegistaError as exc:
            print(f"error: {exc}", file=sys.stderr)
            sys.exit(1)
    """
)


def _run_limited(tmp_path: Path, limit: int, result_size: int) -> subprocess.CompletedProcess[str]:
    script = tmp_path / "full_disk_agent.py"
    script.write_text(_AGENT)
    env = {
        **os.environ,
        "REGISTA_EFFECTS": str(tmp_path / "effects.txt"),
        "REGISTA_TRACE_DIR": str(tmp_path / "traces"),
        "REGISTA_RESULT_SIZE": str(result_size),
    }
    return subprocess.run(
        [sys.executable, str(script), str(limit)],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_the_disk_fills_before_the_session_starts(tmp_path: Path) -> None:
    proc = _run_limited(tmp_path, limit=200, result_size=1)
    assert proc.returncode == 1
    assert proc.stderr.count("\n") == 1 and "cannot write the trace" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert list((tmp_path / "traces").glob("*.jsonl")) == []  # no empty trace left


def test_a_result_that_does_not_fit_is_never_run_again_by_resume(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    proc = _run_limited(tmp_path, limit=20_000, result_size=200_000)
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr.count("\n") == 1 and "File too large" in proc.stderr
    (trace_path,) = (tmp_path / "traces").glob("*.jsonl")
    trace = Trace.load(trace_path)  # whole lines only
    assert trace.complete and "File too large" in (trace.end.error or "")  # type: ignore[union-attr]
    result = trace.tool_results()["toolu_big"]
    assert result.is_error and "could not be recorded" in str(result.content)

    sys.path.insert(0, str(tmp_path))
    try:
        import full_disk_agent
    finally:
        sys.path.remove(str(tmp_path))
    monkeypatch.setenv("REGISTA_EFFECTS", str(tmp_path / "effects.txt"))
    monkeypatch.setenv("REGISTA_TRACE_DIR", str(tmp_path / "resumed"))
    import asyncio

    resumed = asyncio.run(full_disk_agent.agent().resume(trace_path))
    assert resumed.stop_reason == "end_turn"
    assert Counter((tmp_path / "effects.txt").read_text().split()) == {"toolu_big": 1}


_CLI = (
    "import resource, sys; from regista.cli.main import main; "
    "limit = int(sys.argv[1]); resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit)); "
    "sys.exit(main(sys.argv[2:]))"
)
SAMPLE = Path(__file__).parents[2] / "sample_traces" / "refund_happy.jsonl"


@pytest.mark.parametrize("limit", [100, 6_000])
def test_writing_commands_say_it_in_one_line(tmp_path: Path, limit: int) -> None:
    out = tmp_path / "replays"
    proc = subprocess.run(
        [sys.executable, "-c", _CLI, str(limit), "replay", str(SAMPLE), "--trace-dir", str(out)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 1
    assert (
        proc.stderr.startswith("regista: cannot write the trace") and "Traceback" not in proc.stderr
    )
    assert proc.stderr.count("\n") == 1
    written = sorted(out.glob("*.jsonl"))
    # 100 bytes hold no first line; 6,000 hold the start of the replay
    assert len(written) == (0 if limit == 100 else 1)
    for path in written:  # what was written is a readable, cut-short trace
        assert not Trace.load(path).complete or "File too large" in proc.stderr
