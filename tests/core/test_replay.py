"""Replay: the recorded session re-runs through the same loop, hash-verified, for $0."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from builders import (
    SIMPLE_SCRIPT,
    Effects,
    answer,
    rich_agent,
    simple_agent,
    tool_use,
    write_whole,
)

from regista import ReplayDivergence, replay
from regista.errors import ProviderError, RegistaError, ReplayDivergenceWarning, UserError
from regista.providers import ReplayProvider, ScriptedProvider
from regista.trace.events import LlmResponseEvent, ToolResult
from regista.trace.reader import Trace


@pytest.fixture
def rich_trace(tmp_path: Path) -> Path:
    agent = rich_agent(tmp_path / "orig")
    result = agent.run_sync("What's the weather in Paris and Rome?")
    assert result.stop_reason == "max_turns"
    return result.trace_path


def test_rich_session_has_every_feature(rich_trace: Path) -> None:
    trace = Trace.load(rich_trace)
    s = trace.summary()
    kinds = [step.kind for step in trace.steps()]
    assert "compaction" in kinds
    assert s.denials == 1
    assert s.compactions == 1
    assert s.stop_reason == "max_turns"
    assert any(step.is_error and not step.denied for step in trace.steps() if step.kind == "tool")
    # three tool_use blocks in one response: all executed and answered
    first_tools = [
        st
        for st in trace.steps()
        if st.kind == "tool"
        and st.tool_call is not None
        and st.tool_call.tool_use_id[:7] == "toolu_a"
    ]
    assert len(first_tools) == 3


async def test_strict_replay_reproduces_the_hash_chain(rich_trace: Path, tmp_path: Path) -> None:
    original = Trace.load(rich_trace)
    result = await replay(rich_trace, trace_dir=tmp_path / "replays")
    replayed = Trace.load(result.trace_path)
    assert replayed.request_hashes() == original.request_hashes()
    assert result.cost_usd == 0.0
    assert result.stop_reason == original.summary().stop_reason
    assert result.live_steps == 0
    assert result.recorded_steps == len(original.steps())
    assert replayed.start.replay_of == original.session_id
    assert replayed.start.provider == original.start.provider
    # denied and failed paths replay byte-identically
    orig_results = {k: (v.content, v.is_error) for k, v in original.tool_results().items()}
    new_results = {k: (v.content, v.is_error) for k, v in replayed.tool_results().items()}
    assert new_results == orig_results
    # the same events in the same order (a tool's raise is not re-raised: its recorded
    # error result is served, so the original's `error` event has no twin)
    shape = [(e.type, getattr(e, "step", None)) for e in original.events if e.type != "error"]
    assert [(e.type, getattr(e, "step", None)) for e in replayed.events] == shape


async def test_replay_runs_no_tool_and_needs_no_agent(tmp_path: Path) -> None:
    effects = Effects()
    result = simple_agent(tmp_path, effects).run_sync("Weather?")
    assert len(effects.calls) == 2
    replayed = await replay(result.trace_path, trace_dir=tmp_path / "r")
    assert len(effects.calls) == 2  # nothing re-executed
    assert replayed.output == result.output


async def test_replay_of_a_replay(rich_trace: Path, tmp_path: Path) -> None:
    first = await replay(rich_trace, trace_dir=tmp_path)
    second = await replay(first.trace_path, trace_dir=tmp_path)
    assert Trace.load(second.trace_path).request_hashes() == Trace.load(rich_trace).request_hashes()


def _tamper_tool_result(path: Path, tool_use_id: str, content: str, *, whole: bool) -> None:
    if whole:
        write_whole(path)
    lines = path.read_text().splitlines()
    for i, line in enumerate(lines):
        ev = json.loads(line)
        if ev["type"] == "tool.result" and ev["tool_use_id"] == tool_use_id:
            ev["content"] = content
            lines[i] = json.dumps(ev)
    path.write_text("\n".join(lines) + "\n")


async def test_a_changed_tool_result_that_a_request_refers_to_is_named(tmp_path: Path) -> None:
    result = simple_agent(tmp_path).run_sync("Weather?")
    _tamper_tool_result(result.trace_path, "toolu_1", "Snowing in Paris.", whole=False)
    with pytest.raises(RegistaError, match=r":7: the request of step 2 does not match its request"):
        await replay(result.trace_path, trace_dir=tmp_path / "r")


async def test_strict_divergence_names_step_and_path(tmp_path: Path) -> None:
    result = simple_agent(tmp_path).run_sync("Weather?")
    _tamper_tool_result(result.trace_path, "toolu_1", "Snowing in Paris.", whole=True)
    with pytest.raises(ReplayDivergence) as info:
        await replay(result.trace_path, trace_dir=tmp_path / "r")
    err = info.value
    assert err.step == 2
    assert "diverged at step 2 (model call)" in str(err)
    assert "request.messages[2].content[0].content" in str(err)
    assert err.diffs and err.diffs[0].path == "request.messages[2].content[0].content"
    # the failed replay still wrote a complete trace that says so
    replays = list((tmp_path / "r").glob("*.jsonl"))
    assert len(replays) == 1
    end = Trace.load(replays[0]).end
    assert end is not None and end.stop_reason == "diverged"


async def test_long_string_divergence_shows_a_window(tmp_path: Path) -> None:
    result = simple_agent(tmp_path).run_sync("Weather?")
    trace = Trace.load(result.trace_path)
    original = trace.tool_results()["toolu_1"].content
    assert isinstance(original, str)
    changed = original[:100] + "X" + original[101:]
    _tamper_tool_result(result.trace_path, "toolu_1", changed, whole=True)
    with pytest.raises(ReplayDivergence) as info:
        await replay(result.trace_path, trace_dir=tmp_path / "r")
    assert "first difference at character 101" in str(info.value)
    assert "…" in str(info.value)


async def test_warn_mode_warns_and_goes_on(tmp_path: Path) -> None:
    result = simple_agent(tmp_path).run_sync("Weather?")
    _tamper_tool_result(result.trace_path, "toolu_1", "Snowing in Paris.", whole=True)
    with pytest.warns(ReplayDivergenceWarning, match="diverged at step") as caught:
        replayed = await replay(result.trace_path, mode="warn", trace_dir=tmp_path / "r")
    assert "diverged at step 2" in str(caught[0].message)
    assert replayed.stop_reason == "end_turn"
    assert replayed.output == result.output
    responses = Trace.load(replayed.trace_path).of_type(LlmResponseEvent)
    assert [r.matched for r in responses] == [True, False, False]


async def test_hybrid_falls_through_to_the_fallback(tmp_path: Path) -> None:
    result = simple_agent(tmp_path).run_sync("Weather?")
    _tamper_tool_result(result.trace_path, "toolu_1", "Snowing in Paris.", whole=True)
    fallback = ScriptedProvider([answer(text="Live: bring a coat.")])
    replayed = await replay(
        result.trace_path, mode="hybrid", fallback=fallback, trace_dir=tmp_path / "r"
    )
    assert replayed.output == "Live: bring a coat."
    assert fallback.calls == 1
    assert replayed.diverged_at == 2
    sources = [s.source for s in Trace.load(replayed.trace_path).steps()]
    assert sources == ["recorded", "recorded", "live"]


async def test_hybrid_past_the_end_goes_live(tmp_path: Path) -> None:
    result = simple_agent(tmp_path).run_sync("Weather?")
    # drop the last model call from the recording: the replay must go live for it
    lines = result.trace_path.read_text().splitlines()
    cut = [i for i, ln in enumerate(lines) if json.loads(ln)["type"] == "llm.request"][-1]
    result.trace_path.write_text("\n".join(lines[:cut]) + "\n")
    fallback = ScriptedProvider([answer(text="Live ending.")])
    replayed = await replay(
        result.trace_path, mode="hybrid", fallback=fallback, trace_dir=tmp_path / "r"
    )
    assert replayed.output == "Live ending."
    assert (replayed.recorded_steps, replayed.live_steps) == (4, 1)


async def test_tool_call_without_recorded_result_diverges(tmp_path: Path) -> None:
    result = simple_agent(tmp_path).run_sync("Weather?")
    write_whole(result.trace_path)
    lines = [
        ln
        for ln in result.trace_path.read_text().splitlines()
        if not (json.loads(ln)["type"] == "tool.result" and "toolu_2" in ln)
    ]
    # renumber seq so the file stays valid
    fixed = []
    for i, ln in enumerate(lines):
        ev = json.loads(ln)
        ev["seq"] = i
        fixed.append(json.dumps(ev))
    result.trace_path.write_text("\n".join(fixed) + "\n")
    with pytest.raises(ReplayDivergence, match=r"step 3 \(tool call\): no recorded result"):
        await replay(result.trace_path, trace_dir=tmp_path / "r")


async def test_bad_mode_lists_valid_ones(rich_trace: Path) -> None:
    with pytest.raises(UserError, match="'strict', 'warn', 'hybrid'"):
        await replay(rich_trace, mode="lenient")


async def test_replay_provider_counts(tmp_path: Path) -> None:
    result = simple_agent(tmp_path).run_sync("Weather?")
    provider = ReplayProvider(result.trace_path)
    assert len(provider.calls) == 3
    assert provider.calls[0].request is not None


async def test_stream_callback_gets_recorded_text(tmp_path: Path) -> None:
    result = simple_agent(tmp_path).run_sync("Weather?")
    seen: list[tuple[int, str]] = []
    await replay(
        result.trace_path, trace_dir=tmp_path / "r", on_text=lambda s, t: seen.append((s, t))
    )
    # re-chunked as a stream, joining into exactly the recorded text
    assert "".join(t for s, t in seen if s == 0) == "Let me look."
    assert "".join(t for s, t in seen if s == 4) == "It is sunny in Paris."


def test_tool_result_events_mark_source(tmp_path: Path) -> None:
    import asyncio

    result = simple_agent(tmp_path).run_sync("Weather?")
    replayed = asyncio.run(replay(result.trace_path, trace_dir=tmp_path / "r"))
    sources = {ev.source for ev in Trace.load(replayed.trace_path).of_type(ToolResult)}
    assert sources == {"recorded"}


async def test_tool_use_id_mismatch_input_diverges(tmp_path: Path) -> None:
    # a recorded result whose call input no longer matches is a divergence, not a silent serve
    result = simple_agent(tmp_path).run_sync("Weather?")
    lines = result.trace_path.read_text().splitlines()
    out = []
    for ln in lines:
        ev = json.loads(ln)
        if ev["type"] == "tool.call" and ev["tool_use_id"] == "toolu_1":
            ev["input"] = {"city": "Lyon"}
        out.append(json.dumps(ev))
    result.trace_path.write_text("\n".join(out) + "\n")
    with pytest.raises(ReplayDivergence, match=r"tool.input.city: recorded 'Lyon' != live 'Paris'"):
        await replay(result.trace_path, trace_dir=tmp_path / "r")


_ = tool_use


def _failed_session(tmp_path: Path) -> Path:
    """A session whose second model call fails (the script has one answer)."""
    agent = simple_agent(tmp_path / "orig", provider=ScriptedProvider(SIMPLE_SCRIPT[:1]))
    with pytest.raises(ProviderError, match="asked for another"):
        agent.run_sync("Weather?")
    (failed,) = (tmp_path / "orig").glob("*.jsonl")
    return failed


def _shape(trace: Trace) -> list[tuple[str, int | None]]:
    return [(e.type, getattr(e, "step", None)) for e in trace.events]


async def test_replay_of_a_failed_session_reproduces_its_error(tmp_path: Path) -> None:
    """The recorded session's last call failed: the replay makes the same request, gets the
    same error for $0, and ends as the recording did (a result, not an exception)."""
    failed = _failed_session(tmp_path)
    original = Trace.load(failed)
    result = await replay(failed, trace_dir=tmp_path / "r")
    assert result.stop_reason == "error" == original.end.stop_reason
    assert result.error == original.end.error and "asked for another" in result.error
    assert result.steps == original.end.steps and result.recorded_steps == 2
    replayed = Trace.load(result.trace_path)
    assert _shape(replayed) == _shape(original)
    (error,) = [e for e in replayed.events if e.type == "error"]
    assert (error.where, error.step, error.message) == ("provider", 2, original.end.error)


async def test_a_changed_request_at_the_failed_call_is_a_divergence(tmp_path: Path) -> None:
    failed = _failed_session(tmp_path)
    write_whole(failed)
    lines = failed.read_text().splitlines()
    out = []
    for line in lines:  # the tool result that feeds the failed call changes
        if '"tool.result"' in line:
            line = line.replace("Sunny", "Rainy")
        out.append(line)
    failed.write_text("\n".join(out) + "\n")
    with pytest.raises(ReplayDivergence, match=r"diverged at step 2 \(model call\)") as info:
        await replay(failed, trace_dir=tmp_path / "r")
    assert info.value.step == 2 and info.value.diffs
    with pytest.warns(ReplayDivergenceWarning, match="diverged at step 2"):
        warned = await replay(failed, "warn", trace_dir=tmp_path / "w")
    assert warned.stop_reason == "error" and warned.diverged_at == 2


async def test_hybrid_and_resume_retry_the_failed_call_live(tmp_path: Path) -> None:
    """With a live provider, the call that failed is asked again: a crashed session goes on."""
    failed = _failed_session(tmp_path)
    agent = simple_agent(tmp_path / "live")
    resumed = await agent.resume(failed)
    assert resumed.stop_reason == "end_turn" and resumed.error is None
    assert (resumed.recorded_steps, resumed.live_steps) == (2, 3)
    hybrid = await replay(failed, "hybrid", agent.provider, trace_dir=tmp_path / "h")
    assert hybrid.stop_reason == "end_turn" and hybrid.live_steps == 3


async def test_replay_of_a_cut_session_says_it_did_not_finish(tmp_path: Path) -> None:
    result = simple_agent(tmp_path).run_sync("Weather?")
    lines = result.trace_path.read_text().splitlines()
    cut = tmp_path / "cut.jsonl"
    first_result = next(i for i, ln in enumerate(lines) if '"tool.result"' in ln)
    cut.write_text("\n".join(lines[:first_result]) + "\n")
    with pytest.raises(ReplayDivergence, match="the session did not finish"):
        await replay(cut, trace_dir=tmp_path / "r")


def test_loose_is_the_other_name_of_warn() -> None:
    from regista.providers.replay import ReplayMode

    assert ReplayMode.parse("loose") is ReplayMode.WARN
