"""A Claude Code transcript opens with its first steps on screen while the rest converts,
then fills in like a trace that is still being written; its subagent opens on Enter even
before the conversion has reached it."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from importers.cc_fixtures import CCSession, text, tool_use
from waits import settle

import regista.importers.memory as memory
import regista_tui.__main__ as tui_main
from regista.importers import convert
from regista.importers.memory import InMemoryRuns, StreamedIndex
from regista_tui.app import RegistaApp
from regista_tui.screens.browser import BrowserScreen


def _long_session_with_subagent(root: Path) -> Path:
    prompt = "Search the code for refund computations"
    s = CCSession()
    s.prompt("Find where refunds are computed")
    s.answer(tool_use("toolu_T1", "Task", description="search", prompt=prompt))
    s.tool_result(
        "toolu_T1",
        [text("In refund.py.")],
        result={"status": "completed", "agentId": "a1b2c3d4", "content": [text("In refund.py.")]},
    )
    for n in range(60):
        s.prompt(f"Next file ({n})")
        s.answer(text("Reading it."), tool_use(f"toolu_L{n:03d}", "Read", file_path=f"m{n}.py"))
        s.tool_result(f"toolu_L{n:03d}", "x = 1\n" * 40)
    path = s.write(root / f"{s.session_id}.jsonl")
    c = CCSession(agent_id="a1b2c3d4", sidechain=True, model="claude-haiku-4-5-20251001")
    c.prompt(prompt)
    c.answer(tool_use("toolu_C1", "Grep", pattern="refund"))
    c.tool_result("toolu_C1", "refund.py:2")
    c.answer(text("In refund.py."))
    c.write(path.parent / path.stem / "subagents" / "agent-a1b2c3d4.jsonl")
    # written an hour ago: a finished session (one written in the last minute is followed)
    then = time.time() - 3600
    os.utime(path, (then, then))
    return path


@pytest.fixture
def small_pieces(monkeypatch: pytest.MonkeyPatch) -> None:
    """A first screen that converts a few lines only, and a fresh in-memory store."""
    monkeypatch.setattr(tui_main, "FIRST_SCAN_BYTES", 3000)
    monkeypatch.setattr(memory, "_LINES", 2)
    monkeypatch.setattr(memory, "RUNS", InMemoryRuns())


@pytest.mark.usefixtures("small_pieces")
async def test_first_screen_then_the_rest_streams_in(tmp_path: Path) -> None:
    path = _long_session_with_subagent(tmp_path / "project")
    before = sorted(os.listdir(path.parent))
    whole = convert("claude-code", path).main
    steps = whole.events[-1]["steps"]
    index, notice = tui_main.open_index(path)
    assert isinstance(index, StreamedIndex)
    assert not index.streaming.done and 0 < len(index.steps) < steps
    app = RegistaApp(index, notice=notice, settle_s=0)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, BrowserScreen)
        assert screen.timeline.cursor == 0
        header = str(screen.query_one("#header").render())
        assert "crashed" not in header  # a transcript still converting is not a crash
        screen._scan()  # what the screen starts once the first frame is up
        await screen.workers.wait_for_complete()
        await settle(pilot)
        assert index.streaming.done and index.end is not None
        assert len(index.steps) == steps
        assert "ended without a stop reason" in str(screen.query_one("#header").render())
        await pilot.press("end")
        assert screen.timeline.cursor == steps - 1
    assert sorted(os.listdir(path.parent)) == before  # nothing written beside it


@pytest.mark.usefixtures("small_pieces")
async def test_enter_on_a_subagent_before_the_conversion_reached_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The screen's own scan would finish so small a conversion at once: hold it back.
    monkeypatch.setattr(BrowserScreen, "_scan", lambda self: None)
    path = _long_session_with_subagent(tmp_path / "project")
    index, notice = tui_main.open_index(path)
    assert isinstance(index, StreamedIndex) and not index.streaming.done
    app = RegistaApp(index, notice=notice, settle_s=0)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        parent = app.screen
        assert isinstance(parent, BrowserScreen)
        assert not index.streaming.done
        await pilot.press("j")  # step 1: the Task call
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        child = app.screen
        assert isinstance(child, BrowserScreen) and child is not parent
        assert child.index.start is not None
        assert child.index.start.model == "claude-haiku-4-5-20251001"
        assert child.index.start.metadata["parent"]["step"] == 1
        await pilot.press("escape")
        await settle(pilot)
        assert app.screen is parent and parent.timeline.cursor == 1
