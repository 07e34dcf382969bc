"""Resume: an interrupted session continues; recorded tool effects never happen twice."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from builders import Effects, answer, simple_agent

from regista.providers import ScriptedProvider
from regista.trace.reader import Trace

HERE = Path(__file__).parent


def _truncate(path: Path, keep: int) -> None:
    lines = path.read_text().splitlines()
    path.write_text("\n".join(lines[:keep]) + "\n")


async def test_resume_serves_recorded_prefix_and_runs_the_rest(tmp_path: Path) -> None:
    effects = Effects()
    done = await simple_agent(tmp_path, effects).run("Weather?")
    assert [c[0] for c in effects.calls] == ["get_weather", "get_forecast"]
    # cut the trace right after the first tool result: the process "died" there
    lines = done.trace_path.read_text().splitlines()
    first_result = next(i for i, ln in enumerate(lines) if '"tool.result"' in ln)
    _truncate(done.trace_path, first_result + 1)
    assert not Trace.load(done.trace_path).complete

    effects2 = Effects()
    agent = simple_agent(tmp_path, effects2)
    resumed = await agent.resume(done.trace_path)
    assert resumed.stop_reason == "end_turn"
    assert resumed.output == "It is sunny in Paris."
    # the recorded get_weather was served; get_forecast ran for real
    assert [c[0] for c in effects2.calls] == ["get_forecast"]
    assert resumed.recorded_steps == 2  # model call 0 and tool step 1
    assert resumed.live_steps == 3
    new = Trace.load(resumed.trace_path)
    assert new.start.replay_of == Trace.load(done.trace_path).session_id


async def test_cut_short_tool_call_is_re_executed(tmp_path: Path) -> None:
    done = await simple_agent(tmp_path).run("Weather?")
    lines = done.trace_path.read_text().splitlines()
    first_call = next(i for i, ln in enumerate(lines) if '"tool.call"' in ln)
    _truncate(done.trace_path, first_call + 1)  # tool.call written, no result
    effects = Effects()
    resumed = await simple_agent(tmp_path, effects).resume(done.trace_path)
    assert resumed.stop_reason == "end_turn"
    assert [c[0] for c in effects.calls] == ["get_weather", "get_forecast"]


async def test_new_calls_face_the_policy_recorded_ones_do_not(tmp_path: Path) -> None:
    done = await simple_agent(tmp_path).run("Weather?")
    lines = done.trace_path.read_text().splitlines()
    first_result = next(i for i, ln in enumerate(lines) if '"tool.result"' in ln)
    _truncate(done.trace_path, first_result + 1)
    asked: list[str] = []

    def policy(call: object) -> bool:
        asked.append(call.name)  # type: ignore[attr-defined]
        return False

    agent = simple_agent(tmp_path)
    agent.policy = policy
    resumed = await agent.resume(done.trace_path)
    assert asked == ["get_forecast"]
    denied = [s for s in Trace.load(resumed.trace_path).steps() if s.denied]
    assert [s.title for s in denied] == ["get_forecast"]


async def test_a_changed_agent_diverges_and_reruns_live(tmp_path: Path) -> None:
    done = await simple_agent(tmp_path).run("Weather?")
    live = ScriptedProvider([answer(text="Bonjour ! Il fait beau.")])
    agent = simple_agent(tmp_path, provider=live, instructions="Always answer in French.")
    resumed = await agent.resume(done.trace_path)
    assert resumed.output == "Bonjour ! Il fait beau."
    assert (resumed.recorded_steps, resumed.live_steps) == (0, 1)
    assert resumed.diverged_at == 0


def _run_and_kill(tmp_path: Path, kill_after_lines: int) -> tuple[Path | None, Path]:
    run_dir = tmp_path / f"kill{kill_after_lines}"
    run_dir.mkdir()
    env = {
        **os.environ,
        "REGISTA_EFFECTS": str(run_dir / "effects.txt"),
        "REGISTA_TRACE_DIR": str(run_dir / "traces"),
        "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")]),
    }
    proc = subprocess.Popen(
        [sys.executable, str(HERE / "killable_agent.py")],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 20
    trace: Path | None = None
    while time.monotonic() < deadline and proc.poll() is None:
        found = list((run_dir / "traces").glob("*.jsonl")) if (run_dir / "traces").exists() else []
        if found:
            trace = found[0]
            if trace.read_bytes().count(b"\n") >= kill_after_lines:
                break
        time.sleep(0.002)
    if proc.poll() is None:
        os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=10)
    return trace, run_dir / "effects.txt"


@pytest.mark.parametrize("kill_after_lines", [2, 5, 9, 14, 20, 27, 33, 40])
def test_kill_9_then_resume_never_repeats_a_recorded_effect(
    tmp_path: Path, kill_after_lines: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    import asyncio

    sys.path.insert(0, str(HERE))
    try:
        import killable_agent
    finally:
        sys.path.remove(str(HERE))

    trace_path, effects = _run_and_kill(tmp_path, kill_after_lines)
    assert trace_path is not None, "the run never started"
    crashed = Trace.load(trace_path)  # at most a half-written last line is lost
    recorded_ids = set(crashed.tool_results())
    before = Counter(effects.read_text().split()) if effects.exists() else Counter()

    monkeypatch.setenv("REGISTA_EFFECTS", str(effects))
    monkeypatch.setenv("REGISTA_TRACE_DIR", str(tmp_path / "resumed"))
    agent = killable_agent.ledger_agent()
    if crashed.complete:  # the run finished before the kill: resume is a pure replay
        result = asyncio.run(agent.resume(trace_path))
        assert result.live_steps == 0
    else:
        result = asyncio.run(agent.resume(trace_path))
    assert result.stop_reason == "end_turn"
    assert result.output == "All items recorded."

    after = Counter(effects.read_text().split())
    for tool_use_id in recorded_ids:
        assert after[tool_use_id] == 1, f"{tool_use_id} happened {after[tool_use_id]} times"
    # every item of the session happened at least once, and nothing ran more than twice
    # (only a call cut short mid-execution may run again)
    expected = {f"toolu_{t}_{x}" for t in range(killable_agent.TURNS) for x in "ab"}
    assert set(after) == expected
    assert all(after[k] - before.get(k, 0) <= 1 for k in after)
    resumed = Trace.load(result.trace_path)
    assert resumed.complete
    assert json.loads(trace_path.read_text().splitlines()[0])["type"] == "session.start"
