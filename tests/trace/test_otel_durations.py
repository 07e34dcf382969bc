"""A span lasts as long as its step is recorded to have taken, also where the step's events
share one time: a proxy writes a call's request and response together, when the answer
has come."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from regista.trace.otel import export_trace
from regista.trace.reader import Trace
from regista.trace.recorder import TraceRecorder
from regista.types import LlmRequest, LlmResponse
from regista.wire.sessions import SessionBook
from regista.wire.shapes import anthropic_request

TOOLS = [
    {
        "name": "Bash",
        "description": "Run a command.",
        "input_schema": {"type": "object", "properties": {"command": {"type": "string"}}},
    }
]


def _spans(path: Path) -> list[ReadableSpan]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    export_trace(path, provider)
    return list(exporter.get_finished_spans())


def _ms(span: ReadableSpan) -> float:
    assert span.start_time is not None and span.end_time is not None
    return (span.end_time - span.start_time) / 1e6


def _call(messages: list[dict[str, Any]]) -> LlmRequest:
    return anthropic_request({"model": "m", "max_tokens": 9, "messages": messages, "tools": TOOLS})


def test_a_proxy_recorded_calls_span_lasts_its_recorded_duration(tmp_path: Path) -> None:
    use = {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "ls"}}
    asks = LlmResponse.model_validate({"content": [use], "stop_reason": "tool_use"})
    done = LlmResponse.model_validate(
        {"content": [{"type": "text", "text": "done"}], "stop_reason": "end_turn"}
    )
    first = [{"role": "user", "content": "list the files"}]
    book = SessionBook(tmp_path)
    book.record("anthropic", _call(first), asks, duration_ms=1234.0)
    result = {"type": "tool_result", "tool_use_id": "toolu_1", "content": "a.txt"}
    then = [*first, {"role": "assistant", "content": [use]}, {"role": "user", "content": [result]}]
    book.record("anthropic", _call(then), done, duration_ms=2500.0)
    book.close()
    (path,) = tmp_path.glob("*.jsonl")
    trace = Trace.load(path)
    recorded = {
        s.index: s.response_event.duration_ms
        for s in trace.steps()
        if s.kind == "model" and s.response_event is not None
    }
    assert sorted(recorded.values()) == [1234.0, 2500.0]
    chats = {
        s.attributes["regista.step"]: _ms(s) for s in _spans(path) if s.name.startswith("chat")
    }
    assert chats == recorded


def test_a_tool_span_whose_events_share_a_time_lasts_the_results_duration(
    tmp_path: Path,
) -> None:
    rec = TraceRecorder.create(
        tmp_path / "t.jsonl", "s-1", clock=lambda: "2026-03-02T09:15:00.000Z"
    )
    rec.start(task="list", model="m", provider="anthropic")
    step = rec.request(_call([{"role": "user", "content": "list"}]))
    use = {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "ls"}}
    rec.response(step, LlmResponse.model_validate({"content": [use]}), provider="anthropic",
                 duration_ms=300.0)  # fmt: skip
    rec.tool_step("toolu_1", "Bash", {"command": "ls"}, "a.txt", duration_ms=750.0)
    rec.end("end_turn")
    spans = _spans(tmp_path / "t.jsonl")
    (tool,) = [s for s in spans if s.name == "execute_tool Bash"]
    (chat,) = [s for s in spans if s.name.startswith("chat")]
    assert (_ms(chat), _ms(tool)) == (300.0, 750.0)


def test_a_proxy_recorded_tool_step_lasts_from_the_answer_to_the_next_call(
    tmp_path: Path,
) -> None:
    """The proxy wrote its tool steps with no duration, though it knows when the answer that
    asked for them came back and when the call that brought their results began: ``show``,
    the TUI and share said 0 ms, and the span lasted as long as writing three events."""
    use = {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "ls"}}
    asks = LlmResponse.model_validate({"content": [use], "stop_reason": "tool_use"})
    done = LlmResponse.model_validate(
        {"content": [{"type": "text", "text": "done"}], "stop_reason": "end_turn"}
    )
    now = [100.0]
    book = SessionBook(tmp_path, clock=lambda: now[0])
    first = [{"role": "user", "content": "list the files"}]
    book.record("anthropic", _call(first), asks, duration_ms=1234.0)
    now[0] = 103.5  # the next answer is back 3.5 s later, its call took 0.5 s: the tool 3 s
    result = {"type": "tool_result", "tool_use_id": "toolu_1", "content": "a.txt"}
    then = [*first, {"role": "assistant", "content": [use]}, {"role": "user", "content": [result]}]
    book.record("anthropic", _call(then), done, duration_ms=500.0)
    book.close()
    (path,) = tmp_path.glob("*.jsonl")
    (tool_step,) = [s for s in Trace.load(path).steps() if s.kind == "tool"]
    assert tool_step.result is not None and tool_step.result.duration_ms == 3000.0
    (tool,) = [s for s in _spans(path) if s.name == "execute_tool Bash"]
    assert _ms(tool) == 3000.0


def test_the_session_span_lasts_the_run_s_recorded_duration(tmp_path: Path) -> None:
    """The session's span ran from its first event to its last, shorter than the duration
    its end records when the run's clock started before it wrote ``session.start`` (the
    loop's does): ``show`` said 36 ms, the export 24 ms."""
    rec = TraceRecorder.create(
        tmp_path / "t.jsonl", "s-1", clock=lambda: "2026-03-02T09:15:00.000Z"
    )
    rec.start(task="list", model="m", provider="anthropic")
    step = rec.request(_call([{"role": "user", "content": "list"}]))
    done = {"content": [{"type": "text", "text": "a.txt"}], "stop_reason": "end_turn"}
    rec.response(step, LlmResponse.model_validate(done), provider="anthropic", duration_ms=300.0)
    rec.end("end_turn", duration_ms=1200.0)
    (session,) = [s for s in _spans(tmp_path / "t.jsonl") if s.parent is None]
    assert _ms(session) == 1200.0
