"""The streaming grammars: what the SDKs reassemble equals the recorded message, thinking
and several tool calls included."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anthropic
import openai
from sdk_agents import new_replay, regista_server

from regista.types import LlmRequest, LlmResponse
from regista.wire.accumulate import AnthropicStream, OpenAIStream
from regista.wire.sessions import SessionBook
from regista.wire.shapes import openai_body, openai_response
from regista.wire.sse import anthropic_events, openai_chunks

# fmt: off
MESSAGE: dict[str, Any] = {
    "id": "msg_01",
    "type": "message",
    "role": "assistant",
    "model": "claude-sonnet-4-6",
    "content": [
        {"type": "thinking", "thinking": "The user wants weather. " * 5, "signature": "sig=="},
        {"type": "text", "text": "Let me check Paris and Rome — ☀️ both at once."},
        {"type": "tool_use", "id": "toolu_a", "name": "get_weather", "input": {"city": "Paris"}},
        {
            "type": "tool_use",
            "id": "toolu_b",
            "name": "get_weather",
            "input": {"city": "Rome", "units": {"deg": "C", "list": [1, 2.5, None]}},
        },
    ],
    "stop_reason": "tool_use",
    "stop_sequence": None,
    "usage": {
        "input_tokens": 321,
        "output_tokens": 54,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 7,
    },
}
COMPLETION: dict[str, Any] = {
    "id": "chatcmpl-xyz",
    "object": "chat.completion",
    "created": 1_700_000_123,
    "model": "gpt-4o-2024-08-06",
    "system_fingerprint": "fp_1",
    "choices": [
        {
            "index": 0,
            "message": {
                "role": "assistant",
                "content": "Checking two cities.",
                "refusal": None,
                "tool_calls": [
                    {
                        "id": "call_a",
                        "type": "function",
                        "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
                    },
                    {
                        "id": "call_b",
                        "type": "function",
                        "function": {"name": "get_weather", "arguments": '{ "city":"Rome" }'},
                    },
                ],
            },
            "finish_reason": "tool_calls",
            "logprobs": None,
        }
    ],
    "usage": {"prompt_tokens": 40, "completion_tokens": 12, "total_tokens": 52},
}

# fmt: on


def test_anthropic_events_add_up_to_the_message() -> None:
    acc = AnthropicStream()
    for event in anthropic_events(MESSAGE):
        acc.feed(event)
    assert acc.result() == MESSAGE


def test_openai_chunks_add_up_to_the_completion() -> None:
    acc = OpenAIStream()
    for chunk in openai_chunks(COMPLETION, include_usage=True):
        acc.feed(chunk)
    assert acc.result() == COMPLETION
    kept = openai_response(COMPLETION)
    assert openai_body(kept, "gpt-4o") == COMPLETION


def _store(tmp_path: Path, provider: str, response: LlmResponse) -> str:
    book = SessionBook(tmp_path)
    request = LlmRequest(
        model="m", system="sys", messages=[{"role": "user", "content": "Weather?"}]
    )
    book.record(provider, request, response)
    book.close()
    (path,) = tmp_path.glob("*.jsonl")
    return path.stem


def test_the_anthropic_sdk_reassembles_thinking_text_and_tools(tmp_path: Path) -> None:
    run = _store(tmp_path, "anthropic", LlmResponse.model_validate(MESSAGE))
    with regista_server(tmp_path) as server:
        rp = new_replay(server, run)
        client = anthropic.Anthropic(api_key="k", base_url=rp["anthropic_base_url"])
        with client.messages.stream(
            model="m",
            max_tokens=9,
            system="sys",
            messages=[{"role": "user", "content": "Weather?"}],
        ) as stream:
            final = stream.get_final_message()
    got = final.model_dump(exclude_none=True)
    assert got["content"] == MESSAGE["content"]
    assert got["usage"] == MESSAGE["usage"]
    assert (final.id, final.stop_reason) == ("msg_01", "tool_use")


def test_the_openai_sdk_streams_tool_calls_and_usage(tmp_path: Path) -> None:
    run = _store(tmp_path, "openai", openai_response(COMPLETION))
    with regista_server(tmp_path) as server:
        rp = new_replay(server, run)
        client = openai.OpenAI(api_key="k", base_url=rp["openai_base_url"])
        chunks = list(
            client.chat.completions.create(
                model="m",
                messages=[
                    {"role": "system", "content": "sys"},
                    {"role": "user", "content": "Weather?"},
                ],
                stream=True,
                stream_options={"include_usage": True},
            )
        )
    assert chunks[-1].usage is not None and chunks[-1].usage.total_tokens == 52
    args: dict[int, str] = {}
    ids: dict[int, str] = {}
    text = ""
    finish = None
    for c in chunks:
        assert c.id == "chatcmpl-xyz" and c.model == "gpt-4o-2024-08-06"
        for choice in c.choices:
            text += choice.delta.content or ""
            finish = choice.finish_reason or finish
            for tc in choice.delta.tool_calls or []:
                if tc.id:
                    ids[tc.index] = tc.id
                if tc.function and tc.function.arguments:
                    args[tc.index] = args.get(tc.index, "") + tc.function.arguments
    assert text == "Checking two cities." and finish == "tool_calls"
    assert ids == {0: "call_a", 1: "call_b"}
    assert args == {0: '{"city": "Paris"}', 1: '{ "city":"Rome" }'}
