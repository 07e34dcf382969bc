"""``regista show`` on a run that loops: its repeats are grouped by what they repeat, the
most wasteful first, a bounded number of lines; ``--json`` keeps every repeat."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from importers.cc_fixtures import CCSession, text, tool_use

from regista.cli.main import main
from regista.importers import convert_file
from regista.loops import GROUPS_SHOWN

#: Distinct commands the looping session runs, each again and again.
COMMANDS = 40
ROUNDS = 60


def _looping_run(tmp_path: Path) -> Path:
    """An imported session that runs 40 commands 60 times each, all failing as the one
    before (2,400 tool calls: nearly all repeat an earlier call and retry the same error,
    and each answer that asks for one repeats an earlier answer)."""
    s = CCSession()
    s.prompt("Make the tests pass")
    n = 0
    for _ in range(ROUNDS):
        for c in range(COMMANDS):
            n += 1
            s.answer(tool_use(f"toolu_{n:05d}", "Bash", command=f"pytest -q tests/test_{c}.py"))
            s.tool_result(f"toolu_{n:05d}", "Exit code 4\nno tests ran", is_error=True)
    s.answer(text("I give up."), stop_reason="end_turn")
    conv = convert_file(s.write(tmp_path / "s.jsonl"))
    assert conv is not None
    path = tmp_path / "loop.jsonl"
    path.write_bytes(conv.main.to_bytes())
    return path


def _repeat_lines(out: str) -> list[str]:
    lines = out.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("Repeats"))
    return lines[at:]


def test_a_looping_run_prints_its_repeats_as_a_few_groups(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _looping_run(tmp_path)
    assert main(["show", str(path)]) == 0
    lines = _repeat_lines(capsys.readouterr().out)
    # the heading, at most GROUPS_SHOWN groups, and the line that counts the rest
    assert len(lines) == 1 + GROUPS_SHOWN + 1, lines[:5]
    assert lines[-1].startswith("… and ") and "show --json for all" in lines[-1]
    body = lines[1:-1]
    assert all("(at steps " in line and " more;" in line for line in body), body[:3]
    # the answers cost tokens: they come first; each was asked again 59 times
    assert all("↻ ×59 same answer as step " in line for line in body), body[:3]


def test_the_groups_are_the_most_wasteful_first_and_json_keeps_every_repeat(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _looping_run(tmp_path)
    assert main(["show", str(path), "--json"]) == 0
    found = json.loads(capsys.readouterr().out)["repeats"]
    kinds = [r["kind"] for r in found["repeats"]]
    # every repeat is listed as before: 40 calls × 59 repeats, as many retries, and the
    # answers that ask for them (the first answer of each command is new)
    assert kinds.count("repeated_call") == COMMANDS * (ROUNDS - 1)
    assert kinds.count("retry") == COMMANDS * ROUNDS - 1
    assert kinds.count("repeated_answer") == COMMANDS * (ROUNDS - 1)
    groups = found["groups"]
    # one group per command and per answer, and one for every retry of the same error
    assert len(groups) == 2 * COMMANDS + 1
    assert sum(g["count"] for g in groups) == len(found["repeats"])
    (retries,) = [g for g in groups if g["kind"] == "retry"]
    assert retries["count"] == COMMANDS * ROUNDS - 1 and retries["what"].startswith("Exit code 4")
    assert {g["count"] for g in groups if g["kind"] != "retry"} == {ROUNDS - 1}
    # the answers cost tokens; the tool calls none: the answers come first
    assert {g["kind"] for g in groups[:COMMANDS]} == {"repeated_answer"}
    totals = [g["tokens"]["total"] for g in groups]
    assert totals == sorted(totals, reverse=True) and totals[0] > 0
    for g in groups:
        steps = [r["step"] for r in found["repeats"] if r["kind"] == g["kind"]]
        assert set(g["steps"]) <= set(steps)


def test_a_few_repeats_print_one_line_each(capsys: pytest.CaptureFixture[str]) -> None:
    sample = Path(__file__).parents[2] / "sample_traces" / "refund_search_loop.jsonl"
    assert main(["show", str(sample)]) == 0
    lines = _repeat_lines(capsys.readouterr().out)
    assert lines[0].startswith("Repeats   9 steps repeat earlier ones")
    assert any("same tool call as step 1: search_orders" in line for line in lines)
    assert not any("more group" in line for line in lines)
