"""Snapshots of the fork flow: the editor, and the comparison after a finished fork.

A fork gets a fresh session id (its file name) and real paths: the tests work in a tmp
folder with relative paths and a fixed session id, so the pictures are stable.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from fork_helpers import LOOP, browser, finished, fork_with, open_editor, search_hit
from waits import settle


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("REGISTA_SAMPLE_DB", str(tmp_path / "shop.db"))
    monkeypatch.setattr("regista.loop.new_session_id", lambda: "01FORKSNAPSHOT0000000000000")
    shutil.copy(LOOP, tmp_path / "loop.jsonl")
    return tmp_path


def test_editor(snap_compare: Any, here: Path) -> None:
    """The editor over the browser at 120×40 for step 1 (search_orders): the recorded
    result pretty-printed with JSON highlighting, the is_error switch off, the border listing
    the keys ("ctrl+s fork · ctrl+a select all · esc cancel"), and the plan
    ("step 0 replayed … live after it: scripted …")."""

    async def run_before(pilot: Any) -> None:
        await open_editor(pilot.app, pilot, "j")

    app = browser(Path("loop.jsonl"), Path("forks"))
    assert snap_compare(app, terminal_size=(120, 40), run_before=run_before)


def test_finished_fork(snap_compare: Any, here: Path) -> None:
    """After fixing step 1's search result: the original (max_turns, 20 steps) beside the
    fork (end_turn, 9 steps, "fork at step 1"), the divergence at step 1 selected with its
    result diff below, the fork's new get_order / issue_refund / send_email steps as
    inserts, and the fork status: 1 replayed · 1 edited · 7 live, "live: scripted", the
    original's outcome, and the command that reopens the comparison."""

    async def run_before(pilot: Any) -> None:
        await open_editor(pilot.app, pilot, "j")
        await fork_with(pilot.app, pilot, search_hit())
        await finished(pilot.app, pilot)
        pilot.app.clear_notifications()
        await settle(pilot)

    app = browser(Path("loop.jsonl"), Path("forks"))
    assert snap_compare(app, terminal_size=(120, 40), run_before=run_before)


def test_finished_fork_narrow(snap_compare: Any, here: Path) -> None:
    """The same comparison at 80×24: the pair list, the pair diff, the two fork status
    lines and the footer with x (stop, hidden once finished), esc, n / N and / all fit."""

    async def run_before(pilot: Any) -> None:
        await open_editor(pilot.app, pilot, "j")
        await fork_with(pilot.app, pilot, search_hit())
        await finished(pilot.app, pilot)
        pilot.app.clear_notifications()
        await settle(pilot)

    app = browser(Path("loop.jsonl"), Path("forks"))
    assert snap_compare(app, terminal_size=(80, 24), run_before=run_before)
