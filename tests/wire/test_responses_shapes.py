"""The Responses API's normaliser: what each input item, tool, tool_choice and answer
becomes in the trace's Messages shape, and the body served back."""

from __future__ import annotations

import pytest

from regista.trace.validate import check_messages, check_response
from regista.wire.errors import HttpError
from regista.wire.openai_responses import (
    responses_body,
    responses_events,
    responses_request,
    responses_response,
    tool_choice_of,
)

CODEX_LIKE = {
    "model": "gpt-5.5",
    "instructions": "Be kind.",
    "input": [
        {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "D"}]},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "fix it"}]},
        {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "hm"}],
         "encrypted_content": "gAAA"},
        {"type": "function_call", "id": "fc_1", "call_id": "c1", "name": "exec_command",
         "arguments": '{"cmd": "ls"}'},
        {"type": "function_call_output", "call_id": "c1", "output": "a.txt"},
        {"type": "custom_tool_call", "call_id": "c2", "name": "apply_patch", "input": "*** P"},
        {"type": "custom_tool_call_output", "call_id": "c2", "output": "Done"},
        {"type": "web_search_call", "id": "ws_1", "action": {"type": "search", "query": "q"}},
        {"type": "message", "role": "assistant",
         "content": [{"type": "output_text", "text": "ok"}]},
    ],
    "tools": [
        {"type": "function", "name": "exec_command", "parameters": {"type": "object"}},
        {"type": "custom", "name": "apply_patch", "format": {"type": "grammar"}},
        {"type": "web_search"},
    ],
    "tool_choice": "auto",
    "store": False,
    "include": ["reasoning.encrypted_content"],
    "stream": True,
}  # fmt: skip


def test_items_become_messages_with_tool_steps_and_kept_items() -> None:
    r = responses_request(CODEX_LIKE)
    check_messages(r.messages)
    assert r.system == "Be kind.\n\nD"
    assert [m["role"] for m in r.messages] == ["user", "assistant", "user", "assistant", "user",
                                               "assistant"]  # fmt: skip
    thinking, call = r.messages[1]["content"]
    assert thinking["type"] == "thinking" and thinking["thinking"] == "hm"
    assert thinking["openai_item"]["encrypted_content"] == "gAAA"
    assert call == {"type": "tool_use", "id": "c1", "name": "exec_command",
                    "input": {"cmd": "ls"}}  # fmt: skip
    assert r.messages[2]["content"] == [
        {"type": "tool_result", "tool_use_id": "c1", "content": "a.txt"}
    ]
    patch = r.messages[3]["content"][0]
    assert (patch["name"], patch["input"]) == ("apply_patch", {"input": "*** P"})
    assert r.messages[4]["content"][0]["tool_use_id"] == "c2"
    kinds = [b["type"] for b in r.messages[5]["content"]]
    assert kinds == ["openai_item", "text"]
    assert [t["name"] for t in r.tools] == ["exec_command", "apply_patch", "web_search"]
    assert r.tools[2]["openai"] == {"type": "web_search"}
    assert "openai" not in r.tools[0]  # a plain function tool is held whole
    assert r.params["store"] is False and "stream" not in r.params
    assert r.tool_choice == {"type": "auto", "openai": "auto"}


@pytest.mark.parametrize(
    ("choice", "want"),
    [
        ("required", {"type": "any", "openai": "required"}),
        ("none", {"type": "none", "openai": "none"}),
        ({"type": "function", "name": "f"}, {"type": "tool", "name": "f"}),
        ({"type": "allowed_tools", "mode": "auto", "tools": []}, {"type": "openai_tool_choice"}),
        ({"type": "web_search_preview"}, {"type": "openai_tool_choice"}),
    ],
)
def test_tool_choice_keeps_a_string_type(choice: object, want: dict[str, object]) -> None:
    got = tool_choice_of(choice)
    assert got is not None and got["openai"] == choice
    assert {k: got[k] for k in want} == want


def test_a_chained_request_follows_the_conversation_it_names() -> None:
    prior = [
        {"role": "user", "content": [{"type": "text", "text": "hi"}]},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "c1", "name": "f",
                                           "input": {}}]},
    ]  # fmt: skip
    body = {
        "model": "m",
        "previous_response_id": "resp_1",
        "input": [{"type": "function_call_output", "call_id": "c1", "output": "x"}],
    }
    r = responses_request(body, prior)
    assert [m["role"] for m in r.messages] == ["user", "assistant", "user"]
    assert r.params["previous_response_id"] == "resp_1"


def test_bad_requests_are_one_400() -> None:
    bad_role = {"input": [{"type": "message", "role": ["user"], "content": "x"}]}  # found by fuzz
    for body in ({"model": "m"}, {"input": 3}, {"input": [1]}, {"input": [{"role": "tool"}]},
                 bad_role):  # fmt: skip
        with pytest.raises(HttpError) as err:
            responses_request(body)  # type: ignore[arg-type]
        assert err.value.status == 400 and err.value.shape == "openai"


def test_answer_usage_in_the_messages_sense_and_the_body_kept() -> None:
    body = {
        "id": "resp_9",
        "object": "response",
        "model": "gpt-5",
        "status": "incomplete",
        "incomplete_details": {"reason": "max_output_tokens"},
        "output": [{"type": "message", "id": "m", "role": "assistant", "status": "incomplete",
                    "content": [{"type": "output_text", "text": "partial", "annotations": []}]}],
        "usage": {"input_tokens": 50, "input_tokens_details": {"cached_tokens": 30},
                  "output_tokens": 8, "output_tokens_details": {"reasoning_tokens": 5},
                  "total_tokens": 58},
    }  # fmt: skip
    r = responses_response(body)
    check_response(r.payload())
    assert r.stop_reason == "max_tokens" and r.text == "partial"
    assert (r.usage.input_tokens, r.usage.cache_read_input_tokens) == (20, 30)
    assert r.usage.model_extra == {"reasoning_output_tokens": 5}
    assert responses_body(r, {}) == body
    built = responses_body(r.model_copy(update={"openai_responses": None}), {"model": "gpt-5"})
    assert built["status"] == "incomplete"
    assert built["usage"]["input_tokens"] == 50
    assert built["usage"]["input_tokens_details"]["cached_tokens"] == 30
    assert built["usage"]["output_tokens_details"]["reasoning_tokens"] == 5
    assert built["output"][0]["content"][0]["text"] == "partial"


def test_a_body_with_odd_output_still_streams() -> None:  # found by the fuzz
    for odd in (3, "x", None, [1, {"type": "message", "content": 5, "id": "m"}]):
        events = b"".join(responses_events({"id": "resp_1", "status": "completed", "output": odd}))
        kinds = [line for line in events.split(b"\n") if line.startswith(b"event: ")]
        assert kinds[0] == b"event: response.created"
        assert kinds[-1] == b"event: response.completed"
