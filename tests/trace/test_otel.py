"""OpenTelemetry export: the span tree, recorded timestamps, GenAI attributes, statuses,
content gating, replay equivalence, and a real OTLP/HTTP round trip to 127.0.0.1."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from builders import answer, rich_agent, tool_use
from fakes.otlp_receiver import OtlpReceiver
from fresh import fresh_python
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.trace import SpanKind, StatusCode
from otel_support import small_agent, spans_of

from regista import replay
from regista.errors import UserError
from regista.trace.events import (
    LlmRequestEvent,
    LlmResponseEvent,
    SessionEnd,
    SessionStart,
    ToolCall,
    ToolResult,
)
from regista.trace.otel import RUN_SPECIFIC_ATTRIBUTES, export_trace
from regista.trace.otel_spans import ts_ns
from regista.trace.reader import Trace

CONTENT_KEYS = {
    "gen_ai.input.messages",
    "gen_ai.output.messages",
    "gen_ai.system_instructions",
    "gen_ai.tool.definitions",
    "gen_ai.tool.call.arguments",
    "gen_ai.tool.call.result",
}


def by_name(spans: list[ReadableSpan], name: str) -> list[ReadableSpan]:
    return [s for s in spans if s.name == name]


def one(spans: list[ReadableSpan], name: str) -> ReadableSpan:
    found = by_name(spans, name)
    assert len(found) == 1, [s.name for s in spans]
    return found[0]


def tool_span(spans: list[ReadableSpan], call_id: str) -> ReadableSpan:
    (span,) = [s for s in spans if s.attributes.get("gen_ai.tool.call.id") == call_id]
    return span


# -- the tree -----------------------------------------------------------------------------


def test_tree_session_turns_and_steps(small_trace: Path) -> None:
    spans, _ = spans_of(small_trace)
    ids = {s.context.span_id: s for s in spans}
    root = one(spans, "invoke_agent weather-bot")
    assert root.parent is None
    assert root.kind is SpanKind.INTERNAL
    turns = [s for s in spans if s.name.startswith("turn ")]
    assert [t.name for t in turns] == ["turn 0"]  # one task: one turn of the person's
    assert all(t.parent is not None and t.parent.span_id == root.context.span_id for t in turns)

    def parent_name(s: ReadableSpan) -> str:
        assert s.parent is not None
        return ids[s.parent.span_id].name

    chats = by_name(spans, "chat claude-sonnet-4-6")
    assert [parent_name(c) for c in chats] == ["turn 0", "turn 0"]
    assert all(c.kind is SpanKind.CLIENT for c in chats)
    tools = [s for s in spans if s.name.startswith("execute_tool ")]
    assert sorted(s.name for s in tools) == [
        "execute_tool flaky",
        "execute_tool get_weather",
        "execute_tool get_weather",
    ]
    assert {parent_name(t) for t in tools} == {"turn 0"}
    assert all(t.kind is SpanKind.INTERNAL for t in tools)
    assert len({s.context.trace_id for s in spans}) == 1


def test_spans_carry_the_recorded_timestamps(small_trace: Path) -> None:
    trace = Trace.load(small_trace)
    spans, _ = spans_of(trace)

    def ns(cls: type, **match: Any) -> int:
        (ev,) = [
            e
            for e in trace.events
            if isinstance(e, cls) and all(getattr(e, k) == v for k, v in match.items())
        ]
        return ts_ns(ev, trace)

    root = one(spans, "invoke_agent weather-bot")
    assert (root.start_time, root.end_time) == (ns(SessionStart), ns(SessionEnd))
    chat0 = next(s for s in spans if s.attributes.get("regista.step") == 0)
    assert (chat0.start_time, chat0.end_time) == (
        ns(LlmRequestEvent, step=0),
        ns(LlmResponseEvent, step=0),
    )
    # A tool span ends at its result and lasts what the result recorded (the tool's run,
    # not the writing of the calls and decisions before it): docs/readers.md.
    ok = tool_span(spans, "toolu_ok")
    result = next(
        e for e in trace.events if isinstance(e, ToolResult) and e.tool_use_id == "toolu_ok"
    )
    assert result.duration_ms > 0
    assert (ok.start_time, ok.end_time) == (
        ns(ToolResult, tool_use_id="toolu_ok") - round(result.duration_ms * 1e6),
        ns(ToolResult, tool_use_id="toolu_ok"),
    )
    assert ok.start_time >= ns(ToolCall, tool_use_id="toolu_ok")
    turn0 = one(spans, "turn 0")
    assert turn0.start_time == chat0.start_time
    assert turn0.end_time == max(
        s.end_time for s in spans if s.attributes.get("regista.turn") == 0 and s is not turn0
    )
    # FakeClock: 2026-01-01T00:00:00 + 250 ms per event
    assert root.start_time == 1767225600250000000


# -- attributes ---------------------------------------------------------------------------


def test_chat_span_genai_attributes(small_trace: Path) -> None:
    spans, _ = spans_of(small_trace)
    trace = Trace.load(small_trace)
    chat0 = next(s for s in spans if s.attributes.get("regista.step") == 0)
    a = dict(chat0.attributes)
    assert a["gen_ai.operation.name"] == "chat"
    assert a["gen_ai.provider.name"] == "regista.scripted"
    assert a["gen_ai.request.model"] == "claude-sonnet-4-6"
    assert a["gen_ai.request.max_tokens"] == 4096
    assert a["gen_ai.request.temperature"] == 0.3
    assert a["gen_ai.request.stop_sequences"] == ("END",)
    assert a["gen_ai.response.model"] == "scripted"
    assert a["gen_ai.response.id"] == trace.steps()[0].response.id  # type: ignore[union-attr]
    assert a["gen_ai.response.finish_reasons"] == ("tool_call",)
    # Anthropic's input_tokens exclude the cache; the convention's include it.
    assert a["gen_ai.usage.input_tokens"] == 12 + 5 + 3
    assert a["gen_ai.usage.output_tokens"] == 9
    assert a["gen_ai.usage.cache_read.input_tokens"] == 5
    assert a["gen_ai.usage.cache_creation.input_tokens"] == 3
    assert a["gen_ai.conversation.id"] == trace.session_id
    assert a["regista.step"] == 0
    assert a["regista.turn"] == 0
    assert a["regista.source"] == "live"
    assert a["regista.cost_usd"] == 0.0
    assert a["regista.request_hash"] == trace.request_hashes()[0]
    assert chat0.status.status_code is StatusCode.UNSET


def test_session_span_attributes(small_trace: Path) -> None:
    spans, extra = spans_of(small_trace)
    root = one(spans, "invoke_agent weather-bot")
    a = dict(root.attributes)
    assert a["gen_ai.operation.name"] == "invoke_agent"
    assert a["gen_ai.agent.name"] == "weather-bot"
    assert a["gen_ai.provider.name"] == "regista.scripted"
    assert a["gen_ai.conversation.id"] == extra["summary"].session_id
    assert a["gen_ai.usage.input_tokens"] == 20 + 10  # both model calls
    assert a["regista.stop_reason"] == "end_turn"
    assert (a["regista.turns"], a["regista.steps"], a["regista.tool_calls"]) == (1, 5, 3)
    assert a["regista.complete"] is True
    assert "regista.replay_of" not in a
    assert root.status.status_code is StatusCode.UNSET
    assert extra["summary"].trace_id == f"{root.context.trace_id:032x}"


def test_tool_span_attributes(small_trace: Path) -> None:
    spans, _ = spans_of(small_trace)
    ok = tool_span(spans, "toolu_ok")
    a = dict(ok.attributes)
    assert a["gen_ai.operation.name"] == "execute_tool"
    assert a["gen_ai.tool.name"] == "get_weather"
    assert a["gen_ai.tool.type"] == "function"
    assert a["gen_ai.tool.description"] == "Current weather for a city."
    assert a["regista.step"] == 1
    assert a["regista.permission.denied"] is False
    assert a["regista.permission.by"] == "policy"
    assert ok.status.status_code is StatusCode.UNSET


def test_raising_tool_and_denial_set_error_status(small_trace: Path) -> None:
    spans, _ = spans_of(small_trace)
    boom = tool_span(spans, "toolu_boom")
    assert boom.status.status_code is StatusCode.ERROR
    assert boom.status.description == "tool flaky returned an error"
    assert boom.attributes["error.type"] == "tool_error"
    (event,) = boom.events
    assert event.name == "exception"
    assert event.attributes is not None
    assert event.attributes["exception.type"] == "RuntimeError"
    # Without content, an error's message (which may quote tool data) is left out.
    assert "backend unavailable" not in str(event.attributes["exception.message"])

    denied = tool_span(spans, "toolu_no")
    assert denied.status.status_code is StatusCode.ERROR
    assert denied.status.description == "permission denied: Rome is out of scope"
    assert denied.attributes["regista.permission.denied"] is True
    assert denied.attributes["regista.permission.reason"] == "Rome is out of scope"
    assert denied.attributes["error.type"] == "permission_denied"
    # errors inside a session do not fail the session
    assert one(spans, "invoke_agent weather-bot").status.status_code is StatusCode.UNSET


def test_provider_error_fails_the_model_span_and_the_session(tmp_path: Path) -> None:
    agent = small_agent(tmp_path, [answer(tool_use("toolu_ok", "get_weather", city="Paris"))])
    with pytest.raises(Exception, match="script has 1 responses"):
        agent.run_sync("Weather?")
    (path,) = tmp_path.glob("*.jsonl")
    spans, _ = spans_of(path)
    failed = next(s for s in spans if s.attributes.get("regista.step") == 2)
    assert failed.name == "chat claude-sonnet-4-6"
    assert failed.status.status_code is StatusCode.ERROR
    assert failed.status.description.startswith("ProviderError")  # type: ignore[union-attr]
    assert failed.attributes["error.type"] == "ProviderError"
    assert "gen_ai.response.id" not in failed.attributes
    root = one(spans, "invoke_agent weather-bot")
    assert root.status.status_code is StatusCode.ERROR
    assert root.attributes["error.type"] == "ProviderError"
    assert root.attributes["regista.stop_reason"] == "error"


def test_unfinished_session_is_an_error(small_trace: Path, tmp_path: Path) -> None:
    lines = small_trace.read_bytes().splitlines(keepends=True)
    cut = tmp_path / "cut.jsonl"
    cut.write_bytes(b"".join(lines[:-2]))  # crashed waiting for the last model answer
    spans, _ = spans_of(cut)
    root = next(s for s in spans if s.name.startswith("invoke_agent"))
    assert root.status.status_code is StatusCode.ERROR
    assert "did not finish" in str(root.status.description)
    assert root.attributes["regista.complete"] is False
    last = next(s for s in spans if s.attributes.get("regista.step") == 4)
    assert last.status.status_code is StatusCode.ERROR
    assert last.attributes["error.type"] == "incomplete"


def test_compaction_is_a_chat_span(tmp_path: Path) -> None:
    path = rich_agent(tmp_path).run_sync("Weather?").trace_path
    spans, _ = spans_of(path)
    (compaction,) = [s for s in spans if s.attributes.get("regista.step.kind") == "compaction"]
    assert compaction.name == "chat claude-sonnet-4-6"
    assert compaction.attributes["gen_ai.operation.name"] == "chat"
    assert compaction.attributes["regista.compaction.tokens_before"] > 200
    # a compaction is one event, written when it ends: its start is end - duration_ms
    trace = Trace.load(path)
    (step,) = [st for st in trace.steps() if st.kind == "compaction"]
    assert step.compaction is not None
    assert compaction.end_time == ts_ns(step.compaction, trace)
    assert compaction.start_time == compaction.end_time - int(step.compaction.duration_ms * 1e6)


# -- content ------------------------------------------------------------------------------


def test_no_content_by_default(small_trace: Path) -> None:
    spans, _ = spans_of(small_trace)
    for span in spans:
        assert not CONTENT_KEYS & set(span.attributes), span.name
        assert "Paris" not in json.dumps(dict(span.attributes)), span.name


def test_content_with_include_content(small_trace: Path) -> None:
    spans, _ = spans_of(small_trace, include_content=True)
    chat1 = next(s for s in spans if s.attributes.get("regista.step") == 4)
    inputs = json.loads(str(chat1.attributes["gen_ai.input.messages"]))
    assert [m["role"] for m in inputs] == ["user", "assistant", "tool"]
    assert inputs[0]["parts"] == [{"type": "text", "content": "Weather in Paris and Rome?"}]
    call = inputs[1]["parts"][1]
    assert call == {
        "type": "tool_call",
        "id": "toolu_ok",
        "name": "get_weather",
        "arguments": {"city": "Paris"},
    }
    responses = {p["id"]: p for p in inputs[2]["parts"]}
    assert responses["toolu_ok"]["type"] == "tool_call_response"
    assert responses["toolu_ok"]["response"].startswith("Sunny in Paris")
    assert responses["toolu_no"]["is_error"] is True
    outputs = json.loads(str(chat1.attributes["gen_ai.output.messages"]))
    assert outputs == [
        {
            "role": "assistant",
            "parts": [{"type": "text", "content": "Paris is sunny."}],
            "finish_reason": "stop",
        }
    ]
    system = json.loads(str(chat1.attributes["gen_ai.system_instructions"]))
    assert system == [{"type": "text", "content": "You are a weather bot."}]
    definitions = json.loads(str(chat1.attributes["gen_ai.tool.definitions"]))
    assert [d["name"] for d in definitions] == ["get_weather", "get_forecast", "flaky"]

    ok = tool_span(spans, "toolu_ok")
    assert json.loads(str(ok.attributes["gen_ai.tool.call.arguments"])) == {"city": "Paris"}
    assert json.loads(str(ok.attributes["gen_ai.tool.call.result"])).startswith("Sunny")
    boom = tool_span(spans, "toolu_boom")
    assert "backend unavailable" in str(boom.attributes["gen_ai.tool.call.result"])
    assert "backend unavailable" in str(boom.status.description)


# -- a replay exports the same tree --------------------------------------------------------


def shape(spans: list[ReadableSpan]) -> list[tuple[Any, ...]]:
    """Everything but ids, timestamps and the run-specific attributes, in tree order."""
    ids = {s.context.span_id: s for s in spans}

    def path(s: ReadableSpan) -> tuple[str, ...]:
        out = [s.name]
        while s.parent is not None:
            s = ids[s.parent.span_id]
            out.append(s.name)
        return tuple(reversed(out))

    return [
        (
            path(s),
            s.kind,
            {k: v for k, v in s.attributes.items() if k not in RUN_SPECIFIC_ATTRIBUTES},
            s.status.status_code,
            s.status.description,
        )
        for s in spans
    ]


@pytest.mark.parametrize("include_content", [False, True])
async def test_replay_exports_the_same_tree_and_attributes(
    tmp_path: Path, include_content: bool
) -> None:
    original = rich_agent(tmp_path / "orig").run_sync("Weather in Paris and Rome?").trace_path
    replayed = (await replay(original, trace_dir=tmp_path / "replays")).trace_path
    a, _ = spans_of(original, include_content)
    b, _ = spans_of(replayed, include_content)
    assert shape(a) == shape(b)
    # what may differ does, and only as documented
    root_b = next(s for s in b if s.name.startswith("invoke_agent"))
    assert root_b.attributes["regista.replay_of"] == Trace.load(original).session_id
    steps_b = [s for s in b if "regista.step" in s.attributes]
    assert {s.attributes["regista.source"] for s in steps_b} == {"recorded"}
    assert {s.attributes.get("regista.permission.by") for s in steps_b} <= {None, "recorded"}


# -- packaging ----------------------------------------------------------------------------


def test_import_regista_does_not_import_opentelemetry() -> None:
    code = (
        "import sys, regista, regista.trace.otel, regista.cli.cmd_export\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'opentelemetry'))"
    )
    out = fresh_python(code)
    assert out.strip() == "[]"


def test_missing_extra_is_a_user_error(small_trace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "opentelemetry.sdk.trace", None)
    with pytest.raises(UserError, match=r"pip install 'regista-harness\[otel\]'"):
        export_trace(small_trace)


# -- over the wire ------------------------------------------------------------------------


def test_otlp_http_round_trip(small_trace: Path) -> None:
    trace = Trace.load(small_trace)
    with OtlpReceiver() as receiver:
        provider = TracerProvider(resource=Resource.create({"service.name": "weather-tests"}))
        provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=receiver.url)))
        summary = export_trace(trace, provider)
        provider.shutdown()
    got = receiver.spans
    assert receiver.content_types == ["application/x-protobuf"] * receiver.requests
    assert len(got) == summary.spans == 7
    assert {s.trace_id for s in got} == {summary.trace_id}
    ids = {s.span_id: s for s in got}
    root = next(s for s in got if s.name == "invoke_agent weather-bot")
    assert root.parent_span_id == ""
    assert root.resource["service.name"] == "weather-tests"
    assert root.scope == "regista"
    chat0 = next(s for s in got if s.attributes.get("regista.step") == 0)
    assert ids[chat0.parent_span_id].name == "turn 0"
    assert ids[ids[chat0.parent_span_id].parent_span_id] is root
    assert chat0.kind == 3  # SPAN_KIND_CLIENT
    assert chat0.start_ns == ts_ns(trace.steps()[0].request_event, trace)
    assert chat0.attributes["gen_ai.usage.input_tokens"] == 20
    assert chat0.attributes["gen_ai.response.finish_reasons"] == ["tool_call"]
    assert chat0.attributes["gen_ai.request.temperature"] == 0.3
    denied = next(s for s in got if s.attributes.get("gen_ai.tool.call.id") == "toolu_no")
    assert denied.status_code == 2  # STATUS_CODE_ERROR
    assert denied.status_message == "permission denied: Rome is out of scope"
    assert denied.attributes["regista.permission.denied"] is True
    boom = next(s for s in got if s.attributes.get("gen_ai.tool.call.id") == "toolu_boom")
    assert boom.events[0][0] == "exception"
    assert boom.events[0][1]["exception.type"] == "RuntimeError"
