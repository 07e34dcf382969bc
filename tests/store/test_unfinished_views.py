"""A run without its end (running now, or killed) reads the same in every view: its steps,
tokens and cost so far, and its turns.

``runs`` (and so ``/v1/runs`` and MCP's ``list_runs``) read only a trace's first and last
lines, and said 0 tokens and "unknown: the run has not ended" where ``show``, MCP's
``run_summary`` and share gave the tokens and cost of the steps so far; the TUI's header
counted an unfinished run's model calls as its turns."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from importers.cc_fixtures import CCSession, text, tool_use

from regista.cli.main import main
from regista.importers import convert, write_runs


@pytest.fixture
def cut(tmp_path: Path) -> Path:
    """An imported session of two prompts and three model calls, without its end."""
    s = CCSession()
    s.prompt("Weather in Oslo?")
    s.answer(tool_use("toolu_1", "Bash", command="weather oslo"))
    s.tool_result("toolu_1", "rain")
    s.answer(text("Rain."))
    s.prompt("And in Rome?")
    s.answer(text("Sun."))
    src = s.write(tmp_path / "cc" / "4f1c2a9e-8d3b-4e6f-a1b2-c3d4e5f60718.jsonl")
    path = write_runs(convert("claude-code", src), tmp_path / "traces")[0]
    lines = path.read_bytes().splitlines(keepends=True)
    assert b'"session.end"' in lines[-1]
    path.write_bytes(b"".join(lines[:-1]))
    return path


def test_runs_gives_the_tokens_and_cost_so_far(
    cut: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["show", str(cut), "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert main(["runs", str(cut.parent), "--json"]) == 0
    (listed,) = json.loads(capsys.readouterr().out)
    assert shown["status"] == listed["status"] == "in_progress"
    assert shown["tokens"]["total"] > 0
    for key in ("steps", "tokens", "cost_usd", "cost_basis"):
        assert (key, listed[key]) == (key, shown[key])


def test_the_tui_header_counts_turns_as_show_does(
    cut: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from regista_tui.__main__ import open_index
    from regista_tui.widgets.header.session_header import _header_text

    assert main(["show", str(cut), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["turns"] == 2
    index, _ = open_index(cut)
    try:
        index.warm()
        header = _header_text(index, "", "").plain
    finally:
        index.close()
    assert "2 turns" in header
