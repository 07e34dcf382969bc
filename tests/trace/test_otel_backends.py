"""The export as a backend reads it: Input/Output, span kinds, prices, stable ids, valid
JSON under a size cap, one finish-reason mapping, no content leak, the message schemas."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

import pytest
from otel_support import spans_of
from pydantic import BaseModel, ConfigDict, TypeAdapter, ValidationError

from regista.trace.otel_fit import fit_json
from regista.trace.reader import Trace

# -- the GenAI convention's message schemas, as models ------------------------------------
# Written from gen-ai-input-messages.json / gen-ai-output-messages.json /
# gen-ai-system-instructions.json of open-telemetry/semantic-conventions-genai.


class _Part(BaseModel):
    model_config = ConfigDict(extra="allow")
    type: str


class _Text(_Part):
    type: Literal["text"]
    content: str


class _ToolCall(_Part):
    type: Literal["tool_call"]
    id: str | None = None
    name: str


class _ToolResponse(_Part):
    type: Literal["tool_call_response"]
    id: str | None = None
    response: Any


class _Reasoning(_Part):
    type: Literal["reasoning"]
    content: str


class _Blob(_Part):
    type: Literal["blob"]
    modality: str
    content: str


class _Uri(_Part):
    type: Literal["uri"]
    modality: str
    uri: str


_KNOWN = {
    "text": _Text,
    "tool_call": _ToolCall,
    "tool_call_response": _ToolResponse,
    "reasoning": _Reasoning,
    "blob": _Blob,
    "uri": _Uri,
}


class _Message(BaseModel):
    model_config = ConfigDict(extra="allow")
    role: str
    parts: list[dict[str, Any]]


class _Output(_Message):
    finish_reason: str


def check_parts(parts: list[dict[str, Any]]) -> None:
    for part in parts:
        _KNOWN.get(str(part.get("type")), _Part).model_validate(part)


def check_messages(value: str, output: bool = False) -> list[dict[str, Any]]:
    messages = json.loads(value)
    adapter = TypeAdapter(list[_Output] if output else list[_Message])
    for message in adapter.validate_python(messages):
        assert message.role in ("system", "user", "assistant", "tool")
        check_parts(message.parts)
    return list(messages)


def test_the_checker_rejects_what_the_schema_rejects() -> None:
    with pytest.raises(ValidationError):
        check_messages('[{"role": "user", "parts": [{"type": "text"}]}]')
    with pytest.raises(ValidationError):
        check_messages('[{"role": "assistant", "parts": []}]', output=True)
    with pytest.raises(ValidationError):
        check_messages('[{"parts": []}]')


def test_content_follows_the_message_schemas(small_trace: Path) -> None:
    spans, _ = spans_of(small_trace, include_content=True)
    seen = 0
    for span in spans:
        a = span.attributes
        if "gen_ai.input.messages" in a:
            check_messages(str(a["gen_ai.input.messages"]))
            seen += 1
        if "gen_ai.output.messages" in a:
            out = check_messages(str(a["gen_ai.output.messages"]), output=True)
            # One mapping: the finish reason of the messages is the span's.
            if "gen_ai.response.finish_reasons" in a:
                assert list(a["gen_ai.response.finish_reasons"]) == [out[0]["finish_reason"]]
        if "gen_ai.system_instructions" in a:
            check_parts(json.loads(str(a["gen_ai.system_instructions"])))
    assert seen >= 3


def test_every_span_is_classified_and_shows_input_and_output(small_trace: Path) -> None:
    spans, _ = spans_of(small_trace, include_content=True)
    kinds = {s.name.split()[0]: s.attributes.get("openinference.span.kind") for s in spans}
    assert kinds == {
        "invoke_agent": "AGENT",
        "turn": "CHAIN",
        "chat": "LLM",
        "execute_tool": "TOOL",
    }
    session = next(s for s in spans if s.name.startswith("invoke_agent"))
    assert session.attributes["input.value"] == "Weather in Paris and Rome?"
    assert session.attributes["output.value"] == "Paris is sunny."
    assert session.attributes["session.id"] == session.attributes["gen_ai.conversation.id"]
    chats = [s for s in spans if s.name.startswith("chat")]
    for chat in chats:
        assert chat.attributes["input.mime_type"] == "application/json"
        assert chat.attributes["input.value"] == chat.attributes["gen_ai.input.messages"]
        assert "id" not in json.loads(str(chat.attributes["input.value"]))[0]
    assert chats[-1].attributes["output.value"] == "Paris is sunny."
    assert chats[-1].attributes["output.mime_type"] == "text/plain"


def test_scripted_answers_are_not_priced_as_the_model(small_trace: Path) -> None:
    spans, _ = spans_of(small_trace)
    for chat in (s for s in spans if s.name.startswith("chat")):
        assert chat.attributes["llm.model_name"] == "scripted"
        assert chat.attributes["llm.cost.total"] == 0.0
        assert chat.attributes["gen_ai.provider.name"] == "regista.scripted"


def test_re_export_gives_the_same_ids(small_trace: Path, tmp_path: Path) -> None:
    first, _ = spans_of(small_trace)
    again, _ = spans_of(small_trace)
    ids = [(s.name, s.context.trace_id, s.context.span_id) for s in first]
    assert ids == [(s.name, s.context.trace_id, s.context.span_id) for s in again]
    assert len({s.context.span_id for s in first}) == len(first)
    parents = {s.context.span_id for s in first}
    assert all(s.parent is None or s.parent.span_id in parents for s in first)
    from otel_support import small_agent

    other = small_agent(tmp_path / "b").run_sync("Weather in Paris and Rome?").trace_path
    assert spans_of(other)[0][0].context.trace_id != first[0].context.trace_id


def test_no_content_anywhere_without_include_content(small_trace: Path) -> None:
    """Not in attributes, not in exception events, not in span statuses. (A policy's
    denial reason is the policy's own words, and is kept.)"""
    trace = Trace.load(small_trace)
    secrets = ["Paris", "backend unavailable", "Sunny"]
    spans, _ = spans_of(trace)
    for span in spans:
        blob = json.dumps(
            {
                "attributes": dict(span.attributes),
                "events": [dict(e.attributes or {}) for e in span.events],
                "status": span.status.description,
            },
            default=list,
        )
        for secret in secrets:
            assert secret not in blob, (span.name, secret)


def test_fit_json_keeps_whole_messages_and_valid_json() -> None:
    messages = [
        {"role": "user", "parts": [{"type": "text", "content": "a" * 500}]},
        {
            "role": "assistant",
            "parts": [
                {"type": "text", "content": "b" * 50},
                {"type": "tool_call", "name": "f", "arguments": {}},
            ],
        },
        {
            "role": "tool",
            "parts": [{"type": "tool_call_response", "id": "1", "response": "c" * 80}],
        },
    ]
    for limit in (2000, 300, 120, 60, 10):
        out = fit_json(messages, limit)
        parsed = check_messages(out)
        assert parsed[-1]["role"] == "tool"  # the newest message is the one kept
        if limit >= 120:
            assert len(out) <= limit
    assert fit_json({"k": "v" * 100}, 30).startswith('{"k":"v')
    assert len(fit_json({"k": "v" * 100}, 30)) <= 30
