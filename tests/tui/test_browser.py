"""Pilot tests of the browser: scrubbing, rr-style jumps, breakpoints, search, go-to-step."""

from __future__ import annotations

from pathlib import Path

from shown import text_of
from textual import events
from waits import settle

from regista.trace.index import TraceIndex
from regista_tui.__main__ import open_index
from regista_tui.app import RegistaApp
from regista_tui.screens.browser import BrowserScreen
from regista_tui.screens.help import HelpScreen
from regista_tui.search import search_steps
from regista_tui.widgets.step.body import StepBody
from regista_tui.widgets.step.step_view import StepView
from regista_tui.widgets.timeline.timeline import Timeline


def _cursor(app: RegistaApp) -> int:
    return app.screen.query_one(Timeline).cursor


async def test_opens_on_the_first_step(browser_app: RegistaApp) -> None:
    async with browser_app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert isinstance(browser_app.screen, BrowserScreen)
        assert _cursor(browser_app) == 0
        assert "Refund order A-404 please." in text_of(browser_app, "#step-body")
        assert "scripted" in text_of(browser_app, "#header")


async def test_up_down_jk_page_home_end(browser_app: RegistaApp) -> None:
    async with browser_app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("down", "j", "j")
        assert _cursor(browser_app) == 3
        await pilot.press("k", "up")
        assert _cursor(browser_app) == 1
        await pilot.press("end")
        assert _cursor(browser_app) == 7
        assert "refunds need approval" in text_of(browser_app, "#step-body")
        await pilot.press("home")
        assert _cursor(browser_app) == 0
        await pilot.press("pagedown")
        assert _cursor(browser_app) == 7
        await pilot.press("pageup")
        assert _cursor(browser_app) == 0
        await pilot.press("up")
        assert _cursor(browser_app) == 0


async def test_click_on_a_row_and_on_the_scrubber(browser_app: RegistaApp) -> None:
    async with browser_app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.click(Timeline, offset=(5, 3))
        assert _cursor(browser_app) == 3
        scrubber = browser_app.screen.query_one("#scrubber")
        await pilot.click("#scrubber", offset=(scrubber.size.width - 2, 0))
        assert _cursor(browser_app) == 7


async def test_go_to_step(browser_app: RegistaApp) -> None:
    async with browser_app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("colon", "5", "enter")
        assert _cursor(browser_app) == 5
        await pilot.press("colon", "9", "9", "enter")
        assert _cursor(browser_app) == 5
        assert "no step 99" in text_of(browser_app, "#status")
        await pilot.press("colon", "escape")
        assert isinstance(browser_app.screen, BrowserScreen)


async def test_next_and_previous_error(browser_app: RegistaApp) -> None:
    async with browser_app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("x")
        assert _cursor(browser_app) == 1
        await pilot.press("x")
        assert _cursor(browser_app) == 5  # the denied refund
        await pilot.press("x")
        assert _cursor(browser_app) == 5
        assert "No error" in text_of(browser_app, "#status")
        await pilot.press("X")
        assert _cursor(browser_app) == 1


async def test_same_kind_and_same_tool(browser_app: RegistaApp) -> None:
    async with browser_app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("s")
        assert _cursor(browser_app) == 2
        await pilot.press("s", "s")
        assert _cursor(browser_app) == 7
        await pilot.press("S")
        assert _cursor(browser_app) == 4
        await pilot.press("home", "j", "t")  # lookup_order → the next lookup_order
        assert _cursor(browser_app) == 3
        await pilot.press("t")  # no third lookup_order: stays
        assert _cursor(browser_app) == 3
        await pilot.press("T")
        assert _cursor(browser_app) == 1


async def test_breakpoints_continue_and_reverse_continue(browser_app: RegistaApp) -> None:
    async with browser_app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("c")
        assert "No breakpoints" in text_of(browser_app, "#status")
        await pilot.press("j", "b")  # on lookup_order
        assert "tool:lookup_order" in text_of(browser_app, "#status")
        await pilot.press("home", "c")
        assert _cursor(browser_app) == 1
        await pilot.press("c")
        assert _cursor(browser_app) == 3
        await pilot.press("end", "C")
        assert _cursor(browser_app) == 3
        await pilot.press("home", "colon", "6", "enter", "B")  # break on compactions too
        await pilot.press("home", "c", "c", "c")
        assert _cursor(browser_app) == 6
        await pilot.press("C")
        assert _cursor(browser_app) == 3
        await pilot.press("D")  # delete them all
        assert "Deleted the breakpoints on compaction, tool:lookup_order" in text_of(
            browser_app, "#status"
        )
        await pilot.press("c")
        assert _cursor(browser_app) == 3 and "No breakpoints" in text_of(browser_app, "#status")
        await pilot.press("D")
        assert "No breakpoints to delete" in text_of(browser_app, "#status")


async def test_search_then_n_and_N(browser_app: RegistaApp) -> None:
    async with browser_app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("slash", *"a-100", "enter")
        await browser_app.workers.wait_for_complete()
        await settle(pilot)
        first = _cursor(browser_app)
        assert first == 2  # the model's text mentions the other order
        assert "match 1 of" in text_of(browser_app, "#status")
        await pilot.press("n")
        assert _cursor(browser_app) > first
        await pilot.press("N")
        assert _cursor(browser_app) == first


async def test_search_starts_at_the_cursor_and_wraps(browser_app: RegistaApp) -> None:
    async with browser_app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        # lookup_order is in steps 0-4 and 6: from step 7 the search wraps round to step 0
        await pilot.press("end", "slash", *"lookup_order", "enter")
        await browser_app.workers.wait_for_complete()
        await settle(pilot)
        assert _cursor(browser_app) == 0
        assert "match 1 of 6" in text_of(browser_app, "#status")
        await pilot.press("colon", "5", "enter", "slash", "enter")  # again, from step 5
        await browser_app.workers.wait_for_complete()
        await settle(pilot)
        assert _cursor(browser_app) == 6
        assert "match 6 of 6" in text_of(browser_app, "#status")


def test_search_steps_reports_its_first_match_at_once(trace_path: Path) -> None:
    index = TraceIndex(trace_path)
    index.scan()
    every = search_steps(index, "lookup_order")
    assert every == [0, 1, 2, 3, 4, 6]
    firsts: list[int] = []
    assert search_steps(index, "lookup_order", start=7, on_first=firsts.append) == every
    assert firsts == [0]  # wrapped round
    firsts.clear()
    assert search_steps(index, "lookup_order", start=5, on_first=firsts.append) == every
    assert firsts == [6]
    assert search_steps(index, "lookup_order", cancelled=lambda: True) == []


async def test_search_ignores_tool_schemas(browser_app: RegistaApp) -> None:
    async with browser_app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("slash", *"Refund an order", "enter")
        await browser_app.workers.wait_for_complete()
        await settle(pilot)
        assert "No step contains" in text_of(browser_app, "#status")


async def test_request_diff_tab(browser_app: RegistaApp) -> None:
    async with browser_app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("j", "j", "v", "v")
        assert browser_app.screen.query_one(StepView).active_tab == "tab-diff"
        await browser_app.workers.wait_for_complete()
        await settle(pilot)
        text = text_of(browser_app, "#diff-body")
        assert "request.messages[1]" in text
        assert "request.messages[2]" in text


async def test_raw_json_tab(browser_app: RegistaApp) -> None:
    async with browser_app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("j", "v")
        await settle(pilot)
        view = browser_app.screen.query_one(StepView)
        assert view.active_tab == "tab-raw"
        shown = [body.id for body in view.query(StepBody) if body.display]
        assert shown == ["raw-body"]
        assert '"type": "tool.call"' in text_of(browser_app, "#raw-body")
        await pilot.click("#tab-step")  # a click on a tab shows its pane, and only it
        await settle(pilot)
        assert view.active_tab == "tab-step"
        assert [body.id for body in view.query(StepBody) if body.display] == ["step-body"]


async def test_help_lists_the_keys(browser_app: RegistaApp) -> None:
    async with browser_app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("question_mark")
        assert isinstance(browser_app.screen, HelpScreen)
        await pilot.press("escape")
        assert isinstance(browser_app.screen, BrowserScreen)


async def test_quit(browser_app: RegistaApp) -> None:
    async with browser_app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("q")
        assert not browser_app.is_running


async def test_j_and_k_move_the_cursor_when_the_step_view_has_the_focus(
    browser_app: RegistaApp,
) -> None:
    async with browser_app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.click("#step-view", offset=(10, 10))  # e.g. to scroll it
        assert browser_app.focused is not browser_app.screen.query_one(Timeline)
        await pilot.press("j", "j", "k")
        assert _cursor(browser_app) == 1
        await pilot.press("tab")
        await pilot.press("j")
        assert _cursor(browser_app) == 2


def test_search_matches_what_the_step_view_shows_not_the_json_around_it(
    trace_path: Path,
) -> None:
    """Events are stored as JSON, but "role" or "content" appear on no step's screen."""
    index = TraceIndex(trace_path)
    index.scan()
    for hidden in ("role", "content", "type", "\\"):
        assert search_steps(index, hidden) == [], hidden
    assert search_steps(index, "user")  # a message's role is shown ("[0] user")
    assert search_steps(index, '"order_id"')  # tool inputs are drawn as JSON


def _app(path: Path) -> RegistaApp:
    index, notice = open_index(path)
    return RegistaApp(index, notice=notice, settle_s=0)


async def test_the_step_pane_says_which_lines_are_in_view(trace_path: Path) -> None:
    """The pane has no scroll bar: its border says "lines a–b of n" when the step is
    taller than the pane, follows a scroll and another tab, and says nothing when it fits."""
    browser_app = _app(trace_path)
    async with browser_app.run_test(size=(100, 14)) as pilot:
        await settle(pilot)
        view = browser_app.screen.query_one(StepView)
        body = view.query_one("#step-body", StepBody)
        total = len(body._lines)
        height = body.scrollable_content_region.height
        assert total > height
        assert view.border_subtitle == f"lines 1–{height} of {total}"
        body.scroll_to(y=2, animate=False, immediate=True)
        await settle(pilot)
        assert view.border_subtitle == f"lines 3–{height + 2} of {total}"
        # the mouse wheel scrolls the pane without a scroll bar to grab
        body.post_message(events.MouseScrollDown(body, 1, 1, 0, 1, 0, False, False, False))
        await settle(pilot)
        await pilot.wait_for_scheduled_animations()  # the wheel scrolls smoothly
        await settle(pilot)
        assert body.scroll_offset.y > 2
        top = body.scroll_offset.y
        assert view.border_subtitle == f"lines {top + 1}–{top + height} of {total}"
        await pilot.press("v")  # the raw JSON of the step: longer
        await settle(pilot)
        raw = view.query_one("#raw-body", StepBody)
        assert view.border_subtitle == f"lines 1–{height} of {len(raw._lines)}"
        assert len(raw._lines) != total
    browser_app = _app(trace_path)
    async with browser_app.run_test(size=(200, 60)) as pilot:
        await settle(pilot)
        view = browser_app.screen.query_one(StepView)
        assert len(view.query_one("#step-body", StepBody)._lines) < 40
        assert not view.border_subtitle
