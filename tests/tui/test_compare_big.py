"""The two-run view reads big runs in slices: the steps both begin with show first."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
from textual.widgets import Static
from waits import settle

from regista.diff import RunDiff, diff_runs
from regista.trace.reader import Trace
from regista_tui.app import RegistaApp
from regista_tui.screens import compare
from regista_tui.screens.compare import CompareScreen
from regista_tui.widgets.diff.pair_list import PairList

SAMPLE = Path(__file__).parents[2] / "sample_traces" / "refund_search_loop.jsonl"


def rows(diff: RunDiff) -> list[tuple[int | None, int | None, str]]:
    return [(p.a_step, p.b_step, p.kind) for p in diff.pairs]


def changed_late(folder: Path) -> Path:
    """The sample with its last tool result changed: the runs part near their end."""
    lines = SAMPLE.read_bytes().split(b"\n")[:-1]
    last = max(i for i, line in enumerate(lines) if b'"type":"tool.result"' in line)
    event = orjson.loads(lines[last])
    event["content"] = "a different result"
    lines[last] = orjson.dumps(event)
    path = folder / "b.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


async def test_rows_both_runs_begin_with_show_while_the_rest_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    b = changed_late(tmp_path)
    monkeypatch.setattr(compare, "_SLICE", 700)
    monkeypatch.setattr(compare, "_PROGRESS_S", 0.0)
    heads: list[tuple[list[tuple[int | None, int | None, str]], float]] = []
    show_head = CompareScreen._head

    headers: list[str] = []

    def spy(self: CompareScreen, diff: RunDiff, read: float) -> None:
        heads.append((rows(diff), read))
        show_head(self, diff, read)
        headers.append(str(self.query_one("#compare-header", Static).render()))

    monkeypatch.setattr(CompareScreen, "_head", spy)

    def no_load(*args: Any, **kwargs: Any) -> Trace:
        raise AssertionError("the two-run view loaded a trace whole")

    expected = diff_runs(Trace.load(SAMPLE), Trace.load(b))
    monkeypatch.setattr(Trace, "load", no_load)
    monkeypatch.setattr(Trace, "from_bytes", no_load)
    app = RegistaApp(compare=(SAMPLE, b))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await app.workers.wait_for_complete()
        screen = app.screen
        assert isinstance(screen, CompareScreen)
        await screen.workers.wait_for_complete()
        await settle(pilot)
        assert screen.diff is not None
        final = rows(screen.diff)
        assert final == rows(expected)
        # Shown while reading: ever more of the steps both runs begin with, each row final.
        assert len(heads) > 2 and heads[-1][0]
        for head, read in heads:
            assert final[: len(head)] == head and 0 < read < 1
        assert [len(h) for h, _ in heads] == sorted(len(h) for h, _ in heads)
        # While reading, the header says so (not that the runs are unfinished).
        assert all("reading…" in h and "unfinished" not in h for h in headers)
        header = str(screen.query_one("#compare-header", Static).render())
        assert "reading…" not in header and header.count("● max_turns") == 2
        first = screen.diff.first_divergence
        assert first is not None and first.index == 19  # the tool whose result changed
        assert app.screen.query_one(PairList).cursor == first.index


async def test_a_cursor_moved_while_reading_stays_put(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    b = changed_late(tmp_path)
    monkeypatch.setattr(compare, "_SLICE", 700)
    monkeypatch.setattr(compare, "_PROGRESS_S", 0.0)
    show_head = CompareScreen._head

    def move_on_first_rows(self: CompareScreen, diff: RunDiff, read: float) -> None:
        show_head(self, diff, read)
        if len(diff.pairs) > 2 and self.pairs.cursor == 0:
            self.pairs.move_to(2)  # as a person pressing j j

    monkeypatch.setattr(CompareScreen, "_head", move_on_first_rows)
    app = RegistaApp(compare=(SAMPLE, b))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await app.workers.wait_for_complete()
        screen = app.screen
        assert isinstance(screen, CompareScreen)
        await screen.workers.wait_for_complete()
        await settle(pilot)
        assert screen.diff is not None and screen.diff.first_divergence is not None
        assert app.screen.query_one(PairList).cursor == 2
        status = screen.query_one("#status", Static).render()
        assert "First divergence: step 19" in str(status) and "aligning" not in str(status)


async def test_a_claude_code_transcript_compares_as_it_always_did(tmp_path: Path) -> None:
    from importers.cc_fixtures import basic_session

    transcript = basic_session().write(tmp_path / "s.jsonl")
    app = RegistaApp(compare=(transcript, transcript))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await app.workers.wait_for_complete()
        screen = app.screen
        assert isinstance(screen, CompareScreen)
        await screen.workers.wait_for_complete()
        await settle(pilot)
        assert screen.diff is not None and screen.diff.pairs
        assert screen.diff.identical


async def test_a_step_that_cannot_be_read_says_so_in_its_row(tmp_path: Path) -> None:
    """Both runs hold the same malformed answer: they align (its digests agree), and its
    row says it cannot be read instead of the view failing as it is drawn."""
    lines = SAMPLE.read_bytes().split(b"\n")[:-1]
    at = next(i for i, line in enumerate(lines) if b'"type":"llm.response"' in line)
    event = orjson.loads(lines[at])
    event["response"]["content"] = 5
    lines[at] = orjson.dumps(event)
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b"\n".join(lines) + b"\n")
    app = RegistaApp(compare=(bad, bad))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await app.workers.wait_for_complete()
        screen = app.screen
        assert isinstance(screen, CompareScreen)
        await screen.workers.wait_for_complete()
        await settle(pilot)
        assert screen.diff is not None and screen.diff.identical
        pairs = app.screen.query_one(PairList)
        text = "".join(pairs.row_text(i, 118).plain for i in range(len(screen.diff.pairs)))
        assert "cannot read" in text
        await pilot.press("slash", "r", "e", "f", "u", "n", "d", "enter")
        await screen.workers.wait_for_complete()
        await settle(pilot)


async def test_closing_the_view_while_it_reads_stops_the_reading(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import threading

    from regista.diff.runfile import RunFile
    from regista_tui.screens.runs import ListedCompareScreen

    b = changed_late(tmp_path)
    monkeypatch.setattr(compare, "_SLICE", 300)
    monkeypatch.setattr(compare, "_PROGRESS_S", 0.0)
    closed = threading.Event()
    after: list[int] = []
    read = RunFile.read

    def gated(self: RunFile, *args: Any, **kwargs: Any) -> bool:
        if self.path == b:
            closed.wait(10)  # the reading is under way when the view closes
            after.append(1)
        return read(self, *args, **kwargs)

    monkeypatch.setattr(RunFile, "read", gated)
    app = RegistaApp(compare=(SAMPLE, SAMPLE))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await app.workers.wait_for_complete()
        screen = ListedCompareScreen(SAMPLE, b)
        await app.push_screen(screen)
        await pilot.press("escape")
        closed.set()
        await app.workers.wait_for_complete()
        await settle(pilot)
        assert app.screen is not screen and isinstance(app.screen, CompareScreen)
    assert len(after) <= 2  # not the hundred slices of the whole file


async def test_a_reading_that_ends_after_the_view_closed_shows_nothing(tmp_path: Path) -> None:
    from regista_tui.screens.runs import ListedCompareScreen

    app = RegistaApp(compare=(SAMPLE, SAMPLE))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await app.workers.wait_for_complete()
        screen = ListedCompareScreen(SAMPLE, SAMPLE)
        await app.push_screen(screen)
        await app.workers.wait_for_complete()
        await settle(pilot)
        diff, sizes = screen.diff, screen._sizes
        assert diff is not None
        await pilot.press("escape")
        await settle(pilot)
        screen._loaded(diff, sizes)  # as a reading finishing just now would
        screen._failed("gone")
