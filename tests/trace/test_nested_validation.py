"""Nested payloads are checked on load: a corrupt value is one TraceFormatError line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from regista.cli.main import main
from regista.errors import TraceFormatError
from regista.trace.index import TraceIndex
from regista.trace.reader import Trace

SAMPLE = Path(__file__).parents[2] / "sample_traces" / "refund_denied_compaction.jsonl"


def _corrupt(tmp_path: Path, kind: str, change: Any) -> tuple[Path, int]:
    lines = SAMPLE.read_bytes().split(b"\n")[:-1]
    for i, raw in enumerate(lines):
        event = orjson.loads(raw)
        if event["type"] == kind:
            change(event)
            lines[i] = orjson.dumps(event)
            path = tmp_path / "bad.jsonl"
            path.write_bytes(b"\n".join(lines) + b"\n")
            return path, i + 1
    raise AssertionError(kind)


def _set(*keys: Any, value: Any) -> Any:
    def change(event: dict[str, Any]) -> None:
        target = event
        for key in keys[:-1]:
            target = target[key]
        target[keys[-1]] = value

    return change


CASES = [
    ("llm.response", _set("response", "content", value=5), "response.content"),
    ("llm.response", _set("response", "content", 0, value="text"), "response.content[0]"),
    ("llm.response", _set("response", "usage", value="many"), "response.usage"),
    (
        "llm.response",
        _set("response", "usage", "output_tokens", value="12"),
        "response.usage.output_tokens",
    ),
    ("llm.response", _set("response", "stop_reason", value=[1]), "response.stop_reason"),
    ("llm.request", _set("messages", 0, "role", value=7), "messages[0].role"),
    ("llm.request", _set("messages", 0, "content", value=7), "messages[0].content"),
    ("llm.request", _set("tools", 0, "name", value=None), "tools[0].name"),
    ("session.end", _set("usage", "input_tokens", value=1.5), "usage.input_tokens"),
    ("context.compaction", _set("replaced", 0, "content", value=3), "replaced[0].content"),
]


@pytest.mark.parametrize(("kind", "change", "where"), CASES)
def test_a_corrupt_nested_value_names_file_line_and_place(
    tmp_path: Path, kind: str, change: Any, where: str
) -> None:
    path, line = _corrupt(tmp_path, kind, change)
    with pytest.raises(TraceFormatError) as info:
        Trace.load(path)
    assert info.value.line == line
    assert f"{path}:{line}: invalid '{kind}' event: {where}" in str(info.value)


@pytest.mark.parametrize("command", ["show", "replay", "export", "diff", "test"])
def test_every_command_says_it_in_one_line(
    tmp_path: Path, command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path, line = _corrupt(tmp_path, "llm.response", _set("response", "content", value=5))
    argv = {
        "show": ["show", str(path)],
        "replay": ["replay", str(path), "--trace-dir", str(tmp_path / "r")],
        "export": ["export", str(path), "--console"],
        "diff": ["diff", str(SAMPLE), str(path)],
        "test": ["test", str(path)],
    }[command]
    assert main(argv) != 0
    out, err = capsys.readouterr()
    text = err if command != "test" else out
    assert f"bad.jsonl:{line}: invalid 'llm.response' event: response.content" in text
    assert "Traceback" not in out + err


def test_the_index_reports_it_when_the_step_is_read(tmp_path: Path) -> None:
    path, line = _corrupt(tmp_path, "llm.response", _set("response", "usage", value=[]))
    index = TraceIndex(path)
    while not index.scan():
        pass
    with pytest.raises(TraceFormatError, match=rf"bad\.jsonl:{line}: .*response\.usage"):
        for pos in range(len(index.steps)):
            index.step(pos)
    index.close()


def test_the_kinds_a_reader_does_not_check_have_nothing_to_check() -> None:
    """``parse_line`` skips ``check_event`` for ``NOTHING_NESTED``: it must look at no field
    of them (an event with no fields at all would fail any look)."""
    from types import SimpleNamespace

    from regista.trace.validate import NOTHING_NESTED, check_event

    for kind in NOTHING_NESTED:
        assert check_event(SimpleNamespace(type=kind)) is None
    for kind in ("llm.response", "tool.result", "session.end"):  # these are looked at
        with pytest.raises(AttributeError):
            check_event(SimpleNamespace(type=kind))
