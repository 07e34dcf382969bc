"""``e`` on a Claude Code session in the debugger: the line to copy writes the fork back
into Claude Code (``--resume-in claude``), and run as it is given it does."""

from __future__ import annotations

import os
import shlex
import time
from pathlib import Path

import pytest
from fork_helpers import browser, open_editor
from importers.cc_fixtures import SESSION, basic_session
from textual.widgets import TextArea
from waits import settle

import regista.importers.memory as memory
from regista.cli.main import main as regista
from regista.importers.memory import InMemoryRuns
from regista_tui.screens.edit import ForkCommand


async def test_a_claude_code_session_forks_back_into_claude(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(memory, "RUNS", InMemoryRuns())
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude"))
    path = basic_session().write(tmp_path / "claude" / "projects" / "-p" / f"{SESSION}.jsonl")
    then = time.time() - 3600
    os.utime(path, (then, then))
    app = browser(path, tmp_path / "forks")
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        editor = await open_editor(app, pilot, "j")  # step 1: the failing Bash call (kept failed)
        editor.query_one(TextArea).load_text("2 passed")
        await pilot.press("ctrl+s")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, ForkCommand)
        line = screen.line
        assert (
            line
            == f"regista fork {path} --at 1 --tool-result '2 passed' --error --resume-in claude"
        )
        assert "Fork the Claude Code session" in str(screen.query_one("Vertical").border_title)
    assert regista(shlex.split(line)[1:]) == 0
    out = capsys.readouterr().out
    assert "continue: " in out and "claude --resume " in out
    assert not (tmp_path / "forks").exists()  # nothing but the new session is written
