"""The trace writer: append-only, one line per event, on disk as soon as it is written."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
import warnings
from pathlib import Path
from typing import Any

import orjson
import pytest
from pydantic import ValidationError

from regista.errors import TraceExistsError, TraceWarning, TraceWriteError, UserError
from regista.trace.events import SessionEnd, SessionStart, ToolCall, ToolResult
from regista.trace.reader import Trace
from regista.trace.validate import MAX_DEPTH
from regista.trace.writer import TraceWriter


def _start(w: TraceWriter) -> None:
    w.write(SessionStart, task="t", model="m", provider="scripted")


def test_each_event_is_one_line_readable_while_the_writer_is_open(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    w = TraceWriter(path, "S1")
    _start(w)
    assert path.read_bytes().count(b"\n") == 1
    w.write(ToolCall, step=0, turn=0, tool_use_id="toolu_1", name="f", input={"x": "é\nz"})
    data = path.read_bytes()  # another reader, with the writer still open
    lines = data.split(b"\n")
    assert lines[-1] == b"" and len(lines) == 3
    first = orjson.loads(lines[0])
    assert list(first)[:5] == ["schema_version", "session_id", "seq", "ts", "type"]
    assert [orjson.loads(x)["seq"] for x in lines[:2]] == [0, 1]
    assert "é".encode() in lines[1]  # UTF-8, not \u escapes
    trace = Trace.load(path)  # a trace without session.end is readable
    assert not trace.complete and len(trace) == 2
    w.close()


def test_an_existing_trace_is_never_written_to(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(b"existing\n")
    with pytest.raises(TraceExistsError, match=r"a trace already exists at .*t\.jsonl"):
        TraceWriter(path, "S1")
    assert path.read_bytes() == b"existing\n"


def test_fsync_option_fsyncs_every_event(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    synced: list[int] = []
    real = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(fd), real(fd))[1])
    with TraceWriter(tmp_path / "a.jsonl", "S1", fsync=True) as w:
        _start(w)
        w.write(SessionEnd, stop_reason="end_turn")
    assert len(synced) == 2
    synced.clear()
    with TraceWriter(tmp_path / "b.jsonl", "S1") as w:
        _start(w)
    assert synced == []


def test_listeners_see_each_event_after_it_is_on_disk(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    seen: list[int] = []
    with TraceWriter(path, "S1") as w:
        w.add_listener(lambda ev: seen.append(path.read_bytes().count(b"\n")))
        _start(w)
        w.write(SessionEnd, stop_reason="end_turn")
    assert seen == [1, 2]


def test_large_events_are_written_whole(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    big = "x" * 3_000_000
    with TraceWriter(path, "S1") as w:
        _start(w)
        w.write(ToolResult, step=0, tool_use_id="t", name="f", content=big)
    trace = Trace.load(path)
    assert trace.events[1].content == big


_KILLED_WRITER = textwrap.dedent(
    """
    import sys
    from regista.trace.events import SessionStart, ToolResult
    from regista.trace.writer import TraceWriter

    w = TraceWriter(sys.argv[1], "S1")
    w.write(SessionStart, task="t", model="m", provider="scripted")
    payload = "y" * 200_000
    i = 0
    while True:
        w.write(ToolResult, step=i, tool_use_id=f"t{i}", name="f", content=payload)
        if i == 5:
            print("ready", flush=True)
        i += 1
    """
)


def test_kill_9_loses_at_most_the_event_being_written(tmp_path: Path) -> None:
    path = tmp_path / "killed.jsonl"
    proc = subprocess.Popen(
        [sys.executable, "-c", _KILLED_WRITER, str(path)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "ready"
        time.sleep(0.005)  # let it get into the middle of more writes
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    data = path.read_bytes()
    complete_lines = data.count(b"\n")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        trace = Trace.load(path)
    assert len(trace) == complete_lines >= 7
    assert [ev.seq for ev in trace.events] == list(range(len(trace)))
    assert trace.truncated == (not data.endswith(b"\n"))
    assert any(issubclass(w.category, TraceWarning) for w in caught) == trace.truncated


def test_a_folder_that_cannot_hold_traces_is_one_clear_error(tmp_path: Path) -> None:
    a_file = tmp_path / "traces"
    a_file.write_text("not a folder")
    with pytest.raises(UserError, match=r"cannot write traces in .*traces: .* is a file"):
        TraceWriter(a_file / "s.jsonl", "s")
    with pytest.raises(UserError, match=r"is a file, not a folder"):
        TraceWriter(a_file / "deeper" / "s.jsonl", "s")


def _nested(levels: int) -> Any:
    value: Any = "leaf"
    for i in range(levels):
        value = {"k": value} if i % 2 else [value]
    return value


@pytest.mark.parametrize("field", ["content", "extra"])
def test_the_depth_limit_is_exact_for_known_and_unknown_fields(tmp_path: Path, field: str) -> None:
    """The line is level 1: a value at level MAX_DEPTH is written, one level more is refused
    (and the trace stays whole), in a field that may nest and in one no model names."""
    with TraceWriter(tmp_path / "t.jsonl", "S1") as w:
        _start(w)
        fields: dict[str, Any] = {"step": 0, "tool_use_id": "t", "name": "f", "content": "x"}

        def deepest(levels: int) -> Any:  # a value whose innermost level is ``levels``
            if field == "extra":
                return _nested(levels - 1)
            return [{"type": "text", "text": "x", "more": _nested(levels - 3)}]

        fields[field] = deepest(MAX_DEPTH)
        w.append(ToolResult, fields)
        good = w.path.read_bytes()
        fields[field] = deepest(MAX_DEPTH + 1)
        with pytest.raises(TraceWriteError, match="nested more than"):
            w.append(ToolResult, fields)
        assert w.path.read_bytes() == good
    assert len(Trace.load(tmp_path / "t.jsonl")) == 2


def test_append_fills_the_defaults_and_leaves_the_fields_alone(tmp_path: Path) -> None:
    heard: list[Any] = []
    with TraceWriter(tmp_path / "t.jsonl", "S1", clock=lambda: "2026-01-01T00:00:00.000Z") as w:
        _start(w)
        w.add_listener(heard.append)
        fields = {"step": 0, "turn": 0, "tool_use_id": "toolu_1", "name": "f"}
        w.append(ToolCall, fields)
    assert fields == {"step": 0, "turn": 0, "tool_use_id": "toolu_1", "name": "f"}
    data = orjson.loads((tmp_path / "t.jsonl").read_bytes().splitlines()[1])
    assert data["seq"] == 1 and data["input"] == {} and data["ts"] == "2026-01-01T00:00:00.000Z"
    assert [type(e) for e in heard] == [ToolCall] and heard[0].model_dump() == data


def test_a_missing_field_is_pydantics_to_say_and_nothing_is_written(tmp_path: Path) -> None:
    with TraceWriter(tmp_path / "t.jsonl", "S1") as w:
        _start(w)
        with pytest.raises(ValidationError, match="tool_use_id"):
            w.write(ToolResult, step=0, name="f", content="x")
        assert w.next_seq == 1
    assert len(Trace.load(tmp_path / "t.jsonl")) == 1


def test_a_long_line_of_plain_values_is_never_too_deep_and_a_deep_one_still_is() -> None:
    from regista.trace.validate import too_deep

    quoted = {"content": "[" * 3000, "n": 1}  # brackets inside a string nest nothing
    assert not too_deep(orjson.dumps(quoted), quoted)
    deep = {"content": "x" * 3000, "input": _nested(MAX_DEPTH)}
    assert too_deep(orjson.dumps(deep), deep)
