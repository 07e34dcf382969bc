"""What a person meets the first time through: the palette, counts, stale lines, cut text."""

from __future__ import annotations

from pathlib import Path

import pytest
from fork_helpers import LOOP, browser, open_editor
from shown import plain, text_of
from textual.app import App, ComposeResult
from textual.command import CommandPalette
from textual.content import Content
from textual.geometry import Region
from textual.widgets import Static
from waits import settle

from regista.trace.index import TraceIndex
from regista_tui.__main__ import open_index
from regista_tui.app import RegistaApp
from regista_tui.screens.browser import BrowserScreen
from regista_tui.screens.fork import ForkScreen
from regista_tui.screens.prompt import SearchPrompt
from regista_tui.widgets.header.session_header import SessionHeader
from regista_tui.widgets.timeline.timeline import Timeline


def _first_lines(path: Path, n: int) -> int:
    """How many bytes the first ``n`` lines of ``path`` take."""
    return sum(len(line) for line in path.read_bytes().splitlines(keepends=True)[:n])


def _cursor(app: RegistaApp) -> int:
    return app.screen.query_one(Timeline).cursor


async def test_the_palette_lists_the_search_command(browser_app: RegistaApp) -> None:
    """The search key is "/": its "[/]" in the palette's help must not be read as markup."""
    async with browser_app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+p")
        await settle(pilot)
        assert isinstance(browser_app.screen, CommandPalette)
        await pilot.press(*"search")
        await browser_app.workers.wait_for_complete()
        await pilot.pause(0.1)
        assert browser_app.is_running
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(browser_app.screen, SearchPrompt)


async def test_the_palette_shows_every_key(browser_app: RegistaApp) -> None:
    """Each command's help ends with its key in brackets, upper case ones too ("[N]")."""
    async with browser_app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        shown = {
            command.title: Content.from_markup(command.help).plain
            for command in browser_app.get_system_commands(browser_app.screen)
        }
        assert shown["Previous search match"].endswith("[N]"), shown
        assert shown["Search step text"].endswith("[/]"), shown
        assert shown["Edit this step's result or answer, then fork live from it"].endswith("[e]")
        assert "Keys" not in shown  # one list of keys: the help screen


async def test_the_palette_lists_each_command_once(browser_app: RegistaApp) -> None:
    """One entry per command: its title once (``q`` and ctrl+q are one "Quit"), and its
    help line the key, not the title said again."""
    async with browser_app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        commands = list(browser_app.get_system_commands(browser_app.screen))
        titles = [command.title for command in commands]
        assert len(titles) == len(set(titles)), sorted(titles)
        assert titles.count("Quit") == 1
        for command in commands:
            help_line = Content.from_markup(command.help).plain
            assert not help_line.startswith(f"{command.title}  ["), (command.title, help_line)


async def test_header_counts_errors_apart_from_denials(browser_app: RegistaApp) -> None:
    """The trace has one failed tool call and one denied one: "1 error · 1 denied"."""
    async with browser_app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        header = text_of(browser_app, "#header")
        assert "1 error · 1 denied" in header, header
        assert "errors" not in header


async def test_timeline_count_follows_the_index(
    trace_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The "step N · i/total" line under the timeline grows with the background scan."""
    monkeypatch.setattr("regista.trace.index._CHUNK", 256)
    index = TraceIndex(trace_path)
    index.scan(_first_lines(trace_path, 6))  # the rest is read once the screen is up
    partial = len(index)
    assert 0 < partial < 8
    app = RegistaApp(index, settle_s=0)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        # The scan starts on a timer after the first paint: wait for it to have read the
        # whole file (a busy machine may not have started it yet), then for it to finish.
        for _ in range(1000):
            if len(index) == 8:
                break
            await pilot.pause(0.01)
        await app.workers.wait_for_complete()
        await settle(pilot)
        assert len(index) == 8
        assert app.screen.query_one(Timeline).border_subtitle == "step 0 · 1/8"


async def test_header_says_reading_not_running_while_indexing(
    trace_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A finished trace that is not read to the end yet is not "running"."""
    monkeypatch.setattr("regista.trace.index._CHUNK", 256)
    index = TraceIndex(trace_path)
    index.scan(_first_lines(trace_path, 6))
    header = SessionHeader(index)

    class Host(App[None]):
        def compose(self) -> ComposeResult:
            yield header

    async with Host().run_test() as pilot:
        await settle(pilot)
        shown = plain(header.content)
        assert "running" not in shown, shown
        assert "reading" in shown


def test_header_says_when_the_cost_is_not_known(trace_path: Path, tmp_path: Path) -> None:
    """A model with no known price has an unknown cost, which is not $0."""
    lines = trace_path.read_text().splitlines()
    unpriced = tmp_path / "unpriced.jsonl"
    unpriced.write_text(
        "\n".join(
            ln.replace('"cost_usd":0.0,', '"cost_usd":null,') if '"session.end"' in ln else ln
            for ln in lines
        )
        + "\n"
    )
    index = TraceIndex(unpriced)
    index.scan()
    assert index.end is not None and index.end.cost_usd is None
    shown = SessionHeader(index).content
    assert "cost unknown" in str(shown) and "$" not in str(shown)
    priced = TraceIndex(trace_path)
    priced.scan()
    assert "cost unknown" not in str(SessionHeader(priced).content)


async def test_the_request_diff_draws_added_messages_readably(browser_app: RegistaApp) -> None:
    """An added message is drawn as the step view draws it (a short one in full, its JSON
    not escaped); m still shows more."""
    async with browser_app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("j", "j", "v", "v")
        await browser_app.workers.wait_for_complete()
        await settle(pilot)
        before = text_of(browser_app, "#diff-body")
        assert "A-404 not" in before and '\\"' not in before
        await pilot.press("m")
        await browser_app.workers.wait_for_complete()
        await settle(pilot)
        assert "A-404 not" in text_of(browser_app, "#diff-body")


async def test_help_lists_only_keys_that_do_something(browser_app: RegistaApp) -> None:
    """The timeline does not scroll sideways: no left / right keys in the help."""
    async with browser_app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("question_mark")
        await settle(pilot)
        shown = plain(browser_app.screen.query_one(Static).content)
        assert "Scroll Left" not in shown
        assert "Page Right" not in shown
        assert "Search step text" in shown
        assert "command palette" in shown  # ctrl+p


async def test_search_finds_quoted_text_of_tool_inputs(browser_app: RegistaApp) -> None:
    """The timeline shows inputs as JSON; searching that text (quotes included) finds them."""
    async with browser_app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("slash", *'"order_id":"A-100"', "enter")
        await browser_app.workers.wait_for_complete()
        await settle(pilot)
        assert _cursor(browser_app) == 2, text_of(browser_app, "#status")  # the model asks
        assert "match 1 of" in text_of(browser_app, "#status")
        await pilot.press("n")
        assert _cursor(browser_app) == 3  # the tool call


async def test_an_error_line_goes_once_the_cursor_moves(browser_app: RegistaApp) -> None:
    """A refusal or a bad step number is about where the cursor was, not where it goes."""
    async with browser_app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("colon", "9", "9", "enter")
        assert "no step 99" in text_of(browser_app, "#status")
        await pilot.press("j")
        assert text_of(browser_app, "#status").strip() == ""


async def test_compare_go_to_clears_an_old_error(trace_path: Path, other_trace_path: Path) -> None:
    async with RegistaApp(compare=(trace_path, other_trace_path)).run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.app.workers.wait_for_complete()
        await settle(pilot)
        await pilot.press("colon", "9", "9", "enter")
        assert "no step 99" in text_of(pilot.app, "#status")
        await pilot.press("colon", "2", "enter")
        assert "no step 99" not in text_of(pilot.app, "#status")


async def test_search_prompt_title_is_not_cut(browser_app: RegistaApp) -> None:
    async with browser_app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("slash")
        await settle(pilot)
        label = browser_app.screen.query_one("Label")
        box = browser_app.screen.query_one("Vertical")
        title = SearchPrompt.title_text
        assert label.size.width <= box.content_size.width, (label.size, box.content_size)
        assert label.size.width * label.size.height >= len(title), (label.size, title)


async def test_an_unchanged_edit_does_not_fork(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ctrl+s on the recorded result as it was says so and keeps the editor open."""
    monkeypatch.setenv("REGISTA_SAMPLE_DB", str(tmp_path / "shop.db"))
    app = browser(LOOP, tmp_path / "forks")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        editor = await open_editor(app, pilot, "j")
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert app.screen is editor
        assert "unchanged" in text_of(app, "#edit-error")
        await pilot.press("tab", "space")  # is_error flipped: that is a change
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert isinstance(app.screen, ForkScreen)
        await pilot.press("x")
        await app.workers.wait_for_complete()


async def test_narrow_comparison_header_keeps_outcome_and_steps(
    trace_path: Path, replay_path: Path
) -> None:
    """At 80 columns the long file name is what gets cut, not the steps or the link."""
    async with RegistaApp(compare=(trace_path, replay_path)).run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.app.workers.wait_for_complete()
        await settle(pilot)
        header = pilot.app.screen.query_one("#compare-header", Static)
        lines = [strip.text for strip in header.render_lines(Region(0, 0, 80, 3))]
        run_b = lines[1]
        assert "● end_turn" in run_b and "8 steps" in run_b, run_b
        assert "replay of 01TESTTRACE" in run_b, run_b


async def test_the_rewind_prompt_reads_as_two_sentences(tmp_path: Path) -> None:
    """ "Steps 0–1 replayed …; from step 2 on, the agent runs live …", no comma splice."""
    app = browser(LOOP, tmp_path / "forks")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("j", "j", "r")
        await app.workers.wait_for_complete()
        await settle(pilot)
        shown = str(app.screen.query_one(Static).render())
        assert shown.startswith("Steps 0–1 replayed from the recording for $0; from step 2 on"), (
            shown
        )
        await pilot.press("escape", "home", "r")
        await app.workers.wait_for_complete()
        await settle(pilot)
        shown = str(app.screen.query_one(Static).render())
        assert shown.startswith("Nothing is replayed; from step 0 on"), shown


async def test_a_step_that_completes_is_redrawn(trace_path: Path, tmp_path: Path) -> None:
    """The step view of a step still being written shows its result once it lands."""
    lines = trace_path.read_bytes().splitlines(keepends=True)
    cut = next(i for i, line in enumerate(lines) if b'"type":"tool.result"' in line)
    growing = tmp_path / "growing.jsonl"
    growing.write_bytes(b"".join(lines[:cut]))
    index, _ = open_index(growing)
    app = RegistaApp(index, settle_s=0)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("end")
        assert "No result was recorded" in text_of(app, "#step-body")
        with growing.open("ab") as f:
            f.write(b"".join(lines[cut:]))
        assert isinstance(app.screen, BrowserScreen)
        app.screen._follow()  # what the follow timer does
        await app.workers.wait_for_complete()
        await settle(pilot)
        assert "No result was recorded" not in text_of(app, "#step-body")
        assert "Result" in text_of(app, "#step-body")


async def test_a_narrow_header_keeps_the_fork_link_and_the_cost(
    trace_path: Path, tmp_path: Path
) -> None:
    """At 80 columns the task is what gets cut, not the fork link, the cost or the errors."""
    import orjson

    lines = trace_path.read_bytes().splitlines(keepends=True)
    start = orjson.loads(lines[0])
    start["forked_from"] = {"session_id": "01PARENT000000000000000000", "at_step": 3}
    forked = tmp_path / "forked.jsonl"
    forked.write_bytes(orjson.dumps(start) + b"\n" + b"".join(lines[1:]))
    index, _ = open_index(forked)
    app = RegistaApp(index, settle_s=0)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        header = app.screen.query_one("#header", Static)
        lines_shown = [s.text for s in header.render_lines(Region(0, 0, header.size.width, 2))]
        assert "fork at step 3 of 01PARENT" in lines_shown[0], lines_shown
        assert "$0.0000" in lines_shown[1] and "1 denied" in lines_shown[1], lines_shown


async def test_pair_rows_do_not_cut_tool_names_silently() -> None:
    """ "search_orders" is shown whole, or visibly cut ("search_ord…"), never "search_order"."""
    from fork_helpers import HAPPY

    from regista_tui.widgets.diff.pair_list import PairList

    for size in ((120, 40), (80, 24)):
        async with RegistaApp(compare=(HAPPY, LOOP)).run_test(size=size) as pilot:
            await settle(pilot)
            await pilot.app.workers.wait_for_complete()
            await settle(pilot)
            pairs = pilot.app.screen.query_one(PairList)
            row = pairs.row_text(1, pairs.scrollable_content_region.width).plain
            assert "search_order " not in row, (size, row)
            assert "search_orders" in row or "search_ord…" in row, (size, row)


async def test_continue_says_which_breakpoint_stopped_it(browser_app: RegistaApp) -> None:
    async with browser_app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("j", "b", "home", "c")
        assert _cursor(browser_app) == 1
        status = text_of(browser_app, "#status")
        assert "step 1" in status and "tool:lookup_order" in status, status
