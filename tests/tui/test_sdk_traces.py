"""Traces recorded from plain SDK traffic open in the debugger, alone and beside a fork."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from waits import settle

from regista.trace.index import TraceIndex
from regista.wire.sessions import SessionBook
from regista.wire.shapes import openai_request, openai_response
from regista_tui.app import RegistaApp
from regista_tui.screens.compare import CompareScreen

ASK = [
    {"role": "system", "content": "You are a weather bot."},
    {"role": "user", "content": "Weather in Paris?"},
]
CALL = {"id": "call_1", "type": "function",
        "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}  # fmt: skip


def _completion(message: dict[str, Any], finish: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1,
        "model": "gpt-4o",
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }


def _openai_session(folder: Path, final: str, forked_from: dict[str, Any] | None = None) -> Path:
    book = SessionBook(folder, forked_from=forked_from)
    first = {"model": "gpt-4o", "messages": ASK}
    book.record(
        "openai",
        openai_request(first),
        openai_response(_completion({"role": "assistant", "content": None,
                                     "tool_calls": [CALL]}, "tool_calls")),
    )  # fmt: skip
    second = {
        "model": "gpt-4o",
        "messages": [
            *ASK,
            {"role": "assistant", "content": None, "tool_calls": [CALL]},
            {"role": "tool", "tool_call_id": "call_1", "content": "sunny"},
        ],
    }
    answer = openai_response(_completion({"role": "assistant", "content": final}, "stop"))
    book.record("openai", openai_request(second), answer)
    book.close()
    (path,) = book.paths
    return path


async def test_an_openai_conversation_and_its_fork_compare(tmp_path: Path) -> None:
    parent = _openai_session(tmp_path / "a", "It is sunny.")
    fork = _openai_session(
        tmp_path / "b", "Bring an umbrella.", {"session_id": parent.stem, "at_step": 2}
    )
    app = RegistaApp(compare=(parent, fork))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await app.workers.wait_for_complete()
        screen = app.screen
        assert isinstance(screen, CompareScreen)
        await screen.workers.wait_for_complete()
        for _ in range(5):
            await settle(pilot)
            if screen.diff is not None:
                break
        assert screen.diff is not None
        assert screen.diff.first_divergence is not None
        assert screen.diff.first_divergence.index == 2


async def test_an_openai_trace_shows_its_steps(tmp_path: Path) -> None:
    path = _openai_session(tmp_path, "It is sunny.")
    index = TraceIndex(path)
    index.scan()
    assert [s.kind for s in index.steps] == ["model", "tool", "model"]
    app = RegistaApp(index)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await app.workers.wait_for_complete()
        await settle(pilot)
        shown = " ".join(str(w.render()) for w in app.screen.query("Static"))
        assert "gpt-4o (openai)" in shown and "3 steps" in shown and "1 tool call" in shown
