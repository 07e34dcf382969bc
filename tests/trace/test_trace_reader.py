"""Reading traces back: the views, and every way a file can be bad."""

from __future__ import annotations

import warnings
from pathlib import Path

import orjson
import pytest
from engine_helpers import SCRIPT, agent

from regista.errors import (
    TraceError,
    TraceFormatError,
    TraceWarning,
    UnsupportedSchemaVersion,
)
from regista.trace.events import LlmRequestEvent, ToolResult
from regista.trace.reader import Trace


@pytest.fixture
async def path(tmp_path: Path) -> Path:
    result = await agent(tmp_path, SCRIPT).run("Say hi twice and add 2 and 3.")
    return result.trace_path


def _lines(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines(keepends=True)


def test_summary(path: Path) -> None:
    s = Trace.load(path).summary()
    assert s.task == "Say hi twice and add 2 and 3."
    assert (s.turns, s.tool_calls, s.stop_reason) == (1, 3, "end_turn")
    assert s.steps == 6
    assert s.cost_usd == 0.0  # scripted
    assert s.usage.input_tokens == 300
    assert s.output == "Done: hihi, 5."
    assert s.complete


def test_llm_calls_are_rebuilt_in_full_and_hash_as_recorded(path: Path) -> None:
    trace = Trace.load(path)
    calls = trace.llm_calls()
    assert len(calls) == 3
    recorded = [ev.request_hash for ev in trace.of_type(LlmRequestEvent)]
    assert [req.hash for req, _ in calls] == recorded
    assert [len(req.messages) for req, _ in calls] == [1, 3, 5]
    # Only the new messages are stored after the first request.
    stored = [len(ev.messages) for ev in trace.of_type(LlmRequestEvent)]
    assert stored == [1, 2, 2]
    assert calls[1][0].messages[2]["content"][0]["content"] == "hihi"
    assert calls[2][1].text == "Done: hihi, 5."


def test_tool_results_by_id(path: Path) -> None:
    results = Trace.load(path).tool_results()
    assert set(results) == {"toolu_1", "toolu_2", "toolu_3"}
    assert results["toolu_2"].content == '{"sum":5}'
    assert results["toolu_3"].is_error
    assert "exploded: test" in str(results["toolu_3"].content)


def test_steps_are_numbered_in_trace_order(path: Path) -> None:
    steps = Trace.load(path).steps()
    assert [s.index for s in steps] == list(range(6))
    assert [s.kind for s in steps] == ["model", "tool", "model", "tool", "tool", "model"]
    assert [s.title for s in steps if s.kind == "tool"] == ["echo", "add", "boom"]
    assert [s.is_error for s in steps] == [False, False, False, False, True, False]
    assert all(s.complete for s in steps)
    assert steps[0].request is not None and steps[0].request.messages[0]["role"] == "user"


def test_half_written_last_line_is_dropped_with_a_warning(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[:-40])  # the session.end line, cut short
    with pytest.warns(TraceWarning, match="half-written"):
        trace = Trace.load(path)
    assert trace.truncated and not trace.complete
    assert len(trace) == len(data.splitlines()) - 1


def test_corrupt_line_in_the_middle_names_file_and_line(path: Path) -> None:
    lines = _lines(path)
    lines[3] = b'{"schema_version": 1, "oops\n'
    path.write_bytes(b"".join(lines))
    with pytest.raises(TraceFormatError) as exc:
        Trace.load(path)
    assert exc.value.line == 4
    assert str(exc.value).startswith(f"{path}:4: ")


def test_invalid_event_in_the_middle_is_a_format_error(path: Path) -> None:
    lines = _lines(path)
    event = orjson.loads(lines[2])
    del event["step"]
    lines[2] = orjson.dumps(event) + b"\n"
    path.write_bytes(b"".join(lines))
    with pytest.raises(TraceFormatError, match=":3: invalid"):
        Trace.load(path)


def test_corrupt_complete_last_line_is_an_error_not_a_crash_artifact(path: Path) -> None:
    # A line that ends in a newline was written whole: it is corrupt, not half-written.
    lines = _lines(path)
    lines[-1] = b"garbage\n"
    path.write_bytes(b"".join(lines))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(TraceFormatError, match=f":{len(lines)}: "):
            Trace.load(path)


def test_newer_schema_is_refused_with_a_clear_message(path: Path) -> None:
    lines = _lines(path)
    event = orjson.loads(lines[1])
    event["schema_version"] = 99
    lines[1] = orjson.dumps(event) + b"\n"
    path.write_bytes(b"".join(lines))
    with pytest.raises(UnsupportedSchemaVersion) as exc:
        Trace.load(path)
    message = str(exc.value)
    assert "version 99" in message and "up to 2" in message and "Upgrade" in message


def test_missing_empty_and_directory(tmp_path: Path) -> None:
    with pytest.raises(TraceError, match="no such trace file"):
        Trace.load(tmp_path / "nope.jsonl")
    with pytest.raises(TraceError, match="is a directory"):
        Trace.load(tmp_path)
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    with pytest.raises(TraceError, match="empty trace"):
        Trace.load(empty)


def test_a_gap_in_seq_is_an_error(path: Path) -> None:
    lines = _lines(path)
    del lines[2]
    path.write_bytes(b"".join(lines))
    with pytest.raises(TraceFormatError, match="seq 3 out of order"):
        Trace.load(path)


def test_error_counts_do_not_count_one_failure_twice(tmp_path: Path, path: Path) -> None:
    # boom raised: one error tool result and one error event, for one failed step.
    trace = Trace.load(path)
    assert sum(1 for ev in trace.events if isinstance(ev, ToolResult) and ev.is_error) == 1
    assert trace.summary().errors == 1


def test_a_dropped_trace_is_freed_without_the_cyclic_collector() -> None:
    """A trace and its steps make no reference cycle: dropped, reference counting frees it
    (a cycle left a big trace's million objects to a full collection: seconds)."""
    import gc
    import weakref

    from files import SAMPLES, found

    gc.disable()
    try:
        for path in found(SAMPLES):
            trace = Trace.load(path)
            for step in trace.steps():
                _ = (step.request, step.response, step.title, step.complete, step.is_error)
            _ = (trace.summary(), list(trace.iter_requests()), trace.llm_calls())
            refs = [weakref.ref(trace), *map(weakref.ref, trace.steps())]
            del trace, step
            assert [r for r in refs if r() is not None] == [], path
    finally:
        gc.enable()
