"""The debugger's loops (o / O, ↻ on the scrubber), bar column (g) and breakdown (w)."""

from __future__ import annotations

from pathlib import Path

from shown import text_of
from waits import settle, until

from regista_tui.__main__ import open_index
from regista_tui.app import RegistaApp
from regista_tui.screens.browser import BrowserScreen
from regista_tui.screens.where import WhereScreen

SAMPLES = Path(__file__).parents[2] / "sample_traces"


def _table(app: RegistaApp) -> str:
    from textual.widgets import DataTable

    table = app.screen.query_one("#where-table", DataTable)
    return "\n".join(" ".join(map(str, table.get_row_at(i))) for i in range(table.row_count))


def _scrubber(app: RegistaApp) -> str:
    from regista_tui.widgets.timeline.scrubber import Scrubber

    return "".join(ch for ch, _ in app.screen.query_one(Scrubber)._layout(60))


def _app(name: str) -> RegistaApp:
    index, notice = open_index(SAMPLES / name)
    return RegistaApp(index, notice=notice, settle_s=0)


async def test_o_goes_to_each_repeat_of_the_search_loop() -> None:
    app = _app("refund_search_loop.jsonl")
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        browser = app.screen
        assert isinstance(browser, BrowserScreen)
        await until(pilot, lambda: len(browser.repeats) == 9, "the repeats found")
        await pilot.press("o")
        await until(pilot, lambda: browser.timeline.cursor == 11, "the cursor on step 11")
        assert "↻ step 11: same tool call as step 1" in text_of(app, "#status")
        await pilot.press("o")
        await until(pilot, lambda: browser.timeline.cursor == 12, "the cursor on step 12")
        await pilot.press("O")
        await until(pilot, lambda: browser.timeline.cursor == 11, "back on step 11")
        assert "↻" in _scrubber(app)
        assert "↻" in str(browser.timeline.row_text(11, 100))


async def test_a_clean_run_has_no_repeat_to_go_to() -> None:
    app = _app("refund_happy.jsonl")
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        browser = app.screen
        assert isinstance(browser, BrowserScreen)
        await pilot.press("o")
        await settle(pilot)
        assert browser.repeats == {}
        assert "No step after this one repeats an earlier one" in text_of(app, "#status")


async def test_g_cycles_the_bar_column() -> None:
    app = _app("refund_search_loop.jsonl")
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        browser = app.screen
        assert isinstance(browser, BrowserScreen)
        seen = []
        for _ in range(4):
            await pilot.press("g")
            await settle(pilot)
            seen.append(browser.timeline.bars)
        assert seen == ["time", "tokens", "cost", None]
        await pilot.press("g")  # time: a tool step's 500 ms is longer than a model's 250 ms
        await settle(pilot)
        tool, model = browser.timeline.row_text(1, 100), browser.timeline.row_text(0, 100)
        assert str(tool).rstrip().count("█") >= str(model).rstrip().count("█")
        assert "Bars: each step's time" in text_of(app, "#status")


async def test_w_shows_where_the_time_and_money_went() -> None:
    app = _app("refund_search_loop.jsonl")
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        await pilot.press("w")
        await until(pilot, lambda: isinstance(app.screen, WhereScreen), "the table opened")
        await until(pilot, lambda: "search_orders" in _table(app), "the rows")
        table = _table(app)
        assert "search_orders" in table and "100%" in table
        await pilot.press("tab")
        await until(pilot, lambda: "(tools)" in _table(app), "by model")
        await pilot.press("escape")
        await until(pilot, lambda: isinstance(app.screen, BrowserScreen), "closed")


def test_the_bars_and_the_table_snapshot(snap_compare: object) -> None:
    async def run_before(pilot: object) -> None:
        await settle(pilot)  # type: ignore[arg-type]
        await pilot.press("g", "g")  # type: ignore[attr-defined]
        await settle(pilot)  # type: ignore[arg-type]

    assert snap_compare(
        _app("refund_search_loop.jsonl"), terminal_size=(120, 30), run_before=run_before
    )  # type: ignore[operator]
