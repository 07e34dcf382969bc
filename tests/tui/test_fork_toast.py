"""The "Fork finished" toast leaves the fork's header (which run is which, how each ended)
and the reopen command (meant to be copied) uncovered."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from fork_helpers import LOOP, browser, finished, fork_with, open_editor, search_hit
from textual.widgets._toast import Toast
from waits import settle


@pytest.fixture(autouse=True)
def _sample_db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REGISTA_SAMPLE_DB", str(tmp_path / "shop.db"))


@pytest.mark.parametrize("size", [(120, 40), (80, 24), (60, 16)])
async def test_the_toast_does_not_cover_the_reopen_line(
    tmp_path: Path, size: tuple[int, int]
) -> None:
    app = browser(LOOP, tmp_path / "forks")
    async with app.run_test(size=size, notifications=True) as pilot:
        await settle(pilot)
        await open_editor(app, pilot, "j")
        await fork_with(app, pilot, search_hit())
        screen: Any = await finished(app, pilot)
        for _ in range(50):  # the toast is mounted after the notification is raised
            toasts = list(app.screen.query(Toast))
            if toasts:
                break
            await settle(pilot)
        assert toasts, "the fork says it finished"
        where = screen.query_one("#fork-where").region
        header = screen.query_one("#compare-header").region
        assert "reopen" in str(screen.query_one("#fork-where").render())
        for toast in toasts:
            assert not toast.region.overlaps(where), (toast.region, where)
            assert not toast.region.overlaps(header), (toast.region, header)
