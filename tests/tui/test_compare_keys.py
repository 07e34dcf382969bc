"""The comparison's status line follows the cursor, and ``/`` searches both runs."""

from __future__ import annotations

from pathlib import Path

from shown import text_of
from waits import settle

from regista_tui.app import RegistaApp
from regista_tui.screens.compare import CompareScreen
from regista_tui.widgets.diff.pair_list import PairList


async def _ready(app: RegistaApp) -> CompareScreen:
    await app.workers.wait_for_complete()
    screen = app.screen
    assert isinstance(screen, CompareScreen)
    await screen.workers.wait_for_complete()
    for _ in range(5):
        await app.wait_for_refresh()
        if screen.diff is not None:
            break
    assert screen.diff is not None
    return screen


async def test_the_difference_line_is_cleared_when_the_cursor_leaves(
    trace_path: Path, other_trace_path: Path
) -> None:
    app = RegistaApp(compare=(trace_path, other_trace_path))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await _ready(app)
        await pilot.press("n")
        await settle(pilot)
        assert "Difference" in text_of(app, "#status")
        await pilot.press("colon", "0", "enter")
        await settle(pilot)
        assert app.screen.query_one(PairList).cursor == 0
        assert "Difference" not in text_of(app, "#status")
        await pilot.press("n")
        await settle(pilot)
        assert "Difference" in text_of(app, "#status")
        await pilot.press("end")
        await settle(pilot)
        assert text_of(app, "#status").strip() == ""


async def test_slash_searches_both_runs(trace_path: Path, other_trace_path: Path) -> None:
    app = RegistaApp(compare=(trace_path, other_trace_path))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        screen = await _ready(app)
        assert screen.diff is not None
        pairs = app.screen.query_one(PairList)
        await pilot.press("home")
        await pilot.press("slash", *"refund", "enter")
        await screen.workers.wait_for_complete()
        await settle(pilot)
        first = pairs.cursor
        status = text_of(app, "#status")
        assert "'refund': match 1 of" in status, status
        # / Enter again: the next match, the query kept
        await pilot.press("slash", "enter")
        await screen.workers.wait_for_complete()
        await settle(pilot)
        assert pairs.cursor > first
        assert "'refund': match 2 of" in text_of(app, "#status")
        await pilot.press("slash", "ctrl+u", *"zzqx", "enter")
        await screen.workers.wait_for_complete()
        await settle(pilot)
        assert "no step of either run shows it" in text_of(app, "#status")
