"""Replays follow the recording to the letter: configuration from ``session.start``,
``matched`` in warn mode, streamed text, and sessions that ended early."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from builders import SIMPLE_SCRIPT, by_turn, simple_agent, write_whole

from regista import ReplayDivergence, ScriptedProvider, ToolResultEdit, fork, replay
from regista.providers.base import text_chunks
from regista.testing import play_tape
from regista.trace.events import ErrorEvent, LlmResponseEvent
from regista.trace.reader import Trace


async def _recorded(tmp_path: Path) -> Path:
    return (await simple_agent(tmp_path / "orig").run("Weather?")).trace_path


def _rewrite_start(path: Path, **fields: Any) -> None:
    lines = path.read_text().splitlines()
    start = json.loads(lines[0])
    start.update(fields)
    path.write_text("\n".join([json.dumps(start), *lines[1:]]) + "\n")


# -- the configuration comes from session.start --------------------------------------------


@pytest.mark.parametrize(
    ("fields", "where"),
    [
        ({"instructions": "You are a pirate."}, "request.system"),
        ({"model": "claude-opus-4-1"}, "request.model"),
        ({"max_tokens": 77}, "request.max_tokens"),
    ],
)
async def test_a_start_that_disagrees_with_its_requests_diverges_at_step_0(
    tmp_path: Path, fields: dict[str, Any], where: str
) -> None:
    path = await _recorded(tmp_path)
    _rewrite_start(path, **fields)
    with pytest.raises(ReplayDivergence) as info:
        await replay(path, trace_dir=tmp_path / "r")
    assert info.value.step == 0
    assert f"diverged at step 0 (model call): {where}" in str(info.value)
    assert info.value.diffs and info.value.diffs[0].path.startswith(where)


# -- warn mode says what matched -------------------------------------------------------------


async def test_warn_mode_records_matched_true(tmp_path: Path) -> None:
    path = await _recorded(tmp_path)
    result = await replay(path, mode="warn", trace_dir=tmp_path / "r")
    matched = [ev.matched for ev in Trace.load(result.trace_path).of_type(LlmResponseEvent)]
    assert matched == [True, True, True]
    strict = await replay(path, trace_dir=tmp_path / "s")
    assert {ev.matched for ev in Trace.load(strict.trace_path).of_type(LlmResponseEvent)} == {None}


async def test_warn_mode_records_matched_false_where_it_diverged(tmp_path: Path) -> None:
    path = await _recorded(tmp_path)
    write_whole(path)
    lines = path.read_text().splitlines()
    for i, line in enumerate(lines):
        ev = json.loads(line)
        if ev["type"] == "tool.result" and ev["tool_use_id"] == "toolu_1":
            ev["content"] = "Snow."
            lines[i] = json.dumps(ev)
    path.write_text("\n".join(lines) + "\n")
    with pytest.warns(UserWarning):
        result = await replay(path, mode="warn", trace_dir=tmp_path / "r")
    matched = [ev.matched for ev in Trace.load(result.trace_path).of_type(LlmResponseEvent)]
    assert matched[0] is True and False in matched[1:]


# -- replayed streams ------------------------------------------------------------------------


def test_text_chunks_reassemble_exactly() -> None:
    for text in ["", " ", "one", "It is sunny in Paris.", "  a\n\nb \t c  ", "é 🙂 x"]:
        chunks = text_chunks(text)
        assert "".join(chunks) == text
        assert all(chunks)
    assert text_chunks("It is sunny.") == ["It ", "is ", "sunny."]


async def test_a_replayed_stream_comes_in_chunks(tmp_path: Path) -> None:
    path = await _recorded(tmp_path)
    deltas: dict[int, list[str]] = {}
    await replay(
        path, trace_dir=tmp_path / "r", on_text=lambda s, d: deltas.setdefault(s, []).append(d)
    )
    recorded = {
        ev.step: "".join(b.get("text", "") for b in ev.response["content"] if b["type"] == "text")
        for ev in Trace.load(path).of_type(LlmResponseEvent)
    }
    assert {s: "".join(d) for s, d in deltas.items()} == {s: t for s, t in recorded.items() if t}
    assert deltas[4] == ["It ", "is ", "sunny ", "in ", "Paris."]


async def test_a_forks_recorded_prefix_streams_in_chunks(tmp_path: Path) -> None:
    path = await _recorded(tmp_path)
    deltas: list[tuple[int, str]] = []
    await fork(
        path,
        1,
        ToolResultEdit("Snow."),
        agent=simple_agent(tmp_path / "f"),
        on_text=lambda s, d: deltas.append((s, d)),
    )
    assert [d for s, d in deltas if s == 0] == ["Let ", "me ", "look."]


# -- sessions that ended early ---------------------------------------------------------------


async def _cancelled(tmp_path: Path, *, during_tool: bool) -> Path:
    """A session cancelled while it waited for its second model answer, or for a tool."""
    inner = by_turn(SIMPLE_SCRIPT)
    started = asyncio.Event()

    async def model(request: Any) -> Any:
        turns = sum(1 for m in request.messages if m["role"] == "assistant")
        if turns == 1 and not during_tool:
            started.set()
            await asyncio.sleep(60)
        return inner(request)

    agent = simple_agent(tmp_path / "orig", provider=ScriptedProvider(model))
    if during_tool:
        slow = agent.tools.get("get_weather")
        assert slow is not None

        async def hang(city: str) -> str:
            started.set()
            await asyncio.sleep(60)
            return "never"

        slow.fn = hang  # type: ignore[attr-defined]
    task = asyncio.ensure_future(agent.run("Weather?"))
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    (path,) = (tmp_path / "orig").glob("*.jsonl")
    end = Trace.load(path).end
    assert end is not None and end.stop_reason == "cancelled"
    return path


@pytest.mark.parametrize("during_tool", [False, True])
async def test_a_cancelled_session_replays_to_its_cancellation(
    tmp_path: Path, during_tool: bool
) -> None:
    path = await _cancelled(tmp_path, during_tool=during_tool)
    result = await replay(path, trace_dir=tmp_path / "r")
    assert (result.stop_reason, result.error) == ("cancelled", "the run was cancelled")
    assert result.steps == len(Trace.load(path).steps())
    tape = await play_tape(path, simple_agent(tmp_path / "now"))
    assert tape.stop_reason == "cancelled"


async def test_a_session_stopped_by_a_callback_replays_to_the_same_error(tmp_path: Path) -> None:
    def stop(step: int, delta: str) -> None:
        if step == 4:
            raise KeyError("enough")

    with pytest.raises(KeyError):
        await simple_agent(tmp_path / "orig").run("Weather?", on_text=stop)
    (path,) = (tmp_path / "orig").glob("*.jsonl")
    result = await replay(path, trace_dir=tmp_path / "r")
    assert (result.stop_reason, result.error) == ("error", "KeyError: 'enough'")
    errors = Trace.load(result.trace_path).of_type(ErrorEvent)
    assert [(e.where, e.error_type) for e in errors] == [("agent", "KeyError")]
    await play_tape(path, simple_agent(tmp_path / "now"))


async def test_resume_carries_a_cancelled_session_on_live(tmp_path: Path) -> None:
    path = await _cancelled(tmp_path, during_tool=True)
    result = await simple_agent(tmp_path / "now").resume(path)
    assert result.stop_reason == "end_turn"
