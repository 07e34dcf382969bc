"""A trace opens cold: its first screen is drawn from the first scan alone, without the
event models (pydantic), which load once it is up; then it is the same screen whether the
first scan read the whole trace or only its start."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from textual.selection import Selection

import regista_tui.__main__ as tui_main
from regista.trace.index import TraceIndex
from regista_tui.__main__ import open_index
from regista_tui.app import RegistaApp
from regista_tui.widgets.step.body import StepBody
from regista_tui.widgets.timeline.timeline import Timeline


def _screen(app: RegistaApp) -> tuple[list[str], str, str]:
    """The timeline's rows, the header and the step's text, as plain text."""
    timeline = app.screen.query_one(Timeline)
    rows = [timeline.row_text(pos, 70).plain for pos in range(timeline.row_count())]
    header = str(app.screen.query_one("#header").render())
    body = app.screen.query_one("#step-body", StepBody).get_selection(Selection(None, None))
    return rows, header, body[0] if body else ""


async def _warmed(pilot: Any, index: TraceIndex) -> None:
    """Until the event models have loaded (a moment after the first frame) and the rest of
    the trace is indexed."""
    for _ in range(200):
        if not index.cold and index.scanned >= index.size:
            break
        await pilot.pause(0.05)
    await pilot.app.screen.workers.wait_for_complete()
    await pilot.pause()
    await pilot.pause()


def test_the_first_screen_needs_no_event_models(trace_path: Path) -> None:
    """What runs before the first frame of a big trace imports neither pydantic nor the
    engine's event models (checked in a fresh interpreter)."""
    code = (
        "import sys\n"
        "import regista_tui.__main__ as m\n"
        "import regista_tui.app, regista_tui.screens.browser\n"
        "m.FIRST_SCAN_BYTES = 2000\n"
        f"index, _ = m.open_index(__import__('pathlib').Path({str(trace_path)!r}))\n"
        "assert index.cold and index.start is None and index.start_data['task']\n"
        "loaded = sorted(n for n in sys.modules if n.startswith('pydantic')\n"
        "                or n in ('regista.trace.events', 'regista.trace.steps'))\n"
        "print(loaded)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


async def test_a_cold_first_screen_becomes_the_whole_one(
    trace_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    whole, notice = open_index(trace_path)  # read whole by the first scan: still cold
    assert whole.cold and whole.scanned == whole.size
    async with RegistaApp(whole, notice=notice, settle_s=0).run_test(size=(120, 40)) as pilot:
        await _warmed(pilot, whole)
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        expected = _screen(pilot.app)

    monkeypatch.setattr(tui_main, "FIRST_SCAN_BYTES", 2000)
    index, notice = open_index(trace_path)
    assert index.cold and index.start is None
    app = RegistaApp(index, notice=notice, settle_s=0)
    async with app.run_test(size=(120, 40)) as pilot:
        first = _screen(app)  # the first frame: rows from the scan, no step text yet
        assert "Refund order A-404 please." in first[1]
        assert first[2] == ""
        assert first[0][0].split()[:3] == expected[0][0].split()[:3]  # number, kind, model
        await _warmed(pilot, index)
        await app.workers.wait_for_complete()
        await app.screen.workers.wait_for_complete()
        await pilot.pause()
        assert not index.cold and index.start is not None
        assert _screen(app) == expected


@pytest.mark.parametrize("first_scan", [2000, None])
async def test_a_bad_start_found_after_the_first_screen_is_said_in_place(
    trace_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, first_scan: int | None
) -> None:
    """A session.start that only the event models can refuse (here: no model) is said in
    the status line once they load; the app keeps running."""
    lines = trace_path.read_bytes().split(b"\n")
    lines[0] = lines[0].replace(b'"model":', b'"modell":', 1)
    path = tmp_path / "bad-start.jsonl"
    path.write_bytes(b"\n".join(lines))
    if first_scan is not None:  # else the first scan reads it whole
        monkeypatch.setattr(tui_main, "FIRST_SCAN_BYTES", first_scan)
    index, notice = open_index(path)
    assert index.cold
    app = RegistaApp(index, notice=notice, settle_s=0)
    async with app.run_test(size=(120, 40)) as pilot:
        await _warmed(pilot, index)
        status = str(app.screen.query_one("#status").render())
        assert "bad-start.jsonl:1" in status
        assert app.is_running


def test_a_cold_scan_then_warm_is_a_scan(trace_path: Path) -> None:
    """The index of a cold scan, warmed, holds what a plain scan does."""
    plain = TraceIndex(trace_path)
    plain.scan()
    cold = TraceIndex(trace_path)
    cold.cold = True
    cold.scan()
    assert cold.start is None and cold.end is None
    cold.warm()
    assert cold.start == plain.start and cold.end == plain.end
    assert cold.steps == plain.steps
    assert cold.summary() == plain.summary()
    assert [cold.step(p) for p in range(len(cold))] == [plain.step(p) for p in range(len(plain))]
