"""``regista show``: counts read as English, live steps of a mixed run are tagged, and a
denied call has no duration."""

from __future__ import annotations

from pathlib import Path

import pytest
from builders import answer, simple_agent

from regista import ScriptedProvider, ToolResultEdit, fork
from regista.cli.main import main

SAMPLES = Path(__file__).parents[2] / "sample_traces"


def _rows(out: str) -> dict[int, str]:
    rows = {}
    for line in out.splitlines():
        head = line.strip().split(" ", 1)[0]
        if head.isdigit() and ("model" in line or "tool" in line or "compaction" in line):
            rows[int(head)] = line
    return rows


def test_one_turn_is_one_turn(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    agent = simple_agent(tmp_path, provider=ScriptedProvider([answer(text="Hi.")]))
    result = agent.run_sync("Hello")
    assert main(["show", str(result.trace_path)]) == 0
    out = capsys.readouterr().out
    assert "1 turn · 1 step · 0 tool calls" in out


async def test_live_steps_of_a_fork_are_tagged(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    recorded = await simple_agent(tmp_path / "a").run("Weather?")
    forked = await fork(
        recorded.trace_path, 1, ToolResultEdit("Snow."), agent=simple_agent(tmp_path)
    )
    assert main(["show", str(forked.trace_path)]) == 0
    rows = _rows(capsys.readouterr().out)
    assert rows[0].rstrip().endswith("recorded")
    assert rows[1].rstrip().endswith("edit")
    assert rows[2].rstrip().endswith("live")
    # a plain run does not tag every step
    assert main(["show", str(recorded.trace_path)]) == 0
    assert "live" not in "".join(_rows(capsys.readouterr().out).values())


def test_a_denied_call_has_no_duration(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["show", str(SAMPLES / "refund_denied_compaction.jsonl")]) == 0
    rows = _rows(capsys.readouterr().out)
    denied = rows[8]
    assert denied.rstrip().endswith("denied")
    assert "750" not in denied and "750" in rows[9]
