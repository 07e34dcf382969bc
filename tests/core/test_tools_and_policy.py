"""Tools (schemas, sync/async, failures), parallel calls, and permission policies."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest
from engine_helpers import SCRIPT, add, agent, echo, reply, use

from regista import Decision, ToolCallInfo, deny, tool
from regista.errors import UserError
from regista.trace.canonical import canonical_json, request_hash
from regista.trace.events import ErrorEvent, PermissionDecision, ToolCall, ToolResult
from regista.trace.reader import Trace
from regista.types import LlmRequest

# -- request_hash ------------------------------------------------------------------------


def test_canonical_json_is_sorted_compact_utf8() -> None:
    assert canonical_json({"b": 1, "a": {"d": [1, 2], "c": "é"}}) == (
        '{"a":{"c":"é","d":[1,2]},"b":1}'.encode()
    )


def test_request_hash_is_sha256_of_the_canonical_full_request() -> None:
    req = LlmRequest(
        model="m",
        system="s",
        messages=[{"role": "user", "content": "ü"}],
        params={"temperature": 0.5},
    )
    expected = hashlib.sha256(
        b'{"max_tokens":4096,"messages":[{"content":"\xc3\xbc","role":"user"}],'
        b'"model":"m","params":{"temperature":0.5},"system":"s","tool_choice":null,"tools":[]}'
    ).hexdigest()
    assert req.hash == request_hash(req.canonical()) == expected
    changed = req.model_copy(update={"params": {"temperature": 0.6}})
    assert changed.hash != req.hash


# -- @tool -------------------------------------------------------------------------------


def test_schema_from_hints_and_google_docstring() -> None:
    assert echo.schema == {
        "name": "echo",
        "description": "Repeat a text.",
        "input_schema": {
            "additionalProperties": False,
            "properties": {
                "text": {"description": "What to repeat.", "type": "string"},
                "times": {"default": 1, "description": "How many times.", "type": "integer"},
            },
            "required": ["text"],
            "type": "object",
        },
    }


def test_tool_with_arguments_and_multiline_arg_docs() -> None:
    @tool(name="lookup", description="Find things.")
    def f(query: str, tags: list[str] | None = None) -> str:
        """Ignored summary.

        Args:
            query: The words
                to look for.
            tags (list): Optional tags.

        Returns:
            Something.
        """
        return query

    props = f.input_schema["properties"]
    assert (f.name, f.description) == ("lookup", "Find things.")
    assert props["query"]["description"] == "The words to look for."
    assert props["tags"]["description"] == "Optional tags."
    assert f.input_schema["required"] == ["query"]


async def test_sync_and_async_tools_and_invalid_input() -> None:
    assert (await echo.invoke({"text": "a", "times": 3})).content == "aaa"
    assert (await add.invoke({"a": 1, "b": 2})).content == '{"sum":3}'
    bad = await add.invoke({"a": "x"})
    assert bad.is_error and "Invalid input for add" in str(bad.content)
    extra = await echo.invoke({"text": "a", "nope": 1})
    assert extra.is_error


def test_duplicate_tool_names_are_refused(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="two tools are named 'echo'"):
        agent(tmp_path, SCRIPT, tools=[echo, echo])


async def test_a_raising_tool_is_an_error_result_not_a_crash(tmp_path: Path) -> None:
    result = await agent(tmp_path, SCRIPT).run("go")
    assert result.stop_reason == "end_turn"
    trace = Trace.load(result.trace_path)
    res = trace.tool_results()["toolu_3"]
    assert res.is_error and "RuntimeError: exploded: test" in str(res.content)
    errors = trace.of_type(ErrorEvent)
    assert [(e.where, e.error_type, e.step) for e in errors] == [("tool", "RuntimeError", 4)]
    # The model saw the error as an error tool_result.
    request = trace.llm_calls()[2][0]
    blocks = request.messages[-1]["content"]
    assert blocks[1]["is_error"] is True and blocks[1]["tool_use_id"] == "toolu_3"


async def test_unknown_tool_and_bad_input_are_error_results(tmp_path: Path) -> None:
    script = [
        reply(use("toolu_1", "nope"), use("toolu_2", "add", a="x", b=1)),
        reply(text="ok"),
    ]
    result = await agent(tmp_path, script).run("go")
    results = Trace.load(result.trace_path).tool_results()
    assert results["toolu_1"].is_error and "Unknown tool 'nope'" in str(results["toolu_1"].content)
    assert results["toolu_2"].is_error and "Invalid input for add" in str(
        results["toolu_2"].content
    )


async def test_parallel_tool_uses_are_all_run_and_answered_in_order(tmp_path: Path) -> None:
    script = [
        reply(
            use("toolu_a", "echo", text="x"),
            use("toolu_b", "add", a=1, b=1),
            use("toolu_c", "echo", text="y", times=2),
        ),
        reply(text="done"),
    ]
    result = await agent(tmp_path, script).run("go")
    trace = Trace.load(result.trace_path)
    calls = trace.of_type(ToolCall)
    assert [c.tool_use_id for c in calls] == ["toolu_a", "toolu_b", "toolu_c"]
    assert [c.step for c in calls] == [1, 2, 3]
    answered = trace.llm_calls()[1][0].messages[-1]
    assert answered["role"] == "user"
    assert [(b["tool_use_id"], b["content"]) for b in answered["content"]] == [
        ("toolu_a", "x"),
        ("toolu_b", '{"sum":2}'),
        ("toolu_c", "yy"),
    ]
    assert result.tool_calls == 3


# -- policy ------------------------------------------------------------------------------


async def _run_with_policy(tmp_path: Path, policy: Any) -> Trace:
    script = [
        reply(use("toolu_1", "echo", text="ok"), use("toolu_2", "boom", why="x")),
        reply(text="done"),
    ]
    result = await agent(tmp_path, script, policy=policy).run("go")
    return Trace.load(result.trace_path)


def _decisions(trace: Trace) -> list[tuple[str, bool, str | None, str]]:
    return [(d.tool_use_id, d.allowed, d.reason, d.by) for d in trace.of_type(PermissionDecision)]


async def test_no_policy_allows_and_records_the_default(tmp_path: Path) -> None:
    trace = await _run_with_policy(tmp_path, None)
    assert _decisions(trace) == [
        ("toolu_1", True, None, "default"),
        ("toolu_2", True, None, "default"),
    ]


async def test_bool_policy_denial_is_recorded_and_answered_as_an_error(tmp_path: Path) -> None:
    calls: list[ToolCallInfo] = []

    def policy(call: ToolCallInfo) -> bool:
        calls.append(call)
        return call.name != "boom"

    trace = await _run_with_policy(tmp_path, policy)
    assert [(c.id, c.name, c.input) for c in calls] == [
        ("toolu_1", "echo", {"text": "ok"}),
        ("toolu_2", "boom", {"why": "x"}),
    ]
    assert _decisions(trace) == [
        ("toolu_1", True, None, "policy"),
        ("toolu_2", False, None, "policy"),
    ]
    denied = trace.tool_results()["toolu_2"]
    assert denied.is_error and denied.content == "Permission denied"
    assert trace.of_type(ErrorEvent) == []  # boom never ran
    step = trace.steps()[2]
    assert step.denied and step.is_error
    assert trace.summary().denials == 1


async def test_decision_with_a_reason(tmp_path: Path) -> None:
    def policy(call: ToolCallInfo) -> Decision:
        return deny("too dangerous") if call.name == "boom" else Decision(True, "fine")

    trace = await _run_with_policy(tmp_path, policy)
    assert _decisions(trace)[1] == ("toolu_2", False, "too dangerous", "policy")
    assert _decisions(trace)[0][2] == "fine"
    assert trace.tool_results()["toolu_2"].content == "Permission denied: too dangerous"


async def test_async_policy(tmp_path: Path) -> None:
    async def policy(call: ToolCallInfo) -> bool:
        return call.name == "echo"

    trace = await _run_with_policy(tmp_path, policy)
    assert [d[1] for d in _decisions(trace)] == [True, False]


async def test_a_raising_policy_denies(tmp_path: Path) -> None:
    def policy(call: ToolCallInfo) -> bool:
        raise ValueError("broken rule")

    trace = await _run_with_policy(tmp_path, policy)
    decisions = _decisions(trace)
    assert [d[1] for d in decisions] == [False, False]
    assert decisions[0][2] == "policy raised ValueError: broken rule"
    assert trace.end is not None and trace.end.stop_reason == "end_turn"


def test_policy_is_named_in_session_start(tmp_path: Path) -> None:
    def my_policy(call: ToolCallInfo) -> bool:
        return True

    result = agent(tmp_path, [reply(text="hi")], policy=my_policy).run_sync("go")
    start = Trace.load(result.trace_path).start
    assert start.policy is not None and start.policy.endswith("my_policy")


async def test_tool_results_are_written_with_their_step(tmp_path: Path) -> None:
    trace = await _run_with_policy(tmp_path, None)
    steps = {(r.tool_use_id, r.step) for r in trace.of_type(ToolResult)}
    assert steps == {("toolu_1", 1), ("toolu_2", 2)}
