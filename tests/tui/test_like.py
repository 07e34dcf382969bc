"""Runs like this one (``L`` in the browser): recall from the selected step's words."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from runs_library import FAILED, OTHER, ROOT, make_library
from waits import settle

from regista.trace.index import TraceIndex
from regista_tui.__main__ import open_index
from regista_tui.app import RegistaApp
from regista_tui.like import like_words
from regista_tui.screens.browser import BrowserScreen
from regista_tui.screens.runs import RunsScreen


@pytest.fixture(scope="module")
def library(trace_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_library(trace_path, tmp_path_factory.mktemp("like") / "traces")


def _browser(path: Path) -> RegistaApp:
    index, notice = open_index(path)
    return RegistaApp(index, notice=notice, settle_s=0)


def _status(app: RegistaApp) -> str:
    return str(app.screen.query_one("#status").render())


def test_words_of_a_tool_step_and_a_model_step(trace_path: Path) -> None:
    index = TraceIndex(trace_path)
    index.scan()
    try:
        kinds = {index.steps[p].kind: p for p in reversed(range(len(index)))}
        tool = like_words(index.step(kinds["tool"]))
        assert tool.split()[0] == index.steps[kinds["tool"]].tool
        model = like_words(index.step(kinds["model"]))
        assert model and model == like_words(index.step(kinds["model"]))  # deterministic
        assert len(model.split()) <= 5
    finally:
        index.close()


async def test_like_lists_the_other_runs_and_escape_comes_back(library: Path) -> None:
    app = _browser(library / f"{ROOT}.jsonl")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("j")  # step 1: a tool call
        browser = app.screen
        assert isinstance(browser, BrowserScreen)
        words = like_words(browser.index.step(1))
        await pilot.press("L")
        await browser.workers.wait_for_complete()
        await settle(pilot)
        runs = app.screen
        assert isinstance(runs, RunsScreen)
        listed = {run.session_id for run, _ in runs.rows}
        assert {OTHER, FAILED} <= listed and ROOT not in listed  # not the run itself
        header = str(runs.query_one("#runs-header").render())
        assert f"recalled by {words!r}" in header
        await pilot.press("escape")
        await settle(pilot)
        assert app.screen is browser
        assert browser.timeline.cursor == 1


async def test_a_lone_trace_has_no_earlier_runs(trace_path: Path, tmp_path: Path) -> None:
    lone = tmp_path / trace_path.name
    shutil.copyfile(trace_path, lone)
    app = _browser(lone)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("j", "L")
        await app.screen.workers.wait_for_complete()
        await settle(pilot)
        assert isinstance(app.screen, BrowserScreen)
        assert "No earlier runs found" in _status(app)
