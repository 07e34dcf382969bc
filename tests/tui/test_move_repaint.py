"""A step move repaints what changed: two rows of the timeline and the border lines that
say where the cursor is, not the whole list or the whole step view."""

from __future__ import annotations

from typing import Any

import pytest

from regista_tui.app import RegistaApp
from regista_tui.widgets.step.step_view import StepView
from regista_tui.widgets.timeline.timeline import Timeline


async def test_a_move_repaints_rows_and_border_lines_only(
    browser_app: RegistaApp, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with browser_app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
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
        await pilot.pause()
        assert timeline.cursor == 1
        assert whole == []
        assert timeline.border_subtitle is not None and "2/" in timeline.border_subtitle
        assert view.border_title is not None and view.border_title.startswith("Step 1 ")
