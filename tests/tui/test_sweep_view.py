"""``regista-tui SWEEP``: the parent and its forks in columns, aligned by step signatures.

The sweep is the sample search loop forked at its first search with three results (the
order found, nothing found, an outage), run once for the module by ``regista sweep`` with
the sample agents' fake clock, so that what the view shows is the same on every run.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from sweeps import sweep_argv
from textual.widgets import DataTable, Static
from waits import settle, until

from regista.cli.main import main
from regista.sweep import load_sweep
from regista_tui.__main__ import main as tui_main
from regista_tui.app import RegistaApp
from regista_tui.screens.sweep import SweepCompare, SweepScreen


@pytest.fixture(scope="module")
def sweep_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("sweep")
    with pytest.MonkeyPatch.context() as mp:
        mp.delenv("REGISTA_SAMPLE_DB", raising=False)
        mp.setenv("REGISTA_SAMPLE_CLOCK", "2026-07-02T10:00:00")
        mp.chdir(folder)
        assert main(sweep_argv(folder / "sw", "-j", "2")) == 0
    return folder / "sw"


def _grid(app: Any) -> DataTable[Any]:
    return app.screen.query_one("#sweep-grid", DataTable)


def _status(app: Any) -> str:
    return str(app.screen.query_one("#status", Static).render())


def _cell(app: Any, row: int, column: int) -> str:
    return str(_grid(app).get_cell_at((row, column)))


async def test_the_parent_and_three_forks_in_columns(sweep_dir: Path) -> None:
    """Four columns; the rows are the parent's 20 steps and the 3 steps only the fork that
    found the order has; each fork's edit is marked, and the only first divergence (fork 1,
    step 2, where it asks for the order instead of searching again) is under the cursor."""
    app = RegistaApp(sweep=sweep_dir / "sweep.json")
    async with app.run_test(size=(140, 40)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, SweepScreen), "the sweep view")
        await until(pilot, lambda: _grid(app).row_count > 0, "the rows")
        await settle(pilot)
        grid = _grid(app)
        assert len(grid.columns) == 4 and grid.row_count == 23
        labels = [str(c.label) for c in grid.columns.values()]
        assert labels[0] == "parent" and labels[3].startswith("3 result: search index")
        assert all(_cell(app, 1, c).startswith("✎") for c in (1, 2, 3))  # the edit
        assert grid.cursor_coordinate == (2, 1)
        assert _cell(app, 2, 1).startswith("◆") and "get_order" in _cell(app, 2, 1)
        assert not any("◆" in _cell(app, r, c) for r in range(23) for c in (2, 3))
        assert "(not in this fork)" in _cell(app, 3, 1)  # the parent's next search
        assert "get_order" in _cell(app, 4, 1) and _cell(app, 4, 0) == ""  # fork 1 only
        assert "3 forks of step 1; 1 diverged" in _status(app)
        rows = app.screen.view.rows  # the header's table
        assert [r.stop_reason for r in rows] == ["max_turns", "end_turn", "max_turns", "max_turns"]
        assert rows[1].divergence == "step 2: changed · decision"

        await pilot.press("enter")  # the parent and fork 1 side by side
        await until(pilot, lambda: isinstance(app.screen, SweepCompare), "the two-run view")
        assert app.screen.names == ("parent", "fork 1")
        await pilot.press("escape")
        await until(pilot, lambda: isinstance(app.screen, SweepScreen), "back to the sweep")

        await pilot.press("x")  # the sweep has ended: nothing to cancel
        assert "not running" in _status(app)


def test_the_sweep_view_snapshot(snap_compare: Any, sweep_dir: Path) -> None:
    """At 140×40: the sweep's table as the header (parent max_turns 20 steps; fork 1
    end_turn 9 steps, first divergence step 2: changed · decision; forks 2 and 3 max_turns,
    none), then the parent and its three forks in columns: step 1 marked ✎ in every fork,
    fork 1's ◆ at step 2 (model → get_order, under the cursor), its get_order /
    issue_refund / send_email steps on rows of their own and the parent's searches it does
    not have, forks 2 and 3 the same as the parent after the edit; the status line and the
    footer with its keys."""

    async def run_before(pilot: Any) -> None:
        await until(pilot, lambda: isinstance(pilot.app.screen, SweepScreen), "the view")
        await until(pilot, lambda: _grid(pilot.app).row_count > 0, "the rows")
        await settle(pilot)

    app = RegistaApp(sweep=sweep_dir / "sweep.json")
    assert snap_compare(app, terminal_size=(140, 40), run_before=run_before)


async def test_the_cancel_key_stops_a_running_sweep(tmp_path: Path) -> None:
    """A sweep running in another process (one fork at a time, the demo model taking a
    moment per answer): the view follows it, and x cancels it: the finished fork is kept,
    the others are cut short, and the view says so."""
    out = tmp_path / "sw"
    # Each answer takes a second: the two forks after the first take many seconds more than
    # the view needs to show the first one's end and take the key, even on a busy machine.
    env = {**os.environ, "REGISTA_DEMO_DELAY": "1.0"}
    env.pop("REGISTA_SAMPLE_DB", None)
    said = tmp_path / "sweep.err"
    with open(said, "wb") as err:
        proc = subprocess.Popen(
            [sys.executable, "-m", "regista", *sweep_argv(out, "-j", "1")],
            cwd=tmp_path,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=err,
        )

    def where() -> str:
        """What the view and the sweep's process said, for a wait that failed."""
        forks = [f.status for f in load_sweep(out).forks] if (out / "sweep.json").exists() else []
        tail = said.read_text(errors="replace")[-2000:]
        return f"status {_status(app)!r}; exit {proc.poll()}; forks {forks}; stderr: {tail}"

    try:
        app = RegistaApp(sweep=out)
        async with app.run_test(size=(140, 40)) as pilot:
            await until(pilot, lambda: (out / "sweep.json").exists(), "the sweep file")
            await until(pilot, lambda: isinstance(app.screen, SweepScreen), "the view")
            try:
                await until(
                    pilot,
                    lambda: "Sweep running: 1 of 3" in _status(app),
                    "the view following the sweep to its first fork's end",
                )
            except AssertionError as exc:
                raise AssertionError(f"{exc} ({where()})") from None
            await pilot.press("x")
            await until(pilot, lambda: proc.poll() is not None, "the sweep's end")
            await until(pilot, lambda: "cut short" in _status(app), "the view saying so")
            assert "cancelled: fork 2, fork 3 cut short" in _status(app)
        assert proc.returncode == 1
        sweep = load_sweep(out)
        assert sweep.cancelled
        assert [f.shown_status for f in sweep.forks] == ["done", "cut_short", "cut_short"]
    finally:
        proc.kill()
        proc.wait()


def test_a_bad_sweep_file_is_one_line(
    tmp_path: Path, capsys: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from regista import samples

    monkeypatch.setattr(samples, "demo_delay", samples.demo_delay)  # regista-tui sets a pace
    bad = tmp_path / "sweep.json"
    bad.write_text('{"schema": "regista.sweep/1", "at_step": "x"}')
    assert tui_main([str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("regista-tui: ") and "'at_step' must be a whole number" in err
    assert len(err.strip().splitlines()) == 1
