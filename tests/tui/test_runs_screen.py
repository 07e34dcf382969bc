"""The run list (``regista-tui DIR``): tree order, filter, sort, open, marks and compare."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from runs_library import FAILED, FORK, OTHER, REPLAY, ROOT, make_library
from textual.widgets import DataTable, Input
from waits import settle

from regista.store.runs import list_runs
from regista_tui.__main__ import main
from regista_tui.app import RegistaApp
from regista_tui.screens.browser import BrowserScreen
from regista_tui.screens.runs import ListedCompareScreen, RunsScreen


@pytest.fixture(scope="module")
def library(trace_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_library(trace_path, tmp_path_factory.mktemp("library") / "traces")


def _app(folder: Path) -> RegistaApp:
    return RegistaApp(runs=list_runs(folder), runs_folder=str(folder), settle_s=0)


def _rows(app: RegistaApp) -> list[tuple[str, int]]:
    screen = app.screen
    assert isinstance(screen, RunsScreen)
    return [(run.session_id, depth) for run, depth in screen.rows]


async def test_list_is_a_tree_newest_first(library: Path) -> None:
    app = _app(library)
    async with app.run_test(size=(120, 40)):
        # Roots newest first; the replay (the newest run of all) and the fork under ROOT.
        assert _rows(app) == [(OTHER, 0), (FAILED, 0), (ROOT, 0), (REPLAY, 1), (FORK, 1)]
        assert app.screen.query_one("#runs-table").has_focus


async def test_filter_as_you_type(library: Path) -> None:
    app = _app(library)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("slash", "s", "a", "l", "e", "s")
        assert _rows(app) == [(OTHER, 0)]
        await pilot.press("ctrl+a", "ctrl+k", *"fork")  # a fork found by its link
        assert _rows(app) == [(FORK, 0)]  # its parent is hidden: it stands as a root
        await pilot.press("enter")
        assert app.screen.query_one("#runs-table").has_focus
        await pilot.press("slash", "ctrl+a", "ctrl+k", "escape")
        assert len(_rows(app)) == 5


async def test_sort_cycles_columns(library: Path) -> None:
    app = _app(library)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("s")  # cost, dearest first, children under their parent
        assert _rows(app) == [(FAILED, 0), (OTHER, 0), (ROOT, 0), (FORK, 1), (REPLAY, 1)]
        header = str(app.screen.query_one("#runs-header").render())
        assert "sorted by cost" in header
        for _ in range(5):  # steps, outcome, task, id, and round to when
            await pilot.press("s")
        assert _rows(app)[0] == (OTHER, 0)


async def test_enter_opens_and_escape_returns(library: Path) -> None:
    app = _app(library)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("j", "j")  # ROOT
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, BrowserScreen)
        assert app.screen.index.path == library / f"{ROOT}.jsonl"
        await pilot.press("escape")
        await settle(pilot)
        assert isinstance(app.screen, RunsScreen)


async def test_two_marks_and_d_compare(library: Path) -> None:
    app = _app(library)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("d")
        assert "Mark two runs" in str(app.screen.query_one("#status").render())
        await pilot.press("j", "j", "space", "j", "space", "d")  # ROOT and its replay
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, ListedCompareScreen)
        assert screen.paths == (library / f"{ROOT}.jsonl", library / f"{REPLAY}.jsonl")
        await app.workers.wait_for_complete()
        await pilot.press("escape")
        await settle(pilot)
        assert isinstance(app.screen, RunsScreen)


async def test_a_third_mark_replaces_the_oldest(library: Path) -> None:
    app = _app(library)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("space", "j", "space", "j", "space")
        screen = app.screen
        assert isinstance(screen, RunsScreen)
        assert screen.marks == [FAILED, ROOT]
        await pilot.press("space")  # unmark
        assert screen.marks == [FAILED]


async def test_empty_folder_and_unreadable_files(tmp_path: Path) -> None:
    app = _app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert _rows(app) == []
        assert "No runs in" in str(app.screen.query_one("#status").render())
        await pilot.press("enter", "space", "d", "s")  # nothing to act on: no error
    (tmp_path / "notes.jsonl").write_text("not json\n")
    app = _app(tmp_path)
    async with app.run_test(size=(120, 40)):
        assert "notes.jsonl" in str(app.screen.query_one("#status").render())


def test_cli_missing_folder_and_no_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([str(tmp_path / "nowhere")]) == 2  # a path that names nothing, as `regista`
    assert "nowhere" in capsys.readouterr().err
    monkeypatch.chdir(tmp_path)
    assert main([]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no traces folder here" in err


def test_cli_folder_opens_the_run_list(
    library: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    seen: list[Any] = []

    def fake_run(app: RegistaApp) -> None:
        seen.append(app)

    monkeypatch.setattr(RegistaApp, "run", fake_run)
    assert main([str(library)]) == 0
    assert len(seen[0].runs.runs) == 5
    default = tmp_path / ".regista" / "traces"
    default.parent.mkdir()
    default.symlink_to(library)
    monkeypatch.chdir(tmp_path)
    assert main([]) == 0  # no argument: the default folder
    assert seen[1].runs_folder == ".regista/traces" and len(seen[1].runs.runs) == 5


def test_run_list_snapshot(snap_compare: Any, library: Path) -> None:
    """The run list of a five-run folder at 120×40: the header (folder, 5 runs, sorted by
    when, 2 marked), the empty filter line, then the runs newest first as a tree: the sales
    run, the failed max_turns run (outcome in red), the refund run with its replay and its
    fork at step 3 indented under it (links column: "replay", "fork at step 3"); the refund
    run and its replay carry a mark (●), the cursor is on the replay."""

    async def run_before(pilot: Any) -> None:
        await pilot.press("j", "j", "space", "j", "space")
        await settle(pilot)

    app = RegistaApp(runs=list_runs(library), runs_folder="traces", settle_s=0)
    assert snap_compare(app, terminal_size=(120, 40), run_before=run_before)


async def test_recall_from_the_list(library: Path) -> None:
    app = _app(library)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("R", *"weekly", "enter")
        await app.screen.workers.wait_for_complete()
        await settle(pilot)
        assert _rows(app) == [(OTHER, 0)]
        assert "dealt with 'weekly'" in str(app.screen.query_one("#status").render())
        # The last column holds the path the run's tools took, and says so.
        headings = [str(c.label) for c in app.screen.query_one(DataTable).columns.values()]
        assert headings[-1] == "TOOL PATH" and "LINKS" not in headings
        await pilot.press("escape")  # back to every run
        assert len(_rows(app)) == 5
        headings = [str(c.label) for c in app.screen.query_one(DataTable).columns.values()]
        assert headings[-1] == "LINKS"
        await pilot.press("R", *"refund", "enter")
        await app.screen.workers.wait_for_complete()
        await settle(pilot)
        assert {sid for sid, _ in _rows(app)} >= {ROOT, FORK, REPLAY}
        await pilot.press("R", *"zyxwvut", "enter")
        await app.screen.workers.wait_for_complete()
        await settle(pilot)
        assert _rows(app) == []
        assert "No run dealt with" in str(app.screen.query_one("#status").render())


@pytest.mark.parametrize("width", [120, 160])
async def test_every_column_fits_the_screen(library: Path, width: int) -> None:
    samples = Path(__file__).parents[2] / "sample_traces"  # long tasks, no links
    # Filtered to the fork, whose parent is then hidden: its link is the long one.
    for folder, keys in ((library, ()), (samples, ()), (library, ("slash", *"fork", "enter"))):
        app = _app(folder)
        async with app.run_test(size=(width, 40)) as pilot:
            await settle(pilot)
            await pilot.press(*keys)
            await settle(pilot)
            table = app.screen.query_one("#runs-table", DataTable)
            assert table.virtual_size.width <= table.scrollable_content_region.width
            assert "LINKS" in app.export_screenshot()  # the last heading is not cut
            whole = str(app.screen.query_one("#runs-whole").render())
    # A link cut to fit is shown whole under the table.
    assert f"LINKS: fork of {ROOT} at step 3 (parent: end_turn" in whole


async def test_home_and_end_go_to_the_first_and_last_run(library: Path) -> None:
    """Home / End move the cursor, and the id and task columns stay in view, even on a
    screen too narrow for every column."""
    for width in (120, 80):
        app = _app(library)
        async with app.run_test(size=(width, 30)) as pilot:
            await settle(pilot)
            table = app.screen.query_one("#runs-table", DataTable)
            await pilot.press("j", "j", "end")
            assert (table.cursor_row, table.scroll_x) == (4, 0)
            await pilot.press("home")
            assert (table.cursor_row, table.scroll_x) == (0, 0)


async def test_a_mark_after_home_is_on_the_first_run(library: Path) -> None:
    """Home, space, End, space, d: the first and the last run are compared."""
    app = _app(library)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("j", "j", "home", "space", "end", "space", "d")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, ListedCompareScreen)
        assert screen.paths == (library / f"{OTHER}.jsonl", library / f"{FORK}.jsonl")
        await app.workers.wait_for_complete()


async def test_escape_clears_the_filter_first(library: Path) -> None:
    app = _app(library)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("slash", *"sales", "escape")  # in the filter
        assert len(_rows(app)) == 5
        assert app.screen.query_one("#runs-filter", Input).value == ""
        assert app.screen.query_one("#runs-table").has_focus
        await pilot.press("slash", *"sales", "enter")  # back in the list, filtered
        assert _rows(app) == [(OTHER, 0)]
        await pilot.press("escape")
        await settle(pilot)
        assert len(_rows(app)) == 5
        assert app.screen.query_one("#runs-filter", Input).value == ""


async def test_a_run_left_is_closed_and_freed(library: Path) -> None:
    """Back to the list: the run's file is closed, and its screen and index can be
    collected, though the collector had frozen them while the run was shown."""
    import gc
    import weakref

    app = _app(library)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        for _ in range(2):
            await pilot.press("enter")
            await settle(pilot)
            browser = app.screen
            assert isinstance(browser, BrowserScreen)
            await app.workers.wait_for_complete()
            await settle(pilot)
            gc.freeze()  # as the end of a big trace's scan does
            index = browser.index
            gone, gone_index = weakref.ref(browser), weakref.ref(index)
            del browser
            await pilot.press("escape")
            await settle(pilot)
            assert isinstance(app.screen, RunsScreen)
            assert index._file.closed
            assert gc.get_freeze_count() == 0
            del index
            await settle(pilot)
            gc.collect()  # what the browser scheduled, once Textual let go of it
            assert gone() is None and gone_index() is None


async def test_the_palette_lists_each_command_once(library: Path) -> None:
    """``q`` (the list's) and ctrl+q (the app's) are one "Quit"; Home / End are there."""
    app = _app(library)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        titles = [command.title for command in app.get_system_commands(app.screen)]
        assert len(titles) == len(set(titles)), sorted(titles)
        assert titles.count("Quit") == 1
        assert {"First run", "Last run"} <= set(titles)
