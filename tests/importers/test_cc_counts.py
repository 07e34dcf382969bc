"""What an imported Claude Code session counts: turns are what the person typed, the step
count ``regista import`` prints is the run's, and a title is the session's own."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from regista.cli.main import main
from regista.importers.claude_code import convert
from regista.trace.reader import Trace

from .cc_fixtures import CCSession, basic_session, text, tool_use


def _json(path: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, object]:
    capsys.readouterr()
    assert main(["show", "--json", str(path)]) == 0
    facts: dict[str, object] = json.loads(capsys.readouterr().out)
    return facts


def test_turns_are_only_what_the_person_typed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    s = CCSession()
    s.prompt("Refactor the shop")
    s.answer(tool_use("toolu_1", "Bash", command="ls"))
    s.prompt("[Request interrupted by user for tool use]")
    s.prompt("[Request interrupted by user]")
    s._envelope(
        "user",
        message={"role": "user", "content": [text("[Request interrupted by user]")]},
    )
    s.prompt("<local-command-stdout>Set model to opus</local-command-stdout>")
    s.prompt("<local-command-stderr>no such command</local-command-stderr>")
    s.prompt("<system-reminder>The date is 2026-03-02.</system-reminder>")
    s.prompt("Go on, but <system-reminder>a note</system-reminder> keep the tests")
    s.answer(text("Continuing."), stop_reason="end_turn")
    path = s.write(tmp_path / "s.jsonl")
    conv = convert(path)
    trace = Trace.from_bytes(conv.main.to_bytes(), "<test>")
    assert trace.end is not None and trace.end.turns == 2
    assert [st.turn for st in trace.steps() if st.kind == "model"] == [0, 1]
    assert _json(path, capsys)["turns"] == 2


def test_import_prints_the_step_count_of_a_run_with_a_compaction(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    s = CCSession()
    s.prompt("Refactor the shop")
    s.answer(text("Working on it."))
    s.compact("This session is being continued from a previous conversation. Summary: refactor.")
    s.prompt("Go on")
    s.answer(text("Continuing."), stop_reason="end_turn")
    path = s.write(tmp_path / "s.jsonl")
    out_dir = tmp_path / "traces"
    assert main(["import", "claude-code", str(path), "--trace-dir", str(out_dir)]) == 0
    printed = capsys.readouterr().out
    (trace,) = out_dir.iterdir()
    steps = _json(trace, capsys)["steps"]
    assert steps == 3
    assert f"({steps} steps)" in printed


def test_a_summary_titles_only_the_session_holding_its_leaf(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    earlier = basic_session()  # its summary names its own last message
    s = CCSession(session_id="9a8b7c6d-0000-4000-8000-000000000001")
    s.raw({"type": "summary", "summary": "Earlier work", "leafUuid": earlier.lines[-1]["uuid"]})
    s.prompt("Add a discount")
    s.answer(text("Added."), stop_reason="end_turn")
    s.raw({"type": "summary", "summary": "Add a discount", "leafUuid": s.lines[-1]["uuid"]})
    own = convert(earlier.write(tmp_path / "a.jsonl")).main.events[0]["metadata"]
    assert own["title"] == "Fix the failing refund test"
    other = convert(s.write(tmp_path / "b.jsonl")).main.events[0]["metadata"]
    assert other["title"] == "Add a discount"
    s.lines = [ln for ln in s.lines if ln.get("summary") != "Add a discount"]
    untitled = convert(s.write(tmp_path / "c.jsonl")).main.events[0]["metadata"]
    assert "title" not in untitled
