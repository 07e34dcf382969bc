"""A trace with no session.end: running, or cut short (crashed), told apart by how long the
file has been still; a still file costs no indexing and no drawing."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from shown import text_of
from waits import settle

from regista_tui.__main__ import open_index
from regista_tui.app import RegistaApp


def _cut(trace_path: Path, tmp_path: Path, *, keep: int, half: bool = False) -> Path:
    lines = trace_path.read_bytes().splitlines(keepends=True)
    data = b"".join(lines[:keep]) + (lines[keep][:30] if half else b"")
    path = tmp_path / "cut.jsonl"
    path.write_bytes(data)
    return path


def _age(path: Path, seconds: float) -> None:
    then = time.time() - seconds
    os.utime(path, (then, then))


async def _until(pilot: Any, ready: Callable[[], bool]) -> None:
    for _ in range(250):
        if ready():
            return
        await pilot.pause(0.02)
    raise AssertionError("the condition never held")


async def test_a_still_unfinished_trace_says_it_crashed(trace_path: Path, tmp_path: Path) -> None:
    path = _cut(trace_path, tmp_path, keep=10)
    _age(path, 5 * 60 + 3)
    index, notice = open_index(path)
    app = RegistaApp(index, notice=notice, settle_s=0)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        shown = text_of(app, "#header")
        assert "crashed / unfinished (no session.end), last written 5 min ago" in shown
        assert "running" not in shown and "reading" not in shown


async def test_a_half_written_last_line_is_not_read_forever(
    trace_path: Path, tmp_path: Path
) -> None:
    """The half-written line is never indexed, so the scan stops short of the file's size:
    that is not "reading… 99%", and the notice is said once."""
    path = _cut(trace_path, tmp_path, keep=10, half=True)
    _age(path, 2 * 3600)
    index, notice = open_index(path)
    app = RegistaApp(index, notice=notice, settle_s=0)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        shown = text_of(app, "#header")
        assert "reading" not in shown
        assert "crashed mid-write (no session.end), last written 2 h ago" in shown
        assert shown.count("half-written") == 1


async def test_a_growing_trace_is_running_and_a_still_one_costs_no_indexing(
    trace_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("regista_tui.screens.browser._FOLLOW_S", 0.01)
    lines = trace_path.read_bytes().splitlines(keepends=True)
    path = _cut(trace_path, tmp_path, keep=6)
    index, notice = open_index(path)
    scans: list[int] = []
    real_scan = index.scan

    def counted(*args: Any) -> bool:
        scans.append(1)
        return real_scan(*args)

    index.scan = counted  # type: ignore[method-assign]
    app = RegistaApp(index, notice=notice, settle_s=0)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        browser: Any = app.screen
        await _until(pilot, lambda: browser.polls_still >= 20)
        assert "◌ running" in text_of(app, "#header")
        assert browser.polls_grown == 0
        before = len(scans)
        await _until(pilot, lambda: browser.polls_still >= 40)
        assert len(scans) == before  # a still file is not indexed again
        # the session writes more: it is picked up once, and then the file is still again
        with path.open("ab") as f:
            f.write(b"".join(lines[6:9]))
        await _until(pilot, lambda: browser.polls_grown == 1 and not browser.workers)
        grown = len(index)
        after = len(scans)
        still = browser.polls_still
        await _until(pilot, lambda: browser.polls_still >= still + 20)
        assert len(scans) == after and browser.polls_grown == 1
        assert grown > 0 and len(index) == grown


def test_a_whole_trace_opened_cold_is_not_called_crashed(trace_path: Path, tmp_path: Path) -> None:
    """Its session.end was met by the first scan, kept unvalidated until the event models
    load: the header says it is being read, then how it ended; never that it crashed."""
    from regista_tui.widgets.header.session_header import _header_text

    path = tmp_path / "done.jsonl"
    path.write_bytes(trace_path.read_bytes())
    _age(path, 3600)  # still for long: without its end it would be called crashed
    index, _ = open_index(path)
    assert index.cold and index.scanned == index.size and index.end is None
    first = _header_text(index, "", "").plain
    assert "reading" in first and "crashed" not in first
    index.warm()
    assert "end_turn" in _header_text(index, "", "").plain
    index.close()
