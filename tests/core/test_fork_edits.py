"""Forks go live right after the last edit by default; several edits at once."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from builders import tool_use
from files import HAPPY, LOOP, search_hit

from regista import ModelAnswerEdit, ToolResultEdit, fork
from regista.cli._edits import parse_edits_file
from regista.cli.main import main
from regista.errors import InvalidEditError
from regista.trace.reader import Trace

pytestmark = pytest.mark.usefixtures("sample_db")  # agents made from agent_ref


async def test_a_fork_goes_live_right_after_the_edit(tmp_path: Path) -> None:
    result = await fork(LOOP, 1, ToolResultEdit(search_hit()), trace_dir=tmp_path)
    assert (result.recorded_steps, result.edited_steps) == (1, 1)
    assert result.live_steps == result.steps - 2 and result.loose_steps == 0
    assert result.stop_reason == "end_turn"
    forked_from = Trace.load(result.trace_path).start.forked_from
    assert forked_from is not None and forked_from["live_after"] == 1


async def test_loose_playback_is_asked_for(tmp_path: Path) -> None:
    result = await fork(LOOP, 1, ToolResultEdit(search_hit()), loose=True, trace_dir=tmp_path)
    assert result.live_steps == 0
    assert result.loose_steps == result.steps - 2
    assert result.stop_reason == "max_turns"  # the recording's answers, played on
    forked_from = Trace.load(result.trace_path).start.forked_from
    assert forked_from is not None and forked_from["live_after"] is None


async def test_several_edits_go_live_after_the_last(tmp_path: Path) -> None:
    """Edit the search result at step 1 and the model's next move at step 2: step 0 is
    replayed, both edits are applied, and the agent is live from step 3."""
    move = ModelAnswerEdit([tool_use("toolu_fix", "get_order", order_id="ORD-1042")])
    result = await fork(LOOP, edits={2: move, 1: ToolResultEdit(search_hit())}, trace_dir=tmp_path)
    assert result.edited_at == [1, 2] and result.at_step == 1
    trace = Trace.load(result.trace_path)
    assert [s.source for s in trace.steps()[:4]] == ["recorded", "edit", "edit", "live"]
    call = trace.steps()[3].tool_call
    assert call is not None and call.input == {"order_id": "ORD-1042"}
    assert result.stop_reason == "end_turn"
    forked_from = trace.start.forked_from
    assert forked_from is not None
    assert forked_from["live_after"] == 2
    assert [e["at_step"] for e in forked_from["edits"]] == [1, 2]
    assert forked_from["edits"][1]["edit"]["kind"] == "model_answer"


async def test_steps_between_edits_play_the_recording_loosely(tmp_path: Path) -> None:
    edits = [(1, ToolResultEdit("nothing")), (4, ModelAnswerEdit.text("Sorry."))]
    result = await fork(HAPPY, edits=edits, trace_dir=tmp_path)
    steps = Trace.load(result.trace_path).steps()
    assert [s.source for s in steps] == ["recorded", "edit", "recorded", "recorded", "edit"]
    assert result.matched == {2: False}
    assert result.loose_steps == 2 and result.output == "Sorry."


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"edits": {}}, "edits is empty"),
        ({"edits": [(1, ToolResultEdit("a")), (1, ToolResultEdit("b"))]}, "edited twice"),
        ({"edits": {1: ToolResultEdit("a")}, "at_step": 1}, "not both"),
        ({"edits": {1: ToolResultEdit("a"), 3: ToolResultEdit("b")}, "live_after": 2}, "last"),
        ({"edits": {1: ToolResultEdit("a")}, "live_after": 2, "loose": True}, "never goes live"),
        ({"edits": {1: None}}, "is None"),
        ({"edits": [1]}, "pair"),
        ({"edits": {"1": ToolResultEdit("a")}}, "whole number"),
        ({}, "needs at_step"),
    ],
)
async def test_bad_edit_lists(tmp_path: Path, kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidEditError, match=message):
        await fork(HAPPY, trace_dir=tmp_path, **kwargs)
    assert not list(tmp_path.glob("*.jsonl"))


# -- the command line --------------------------------------------------------------------


def test_cli_fork_is_live_by_default(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "hit.json").write_text(search_hit())
    args = ["fork", str(LOOP), "--at", "1", "--tool-result", f"@{tmp_path / 'hit.json'}"]
    assert main([*args, "--trace-dir", str(tmp_path / "f")]) == 0
    out = capsys.readouterr().out
    assert "fork at step 1: end_turn" in out
    assert "(1 recorded, 1 edited, " in out and " 0 live" not in out
    assert "loosely" not in out


def test_cli_loose_playback_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["fork", str(HAPPY), "--at", "3", "--tool-result", "{}", "--loose"]
    assert main([*args, "--trace-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "(3 recorded, 1 edited, 5 played loosely from the recording, 0 live)" in out
    assert "loose playback: 0 of 3 model requests" in out


def test_cli_several_edits(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["fork", str(HAPPY), "--at", "1", "--tool-result", "none", "--error"]
    args += ["--at", "4", "--answer", "Sorry."]
    assert main([*args, "--trace-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "fork at steps 1, 4: end_turn after 5 steps" in out
    [written] = tmp_path.glob("*.jsonl")
    step1 = Trace.load(written).steps()[1].result
    assert step1 is not None and step1.is_error


def test_cli_edits_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    edits = [
        {"at_step": 4, "kind": "model_answer", "content": "Sorry."},
        {"at_step": 1, "kind": "tool_result", "content": "none", "is_error": True},
    ]
    (tmp_path / "edits.json").write_text(json.dumps(edits))
    args = ["fork", str(HAPPY), "--edits", str(tmp_path / "edits.json")]
    assert main([*args, "--trace-dir", str(tmp_path / "f")]) == 0
    assert "fork at steps 1, 4" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--at", "1"], "--at 1 has no edit"),
        ([], "give an edit"),
        (["--at", "1", "--answer", "x", "--error"], "--error marks a new tool result"),
        (["--at", "1", "--tool-result", "x", "--edits", "e.json"], "not both"),
    ],
)
def test_cli_edit_misuse(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    assert main(["fork", str(HAPPY), *args, "--trace-dir", str(tmp_path)]) == 2
    assert message in capsys.readouterr().err
    assert not list(tmp_path.glob("*.jsonl"))


def test_cli_edit_flag_before_its_step(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["fork", str(HAPPY), "--tool-result", "x", "--at", "1"])
    assert info.value.code == 2
    assert "put --at N before it" in capsys.readouterr().err


def test_edits_file_fuzz() -> None:
    """Mutated edits files give edits or one InvalidEditError, never anything else."""
    rng = random.Random(12)
    base = json.dumps(
        [
            {"at_step": 1, "kind": "tool_result", "content": "x", "is_error": False},
            {"at_step": 4, "kind": "model_answer", "content": [{"type": "text", "text": "y"}]},
        ]
    )
    values: list[Any] = [None, 1, -1, 1.5, True, "x", [], {}, [1], {"a": 1}, "\u0000"]
    for _ in range(600):
        data = json.loads(base)
        if rng.random() < 0.3:
            raw = base[: rng.randrange(len(base))]
        else:
            item = rng.choice(data)
            key = rng.choice([*item.keys(), "edit", "stop_reason"])
            item[key] = rng.choice(values)
            raw = json.dumps(rng.choice([data, item, {"edits": data}, data[:0]]))
        try:
            edits = parse_edits_file(raw, "edits.json")
        except InvalidEditError as exc:
            assert str(exc).startswith("edits.json: ") and "\n" not in str(exc)
        else:
            assert all(isinstance(step, int) for step, _ in edits)


@pytest.mark.parametrize("text", ["@home/notes.txt: not found", "@@", "@", "plain", "a@b"])
def test_the_printed_fork_line_gives_back_a_tool_result_that_begins_with_at(text: str) -> None:
    """The debugger prints the ``regista fork`` line of an edit to paste: a new result that
    begins with ``@`` must come back as that text, not as the name of a file to read."""
    from regista.cli._common import read_arg
    from regista.cli._edits import fork_argv

    argv = fork_argv("t.jsonl", 3, ToolResultEdit(text), "traces")
    assert read_arg(argv[argv.index("--tool-result") + 1]) == text
