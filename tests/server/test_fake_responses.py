"""The fake Responses API speaks the API as the real ``openai`` SDK reads it (JSON and SSE)."""

from __future__ import annotations

import json
from collections.abc import Iterator

import openai
import pytest
from fakes.anthropic_server import FakeError
from fakes.responses_server import FakeResponsesServer, responses_sse
from openai.types.responses import ResponseStreamEvent
from pydantic import TypeAdapter

CALL = {"id": "call_1", "name": "get_weather", "arguments": '{"city": "Paris"}'}


@pytest.fixture(scope="module")
def server() -> Iterator[FakeResponsesServer]:
    with FakeResponsesServer() as s:
        yield s


def test_json_text_and_function_call(server: FakeResponsesServer) -> None:
    server.script({"text": "Hello there", "tool_calls": [CALL]})
    client = openai.OpenAI(api_key="k", base_url=server.url, max_retries=0)
    r = client.responses.create(model="gpt-x", input="hi", instructions="be brief")
    assert r.output_text == "Hello there"
    call = r.output[1]
    assert call.type == "function_call" and call.call_id == "call_1"
    assert call.arguments == '{"city": "Paris"}'
    assert r.usage is not None and r.usage.input_tokens_details.cached_tokens == 0
    assert server.bodies[-1]["instructions"] == "be brief"
    assert server.requests[-1].headers["authorization"] == "Bearer k"


def test_stream_events_parse_as_the_sdk_types(server: FakeResponsesServer) -> None:
    server.script({"reasoning": "think first", "text": "Streaming text", "tool_calls": [CALL]})
    client = openai.OpenAI(api_key="k", base_url=server.url, max_retries=0)
    with client.responses.stream(model="gpt-x", input="hi") as stream:
        kinds = [e.type for e in stream]
        final = stream.get_final_response()
    assert final.output_text == "Streaming text"
    assert [o.type for o in final.output] == ["reasoning", "message", "function_call"]
    assert kinds[:2] == ["response.created", "response.in_progress"]
    assert kinds[-1] == "response.completed"
    for kind in (
        "response.reasoning_summary_text.delta",
        "response.content_part.added",
        "response.output_text.done",
        "response.function_call_arguments.done",
        "response.output_item.done",
    ):
        assert kind in kinds


def test_every_event_validates_and_is_numbered() -> None:
    server = FakeResponsesServer()
    body = {"model": "gpt-x", "input": "hi"}
    answer = {
        "reasoning": "r",
        "text": "t",
        "tool_calls": [CALL],
        "output": [
            {"type": "custom_tool_call", "call_id": "c2", "name": "apply_patch", "input": "x"},
            {"type": "web_search_call", "action": {"type": "search", "query": "q"}},
        ],
    }
    response = server.response(answer, body)
    events = list(responses_sse(response, 2))
    adapter: TypeAdapter[ResponseStreamEvent] = TypeAdapter(ResponseStreamEvent)
    for e in events:
        adapter.validate_python(e)
    assert [e["sequence_number"] for e in events] == list(range(len(events)))


def test_errors_in_openai_shape_and_script_exhausted(server: FakeResponsesServer) -> None:
    server.script(FakeError(429, message="slow down"))
    client = openai.OpenAI(api_key="k", base_url=server.url, max_retries=0)
    with pytest.raises(openai.RateLimitError, match="slow down"):
        client.responses.create(model="gpt-x", input="hi")
    with pytest.raises(openai.InternalServerError, match="script has 1 answers"):
        client.responses.create(model="gpt-x", input="hi")
    assert json.dumps(server.bodies[-1]) == '{"model": "gpt-x", "input": "hi"}'
