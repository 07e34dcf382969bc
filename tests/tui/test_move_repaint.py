"""A step move repaints what changed: two rows of the timeline and the border lines that
say where the cursor is, not the whole list or the whole step view, and lays out nothing."""

from __future__ import annotations

import gc
from pathlib import Path
from typing import Any

import pytest
from rich.text import Text
from textual.geometry import Offset
from textual.selection import Selection
from textual.widget import Widget
from waits import settle

import regista_tui.__main__ as tui_main
from regista.trace.index import StepEntry
from regista_tui.app import RegistaApp
from regista_tui.screens.browser import BrowserScreen
from regista_tui.widgets.step.body import StepBody
from regista_tui.widgets.step.step_view import StepView
from regista_tui.widgets.timeline.timeline import Timeline


async def test_a_move_repaints_rows_and_border_lines_only(
    browser_app: RegistaApp, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with browser_app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        timeline = browser_app.screen.query_one(Timeline)
        view = browser_app.screen.query_one(StepView)
        whole: list[str] = []
        for widget in (timeline, view):
            original = widget._set_dirty  # what a repaint marks (no regions: all of it)

            def spy(*regions: Any, _w: Any = widget, _o: Any = original) -> Any:
                if not regions:
                    whole.append(type(_w).__name__)
                return _o(*regions)

            monkeypatch.setattr(widget, "_set_dirty", spy)
        await pilot.press("j")
        await settle(pilot)
        assert timeline.cursor == 1
        assert whole == []
        assert timeline.border_subtitle is not None and "2/" in timeline.border_subtitle
        assert view.border_title is not None and view.border_title.startswith("Step 1 ")


async def test_a_move_lays_out_nothing(
    browser_app: RegistaApp, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A new step's text changes how far its pane scrolls, not the size of any widget: no
    layout of the screen (it costs a full repaint), whatever the steps' heights."""
    async with browser_app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        layouts: list[str] = []
        original = Widget.refresh

        def spy(self: Widget, *regions: Any, **kwargs: Any) -> Any:
            # What a move draws: the header, the timeline, the scrubber and the step view
            # (the footer may recompose its keys on its own schedule).
            ours = any(w.id in ("main", "header") for w in self.ancestors_with_self)
            if kwargs.get("layout") and ours:
                layouts.append(f"{type(self).__name__}#{self.id}")
            return original(self, *regions, **kwargs)

        monkeypatch.setattr(Widget, "refresh", spy)
        body = browser_app.screen.query_one("#step-body", StepBody)
        heights = set()
        for _ in range(6):
            await pilot.press("j")
            await settle(pilot)
            heights.add(body.virtual_size.height)
        assert len(heights) > 1  # the steps' texts differ in height
        assert layouts == []


async def test_a_step_shown_again_is_not_rendered_again(
    browser_app: RegistaApp, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with browser_app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("j")
        await settle(pilot)
        body = browser_app.screen.query_one("#step-body", StepBody)
        first = body.get_selection(Selection(None, None))
        rendered: list[object] = []
        monkeypatch.setattr(
            "regista_tui.widgets.step.step_view.render_step",
            lambda *a, **k: rendered.append(a) or Text("redrawn"),
        )
        await pilot.press("k", "j")
        await settle(pilot)
        assert rendered == []
        assert body.get_selection(Selection(None, None)) == first


async def test_step_text_can_be_selected(browser_app: RegistaApp) -> None:
    """The pane's text is selectable as a Static's is: what is selected is its plain text,
    whatever part of it is scrolled into view."""
    async with browser_app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        body = browser_app.screen.query_one("#step-body", StepBody)
        selected = body.get_selection(Selection(Offset(0, 0), Offset(0, 3)))
        assert selected is not None
        lines = selected[0].splitlines()
        assert len(lines) == 3
        assert lines[0].startswith("Response")


async def test_the_next_step_is_drawn_before_the_move(
    browser_app: RegistaApp, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Once the cursor rests, the steps either side of it are drawn unseen: the next press
    shows its step without rendering it, and it shows the same text as drawing it then."""
    async with browser_app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        body = browser_app.screen.query_one("#step-body", StepBody)
        await pilot.pause(0.2)  # the cursor rests on step 0
        assert body.has((1, 2000))
        rendered: list[int] = []
        monkeypatch.setattr(
            "regista_tui.widgets.step.step_view.render_step",
            lambda step, **k: rendered.append(step.index) or Text("redrawn"),
        )
        await pilot.press("j")
        await settle(pilot)
        assert 1 not in rendered  # (step 2 may be drawn by now, unseen)
        kept = body.get_selection(Selection(None, None))
        body._kept.clear()
        monkeypatch.undo()
        view = browser_app.screen.query_one(StepView)
        view._drawn = None
        view.refresh_active()
        assert body.get_selection(Selection(None, None)) == kept


async def _scanned(pilot: Any, app: RegistaApp) -> None:
    """Until a cold-opened trace is warm and scanned to its end, and the screen says so."""
    index = app.screen.index  # type: ignore[attr-defined]
    for _ in range(200):
        if not index.cold and index.scanned >= index.size:
            break
        await pilot.pause(0.05)
    await app.screen.workers.wait_for_complete()
    await settle(pilot)
    await settle(pilot)


async def test_the_index_growing_lays_out_nothing(
    trace_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As the background scan indexes more of a trace, the timeline gets more rows and the
    header new counts: both are repainted, the screen is not laid out again."""
    monkeypatch.setattr(tui_main, "FIRST_SCAN_BYTES", 2000)
    index, notice = tui_main.open_index(trace_path)
    app = RegistaApp(index, notice=notice, settle_s=0)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await _scanned(pilot, app)
        before = len(index)
        layouts: list[str] = []
        original = Widget.refresh

        def spy(self: Widget, *regions: Any, **kwargs: Any) -> Any:
            ours = any(w.id in ("main", "header") for w in self.ancestors_with_self)
            if kwargs.get("layout") and ours:
                layouts.append(f"{type(self).__name__}#{self.id}")
            return original(self, *regions, **kwargs)

        monkeypatch.setattr(Widget, "refresh", spy)
        screen = app.screen
        assert isinstance(screen, BrowserScreen)
        index.steps.append(StepEntry(index=before, kind="tool", tool="x", complete=True))
        screen._grown()
        await settle(pilot)
        assert layouts == []
        assert screen.timeline.virtual_size.height == before + 1


async def test_the_scanned_index_is_left_out_of_full_collections(
    trace_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Once the scan is done its objects are collected once and frozen, so a full
    collection later (during a key press) does not walk a big trace's index."""
    monkeypatch.setattr(tui_main, "FIRST_SCAN_BYTES", 2000)
    index, notice = tui_main.open_index(trace_path)
    app = RegistaApp(index, notice=notice, settle_s=0)
    gc.unfreeze()
    try:
        async with app.run_test(size=(120, 40)) as pilot:
            await settle(pilot)
            await _scanned(pilot, app)
            assert index.scanned == index.size
            assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()
