"""Anthropic-shaped content → the GenAI conventions' message parts."""

from __future__ import annotations

import pytest

from regista.trace.otel_messages import (
    finish_reason,
    input_messages,
    output_messages,
    system_instructions,
    to_json,
)


def test_tool_results_get_a_tool_message_of_their_own() -> None:
    messages = [
        {"role": "user", "content": "hi"},
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "t1", "content": "ok"},
                {"type": "text", "text": "and also"},
            ],
        },
    ]
    assert input_messages(messages) == [
        {"role": "user", "parts": [{"type": "text", "content": "hi"}]},
        {
            "role": "tool",
            "parts": [{"type": "tool_call_response", "id": "t1", "response": "ok"}],
            "regista.message": {},  # a second user message in a row: it stays one on import
        },
        {"role": "user", "parts": [{"type": "text", "content": "and also"}]},
    ]


def test_block_kinds() -> None:
    content = [
        {"type": "thinking", "thinking": "hmm", "signature": "s"},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AA=="}},
        {"type": "image", "source": {"type": "url", "url": "https://x/y.png"}},
        {"type": "tool_result", "tool_use_id": "t", "content": [{"type": "text", "text": "a"}]},
        {"type": "server_tool_use", "id": "s1", "name": "web_search", "input": {}},
    ]
    (msg,) = output_messages(content, "pause_turn")
    assert msg["finish_reason"] == "pause_turn"
    assert msg["parts"] == [
        {"type": "reasoning", "content": "hmm", "signature": "s"},
        {"type": "blob", "modality": "image", "mime_type": "image/png", "content": "AA=="},
        {"type": "uri", "modality": "image", "uri": "https://x/y.png"},
        {"type": "tool_call_response", "id": "t", "response": "a", "regista.shape": "blocks"},
        {"type": "server_tool_use", "id": "s1", "name": "web_search", "input": {}},
    ]


@pytest.mark.parametrize(
    ("stop", "reason"),
    [
        ("end_turn", "stop"),
        ("stop_sequence", "stop"),
        ("max_tokens", "length"),
        ("tool_use", "tool_call"),
        ("refusal", "content_filter"),
        (None, "stop"),
    ],
)
def test_finish_reasons(stop: str | None, reason: str) -> None:
    assert finish_reason(stop) == reason


def test_system_instructions_and_json() -> None:
    assert system_instructions(None) is None
    assert system_instructions("") is None
    assert system_instructions("Be brief.") == [{"type": "text", "content": "Be brief."}]
    assert to_json({"b": "é", "a": [1]}) == '{"b":"é","a":[1]}'
