"""Pilot tests of the two-run view: alignment, first divergence, n / N, a growing run B."""

from __future__ import annotations

import asyncio
from pathlib import Path

from shown import text_of
from waits import settle

from regista.diff.runfile import RunFile
from regista_tui.app import RegistaApp
from regista_tui.screens.compare import CompareScreen, _label, _run_line
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


async def test_a_trace_and_its_replay_are_all_same(trace_path: Path, replay_path: Path) -> None:
    app = RegistaApp(compare=(trace_path, replay_path))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        screen = await _ready(app)
        await settle(pilot)
        assert screen.diff is not None
        assert {p.kind for p in screen.diff.pairs} == {"same"}
        assert "the same, step for step" in text_of(app, "#status")
        await pilot.press("n")
        assert "No next difference" in text_of(app, "#status")


async def test_first_divergence_selected_and_n_N(trace_path: Path, other_trace_path: Path) -> None:
    app = RegistaApp(compare=(trace_path, other_trace_path))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        screen = await _ready(app)
        await settle(pilot)
        diff = screen.diff
        assert diff is not None and diff.first_divergence is not None
        pairs = app.screen.query_one(PairList)
        assert pairs.cursor == diff.first_divergence.index
        assert "First divergence" in text_of(app, "#status")
        detail = text_of(app, "#pair-detail")
        assert "A-404" in detail or "step" in detail
        kinds = {p.kind for p in diff.pairs}
        assert "delete" in kinds or "insert" in kinds
        await pilot.press("n")
        assert pairs.cursor == diff.next_difference(diff.first_divergence.index)
        await pilot.press("N")
        assert pairs.cursor == diff.first_divergence.index


async def test_run_b_growing_is_followed(
    trace_path: Path, other_trace_path: Path, tmp_path: Path
) -> None:
    data = other_trace_path.read_bytes().splitlines(keepends=True)
    growing = tmp_path / "growing.jsonl"
    growing.write_bytes(b"".join(data[:6]))
    app = RegistaApp(compare=(trace_path, growing))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        screen = await _ready(app)
        before = len(screen.diff.pairs) if screen.diff else 0
        assert "unfinished" in text_of(app, "#compare-header")
        growing.write_bytes(b"".join(data))
        screen._follow()
        await screen.workers.wait_for_complete()
        await settle(pilot)
        assert screen.diff is not None
        assert len(screen.diff.pairs) >= before
        assert screen.diff.b.end is not None


async def test_nothing_is_claimed_before_the_runs_are_aligned(trace_path: Path) -> None:
    app = RegistaApp()
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await app.push_screen(CompareScreen(trace_path, None))  # run B does not exist yet
        await settle(pilot)
        assert "No steps" not in text_of(app, "#pair-detail")
        assert "Aligning the two runs" in text_of(app, "#compare-header")


async def test_runs_that_cannot_be_aligned_say_so(trace_path: Path, tmp_path: Path) -> None:
    lines = trace_path.read_bytes().splitlines(keepends=True)
    lines[4] = lines[4][:150] + b"\n"  # the envelope reads, the rest of the line is cut
    corrupt = tmp_path / "corrupt.jsonl"
    corrupt.write_bytes(b"".join(lines))
    app = RegistaApp(compare=(corrupt, trace_path))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await app.workers.wait_for_complete()
        await app.screen.workers.wait_for_complete()
        await settle(pilot)
        assert "corrupt.jsonl:5" in text_of(app, "#status")
        header = text_of(app, "#compare-header")
        assert "Aligning" not in header
        assert "Cannot align the two runs" in header
        assert "No steps" not in text_of(app, "#pair-detail")


async def test_two_runs_with_no_steps(trace_path: Path, tmp_path: Path) -> None:
    starting = tmp_path / "starting.jsonl"
    starting.write_bytes(trace_path.read_bytes().splitlines(keepends=True)[0])
    app = RegistaApp(compare=(starting, starting))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await _ready(app)
        await settle(pilot)
        assert "No steps in either run." in text_of(app, "#pair-detail")


async def test_the_difference_line_names_its_steps(
    trace_path: Path, other_trace_path: Path
) -> None:
    """The line stays as the cursor moves on: it says which pair it is about."""
    app = RegistaApp(compare=(trace_path, other_trace_path))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        screen = await _ready(app)
        await settle(pilot)
        await pilot.press("n")
        diff = screen.diff
        assert diff is not None
        pair = diff.pairs[screen.pairs.cursor]
        where = f"step {pair.a_step} in A" if pair.a_step is not None else f"step {pair.b_step}"
        status = text_of(app, "#status")
        assert status.startswith(f"Difference 2 of {len(diff.differences)}: ")
        assert where in status


async def test_j_and_k_move_the_cursor_when_the_pair_diff_has_the_focus(
    trace_path: Path, other_trace_path: Path
) -> None:
    app = RegistaApp(compare=(trace_path, other_trace_path))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        screen = await _ready(app)
        await settle(pilot)
        start = screen.pairs.cursor
        await pilot.click("#pair-diff", offset=(10, 3))
        assert app.focused is not screen.pairs
        await pilot.press("j", "j", "k")
        assert screen.pairs.cursor == start + 1


async def test_a_step_still_being_written_is_not_a_difference(
    trace_path: Path, tmp_path: Path
) -> None:
    """Run B is the same run, caught while its model call at step 2 waits for an answer:
    that half-step is left out until it is finished, not shown as a changed step."""
    lines = trace_path.read_bytes().splitlines(keepends=True)
    waiting = next(i for i, ln in enumerate(lines) if b'"llm.request"' in ln and b'"step":2' in ln)
    growing = tmp_path / "growing.jsonl"
    growing.write_bytes(b"".join(lines[: waiting + 1]))
    app = RegistaApp(compare=(trace_path, growing))
    async with app.run_test(size=(120, 40)):
        screen = await _ready(app)
        assert screen.diff is not None
        kinds = [p.kind for p in screen.diff.pairs]
        assert kinds[:2] == ["same", "same"]
        assert not any(kind.startswith("changed") for kind in kinds), kinds


async def test_go_to_a_step_only_run_b_has(trace_path: Path, other_trace_path: Path) -> None:
    """``:N`` goes to step N of run A; a step only run B has is gone to, and said so."""
    app = RegistaApp(compare=(other_trace_path, trace_path))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        screen = await _ready(app)
        assert screen.diff is not None
        pairs = screen.diff.pairs
        a_steps = {p.a_step for p in pairs if p.a_step is not None}
        only_b = max(p.b_step for p in pairs if p.b_step is not None)
        assert only_b not in a_steps
        both = min(a_steps)
        await pilot.press("colon", *str(only_b), "enter")
        cursor = app.screen.query_one(PairList).cursor
        assert pairs[cursor].b_step == only_b
        assert f"Step {only_b} of B: A has no step {only_b}." in text_of(app, "#status")
        await pilot.press("colon", *str(both), "enter")
        assert pairs[app.screen.query_one(PairList).cursor].a_step == both
        await pilot.press("colon", "9", "9", "enter")
        assert "There is no step 99 in A or B." in text_of(app, "#status")


async def test_run_b_cut_inside_its_first_line_waits_for_it(
    trace_path: Path, other_trace_path: Path, tmp_path: Path
) -> None:
    """A run whose first line is not whole yet (being written, or cut there) has no start:
    the header says so, and the run is followed until it is written (the long fuzz run
    found this as a crash of the screen's worker)."""
    data = other_trace_path.read_bytes()
    growing = tmp_path / "growing.jsonl"
    growing.write_bytes(data[:200])
    run = RunFile(growing)
    run.read(1 << 20)
    assert _label(run) is None  # raised TraceError("not read yet") in the screen's worker
    assert "not started" in _run_line("B", run).plain
    run.close()
    app = RegistaApp(compare=(trace_path, growing))
    async with asyncio.timeout(60), app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        screen = await _ready(app)
        assert "not started: its first line is not whole yet" in text_of(app, "#compare-header")
        growing.write_bytes(data)
        screen._follow()
        await screen.workers.wait_for_complete()
        await settle(pilot)
        assert screen.diff is not None and screen.diff.b.end is not None
        assert "not started" not in text_of(app, "#compare-header")
