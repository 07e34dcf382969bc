"""Bad fork edits are one InvalidEditError line, in the API and the CLI."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from regista import InvalidEditError, ModelAnswerEdit, ToolResultEdit, fork
from regista.cli.main import main

SAMPLE = Path(__file__).parents[2] / "sample_traces" / "refund_happy.jsonl"


pytestmark = pytest.mark.usefixtures("sample_db")  # agents made from agent_ref


@pytest.mark.parametrize(
    "make",
    [
        lambda: ToolResultEdit([1, "x", None]),  # type: ignore[list-item]
        lambda: ToolResultEdit(5),  # type: ignore[arg-type]
        lambda: ToolResultEdit("x", is_error="yes"),  # type: ignore[arg-type]
        lambda: ModelAnswerEdit([{"type": "text", "text": "hi"}], stop_reason=5),  # type: ignore[arg-type]
        lambda: ModelAnswerEdit("hi"),  # type: ignore[arg-type]
        lambda: ModelAnswerEdit.parse('{"content": 5}'),
    ],
)
def test_a_malformed_edit_is_refused_when_made(make: Any) -> None:
    with pytest.raises(InvalidEditError) as info:
        make()
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("at_step", ["1", None, 1.5])
async def test_a_bad_step_is_one_line(tmp_path: Path, at_step: Any) -> None:
    with pytest.raises(InvalidEditError) as info:
        await fork(SAMPLE, at_step=at_step, edit=ToolResultEdit("x"), trace_dir=tmp_path)
    assert "\n" not in str(info.value)


def test_cli_answer_with_bad_content(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["fork", str(SAMPLE), "--at", "2", "--answer", '{"content": 5}']
    assert main([*argv, "--trace-dir", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert (
        err == "regista: the answer's 'content' must be text or a list of content blocks, not int\n"
    )


def test_cli_edit_file_not_utf8(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "result.txt"
    bad.write_bytes(b"\xff\xfe not text")
    argv = ["fork", str(SAMPLE), "--at", "1", "--tool-result", f"@{bad}"]
    assert main([*argv, "--trace-dir", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err == f"regista: cannot read {bad}: it is not UTF-8 text (byte 0xff at offset 0)\n"
