"""Each tool result is written the moment its tool returns; tools see their tool_use_id."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from builders import answer, tool_use

from regista import Agent, replay, tool
from regista.providers import ScriptedProvider
from regista.tools import current_tool_call
from regista.trace.events import ToolResult
from regista.trace.reader import Trace

HERE = Path(__file__).parent


def _import_agent_module() -> object:
    sys.path.insert(0, str(HERE))
    try:
        import slow_fast_agent
    finally:
        sys.path.remove(str(HERE))
    return slow_fast_agent


def test_kill_9_while_a_slow_tool_runs_never_reruns_the_fast_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    effects = tmp_path / "effects.txt"
    traces = tmp_path / "traces"
    env = {
        **os.environ,
        "REGISTA_EFFECTS": str(effects),
        "REGISTA_TRACE_DIR": str(traces),
        "REGISTA_SLOW_BLOCKS": "1",
        "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")]),
    }
    proc = subprocess.Popen(
        [sys.executable, str(HERE / "slow_fast_agent.py")],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    trace: Path | None = None
    deadline = time.monotonic() + 20
    try:
        # wait until the fast tool's result is on disk (the slow tool never returns)
        while time.monotonic() < deadline and proc.poll() is None:
            found = list(traces.glob("*.jsonl")) if traces.exists() else []
            if found and b'"tool_use_id":"toolu_fast","name":"fast","content"' in (
                found[0].read_bytes()
            ):
                trace = found[0]
                break
            time.sleep(0.005)
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
    assert proc.returncode == -signal.SIGKILL, proc.stderr.read() if proc.stderr else ""
    assert trace is not None, "the fast tool's result was not written while the slow one ran"
    assert effects.read_text().split() == ["toolu_fast"]
    crashed = Trace.load(trace)
    assert set(crashed.tool_results()) == {"toolu_fast"}

    monkeypatch.setenv("REGISTA_EFFECTS", str(effects))
    monkeypatch.setenv("REGISTA_TRACE_DIR", str(tmp_path / "resumed"))
    monkeypatch.delenv("REGISTA_SLOW_BLOCKS", raising=False)
    agent = _import_agent_module().slow_fast_agent()  # type: ignore[attr-defined]
    result = asyncio.run(agent.resume(trace))
    assert result.stop_reason == "end_turn"
    # the fast call's effect happened once; the slow call, cut short mid-tool, ran again
    assert Counter(effects.read_text().split()) == {"toolu_fast": 1, "toolu_slow": 1}
    resumed = Trace.load(result.trace_path)
    sources = {k: v.source for k, v in resumed.tool_results().items()}
    assert sources == {"toolu_fast": "recorded", "toolu_slow": "live"}
    # the next request lists the results in call order
    request = [req for req, _ in resumed.llm_calls()][-1]
    blocks = request.messages[-1]["content"]
    assert [b["tool_use_id"] for b in blocks] == ["toolu_slow", "toolu_fast"]


async def test_results_are_written_as_tools_return_and_listed_in_call_order(
    tmp_path: Path,
) -> None:
    release = asyncio.Event()

    @tool
    async def slow() -> str:
        """Waits for the fast one."""
        await release.wait()
        return "slow done"

    @tool
    async def fast() -> str:
        """Returns at once."""
        return "fast done"

    written: list[str] = []

    def on_event(event: object) -> None:
        if isinstance(event, ToolResult):
            written.append(event.tool_use_id)
            release.set()  # the slow tool may finish only once the fast result is on disk

    script = [
        answer(tool_use("t_slow", "slow"), tool_use("t_fast", "fast")),
        answer(text="ok"),
    ]
    agent = Agent(tools=[slow, fast], provider=ScriptedProvider(script), trace_dir=tmp_path)
    result = await agent.run("go", on_event=on_event)
    assert written == ["t_fast", "t_slow"]
    trace = Trace.load(result.trace_path)
    request = [req for req, _ in trace.llm_calls()][-1]
    assert [b["tool_use_id"] for b in request.messages[-1]["content"]] == ["t_slow", "t_fast"]
    # a strict replay writes the recording's events in the recording's order
    replayed = Trace.load((await replay(result.trace_path, trace_dir=tmp_path / "r")).trace_path)
    assert [(e.type, getattr(e, "step", None)) for e in replayed.events] == [
        (e.type, getattr(e, "step", None)) for e in trace.events
    ]
    assert replayed.request_hashes() == trace.request_hashes()


async def test_tools_see_their_tool_use_id(tmp_path: Path) -> None:
    seen: dict[str, str | None] = {}

    @tool
    async def async_tool() -> str:
        """Async."""
        call = current_tool_call()
        seen["async"] = call.id if call else None
        return "a"

    @tool
    def sync_tool() -> str:
        """Runs in a thread."""
        call = current_tool_call()
        seen["sync"] = call.id if call else None
        return "s"

    script = [answer(tool_use("id_a", "async_tool"), tool_use("id_s", "sync_tool")), answer()]
    agent = Agent(
        tools=[async_tool, sync_tool], provider=ScriptedProvider(script), trace_dir=tmp_path
    )
    await agent.run("go")
    assert seen == {"async": "id_a", "sync": "id_s"}
    assert current_tool_call() is None
