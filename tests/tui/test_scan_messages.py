"""The trace scan reports its progress with messages that coalesce, and stops when cancelled."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from textual.message import Message

from regista_tui.__main__ import open_index
from regista_tui.app import RegistaApp
from regista_tui.screens.browser import BrowserScreen, IndexGrown, ScanFailed


def test_a_newer_progress_message_replaces_one_still_waiting() -> None:
    assert IndexGrown(False).can_replace(IndexGrown(True))
    assert not IndexGrown(False).can_replace(ScanFailed("x"))
    assert not Message().can_replace(IndexGrown(False))


async def test_a_cancelled_scan_stops_between_slices(trace_path: Path) -> None:
    index, _ = open_index(trace_path)
    slices: list[int] = []
    cancel = threading.Event()
    real_scan = index.scan

    def scan(*args: Any) -> bool:
        slices.append(1)
        cancel.set()
        real_scan(*args)
        return False  # never done on its own: only cancellation ends the loop

    index.scan = scan  # type: ignore[method-assign]
    app = RegistaApp(index)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = app.screen
        assert isinstance(screen, BrowserScreen)
        worker = screen._scan()
        await pilot.pause()
        cancel.wait(5)
        worker.cancel()
        for _ in range(200):
            if worker.is_finished:
                break
            await pilot.pause(0.01)
        assert worker.is_finished
        seen = len(slices)
        await pilot.pause(0.05)
        assert len(slices) == seen
