"""Enter on a step that started a subagent opens its run; Escape comes back."""

from __future__ import annotations

from pathlib import Path

from importers.cc_fixtures import session_with_subagent
from waits import settle, until

from regista_tui.__main__ import open_index
from regista_tui.app import RegistaApp
from regista_tui.screens.browser import BrowserScreen


async def _enter_and_back(path: Path, model: str = "claude-haiku-4-5-20251001") -> None:
    index, notice = open_index(path)
    app = RegistaApp(index, notice=notice, settle_s=0)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        parent = app.screen
        assert isinstance(parent, BrowserScreen)
        await pilot.press("enter")  # step 0 is a model call: nothing to open
        await settle(pilot)
        assert app.screen is parent
        await pilot.press("j")  # step 1: the Task call
        await until(pilot, lambda: parent.timeline.cursor == 1, "the cursor on step 1")
        await pilot.press("enter")
        await until(pilot, lambda: app.screen is not parent, "the subagent's run opened")
        await settle(pilot)
        child = app.screen
        assert isinstance(child, BrowserScreen) and child is not parent
        assert child.index.start is not None
        assert child.index.start.model == model
        assert len(child.index.steps) == 3
        assert child.index.start.metadata["parent"]["step"] == 1
        await pilot.press("escape")
        await settle(pilot)
        assert app.screen is parent
        assert parent.timeline.cursor == 1
        await pilot.press("escape")  # the first run has nothing to go back to
        await settle(pilot)
        assert app.screen is parent


async def test_enter_opens_a_subagent_run_in_memory(tmp_path: Path) -> None:
    await _enter_and_back(session_with_subagent(tmp_path / "project"))


async def test_two_transcripts_with_one_session_id_each_open_their_own_subagent(
    tmp_path: Path,
) -> None:
    """A copy of a session, or the same session id in two projects: each transcript's
    subagent is its own, whichever was opened first in the process."""
    await _enter_and_back(session_with_subagent(tmp_path / "a"))
    await _enter_and_back(
        session_with_subagent(tmp_path / "b", "claude-opus-4-1"), "claude-opus-4-1"
    )


async def test_a_transcript_that_changed_is_converted_again(tmp_path: Path) -> None:
    path = session_with_subagent(tmp_path / "project")
    await _enter_and_back(path)
    session_with_subagent(tmp_path / "project", "claude-opus-4-1")  # rewritten in place
    await _enter_and_back(path, "claude-opus-4-1")


async def test_enter_opens_an_imported_subagent_trace(tmp_path: Path) -> None:
    from regista.importers import convert_file, write_runs

    conv = convert_file(session_with_subagent(tmp_path / "project"))
    assert conv is not None
    written = write_runs(conv, tmp_path / "traces")
    await _enter_and_back(written[0])


async def test_enter_opens_a_codex_subagent_run(tmp_path: Path) -> None:
    from importers.codex_fixtures import (
        CHILD,
        THREAD,
        rollout_name,
        spawning_rollout,
        subagent_rollout,
    )

    day = tmp_path / "sessions" / "2026" / "02" / "11"
    path = spawning_rollout().write(day / rollout_name(THREAD))
    subagent_rollout().write(day / rollout_name(CHILD, "2026-02-11T08-27-25"))
    index, notice = open_index(path)
    app = RegistaApp(index, notice=notice, settle_s=0)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        parent = app.screen
        assert isinstance(parent, BrowserScreen)
        await pilot.press("j")  # step 1: the spawn_agent call
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        child = app.screen
        assert isinstance(child, BrowserScreen) and child is not parent
        assert child.index.start is not None
        assert child.index.start.model == "gpt-5.1-codex-mini"
        assert child.index.start.metadata["parent"]["step"] == 1
        await pilot.press("escape")
        await settle(pilot)
        assert app.screen is parent and parent.timeline.cursor == 1
