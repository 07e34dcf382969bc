"""Codex CLI rollouts converted into regista runs."""

from __future__ import annotations

from pathlib import Path

import orjson

from regista.importers import detect
from regista.importers.codex import convert
from regista.trace.reader import Trace

from .codex_fixtures import Rollout, basic_rollout, codex_0171_rollout


def _trace(path: Path) -> Trace:
    return Trace.from_bytes(convert(path).main.to_bytes(), path)


def test_wrapped_rollout_steps_usage_and_outputs(tmp_path: Path) -> None:
    path = basic_rollout().write(tmp_path / "rollout-2026-02-11T08-27-22-019b64e5.jsonl")
    assert detect(path.read_bytes()) == "codex"
    trace = _trace(path)
    kinds = [(s.kind, s.title) for s in trace.steps()]
    assert kinds == [
        ("model", "gpt-5-codex"),
        ("tool", "shell"),
        ("tool", "shell_command"),
        ("model", "gpt-5-codex"),
        ("tool", "apply_patch"),
        ("model", "gpt-5-codex"),
    ]
    first = trace.steps()[0].response
    assert first is not None
    assert first.content[0]["type"] == "thinking"
    assert first.content[0]["thinking"] == "**Inspecting the refund module**"
    assert first.tool_uses[0]["input"]["command"] == ["bash", "-lc", "pytest -q"]
    # Usage from token_count (written twice: counted once); cached tokens are a subset.
    assert first.usage.input_tokens == 5200 - 4096
    assert first.usage.cache_read_input_tokens == 4096
    assert trace.summary().usage.output_tokens == 180 + 90 + 40
    results = trace.tool_results()
    assert results["call_A"].is_error and results["call_A"].model_extra["exit_code"] == 1
    assert results["call_A"].content == "1 failed"
    assert results["call_A"].duration_ms == 2500.0
    assert not results["call_B"].is_error and results["call_B"].model_extra["exit_code"] == 0
    assert results["call_C"].content.startswith("Success. Updated")
    assert trace.summary().output == "Fixed the rounding in refund.py."


def test_metadata_instructions_and_unknowns(tmp_path: Path) -> None:
    trace = _trace(basic_rollout().write(tmp_path / "r.jsonl"))
    start = trace.start
    assert start.task == "Fix the refund rounding bug"
    assert start.instructions == "You are Codex, a coding agent based on GPT-5."
    assert start.metadata["cli_version"] == "0.77.0"
    assert start.metadata["git_branch"] == "main"
    assert "instructions" not in start.metadata["unknown"]
    assert "tools" in start.metadata["unknown"]
    for ev, request in trace.iter_requests():
        assert request.hash == ev.request_hash
        assert request.system == start.instructions
    msgs = next(iter(trace.iter_requests()))[1].messages
    assert msgs[0]["origin"] == "developer"


def test_bare_rollout(tmp_path: Path) -> None:
    lines = [
        {
            "id": "5973b6c0-94b8-487b-a530-2aeb6098ae0e",
            "timestamp": "2025-08-06T20:41:46.683Z",
            "instructions": None,
            "git": {"branch": "main"},
        },
        {"record_type": "state"},
        {
            "type": "message",
            "id": None,
            "role": "user",
            "content": [{"type": "input_text", "text": "list the files"}],
        },
        {
            "type": "local_shell_call",
            "id": "lsc_1",
            "call_id": "call_1",
            "status": "completed",
            "action": {"type": "exec", "command": ["ls"], "timeout_ms": 10000},
        },
        {
            "type": "function_call_output",
            "call_id": "call_1",
            "output": orjson.dumps(
                {"output": "a.py\nb.py\n", "metadata": {"exit_code": 0, "duration_seconds": 0.01}}
            ).decode(),
        },
        {
            "type": "message",
            "id": "msg_1",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "Two files."}],
        },
    ]
    path = tmp_path / "rollout-2025-08-06T20-41-46-5973b6c0-94b8-487b-a530-2aeb6098ae0e.jsonl"
    path.write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in lines))
    assert detect(path.read_bytes()) == "codex"
    trace = _trace(path)
    assert [s.kind for s in trace.steps()] == ["model", "tool", "model"]
    assert trace.steps()[1].tool_call.name == "local_shell"  # type: ignore[union-attr]
    assert trace.tool_results()["call_1"].content == "a.py\nb.py\n"
    assert trace.start.metadata["unknown"][0] == "instructions"


def test_single_document_rollout(tmp_path: Path) -> None:
    doc = {
        "session": {
            "timestamp": "2025-04-20T10:00:00.000Z",
            "id": "abc",
            "instructions": "Be brief.",
        },
        "items": [
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]},
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "hello"}],
            },
        ],
    }
    path = tmp_path / "rollout-2025-04-20-abc.json"
    path.write_bytes(orjson.dumps(doc, option=orjson.OPT_INDENT_2))
    assert detect(path.read_bytes()) == "codex"
    trace = _trace(path)
    assert trace.start.instructions == "Be brief." and trace.summary().output == "hello"


def test_compacted_line_becomes_a_compaction(tmp_path: Path) -> None:
    r = basic_rollout()
    r.line(
        "compacted",
        {
            "message": "Summary: fixed refund rounding.",
            "replacement_history": [
                {
                    "type": "message",
                    "role": "user",
                    "content": [{"type": "input_text", "text": "Fix it"}],
                },
            ],
        },
    )
    r.line("event_msg", {"type": "context_compacted"})
    r.turn()
    r.user("Now add a test")
    r.say("Added.")
    trace = _trace(r.write(tmp_path / "r.jsonl"))
    comp = [s for s in trace.steps() if s.kind == "compaction"]
    assert len(comp) == 1 and comp[0].compaction.summary.startswith("Summary")  # type: ignore[union-attr]
    last = list(trace.iter_requests())[-1][1]
    assert last.messages[0]["content"][0]["text"] == "Fix it"
    for ev, request in trace.iter_requests():
        assert request.hash == ev.request_hash


def test_unpaired_call_and_skipped_events(tmp_path: Path) -> None:
    r = basic_rollout()
    r.call("call_Z", "shell", command=["sleep", "100"])
    r.line("event_msg", {"type": "turn_aborted", "reason": "interrupted"})
    r.line("event_msg", {"type": "brand_new_event"})
    trace = _trace(r.write(tmp_path / "r.jsonl"))
    last = trace.steps()[-1]
    assert last.kind == "tool" and not last.complete  # no output recorded: not invented
    assert trace.start.metadata["import_report"]["skipped"]["event_msg/brand_new_event"] == 1
    assert trace.summary().errors >= 1


def test_web_search_call_is_a_tool_step_without_an_invented_result(tmp_path: Path) -> None:
    r = Rollout()
    r.meta()
    r.turn()
    r.user("Which Python added match statements?")
    action = {"type": "search", "query": "python match statement version"}
    r.line("response_item", {"type": "web_search_call", "status": "completed", "action": action})
    r.say("Python 3.10.")
    r.tokens(120, 0, 30)
    trace = _trace(r.write(tmp_path / "r.jsonl"))
    kinds = [(s.kind, s.tool_call.name if s.tool_call else None) for s in trace.steps()]
    assert ("tool", "web_search") in kinds
    search = next(s for s in trace.steps() if s.tool_call and s.tool_call.name == "web_search")
    assert search.tool_call.input == action
    # the rollout holds no search results: none is made up, the result is marked unknown
    assert search.result is not None and search.result.content == ""
    assert search.result.unknown == ["content"]
    assert trace.end is not None and trace.end.output == "Python 3.10."


def test_a_codex_0171_rollout_keeps_what_each_answer_says(tmp_path: Path) -> None:
    """Codex 0.171 writes a token_usage_record per answer: its id, and cached, cache-written
    and reasoning tokens are recorded (usage in the trace's own terms: input less cached);
    the exec_command call is a tool step; the task is what the person typed."""
    path = codex_0171_rollout().write(tmp_path / "rollout-2026-12-02T00-04-40-01a23411.jsonl")
    conv = convert(path)
    trace = _trace(path)
    assert trace.start.task == "Run the tests"
    steps = trace.steps()
    assert [(s.kind, s.title) for s in steps] == [
        ("model", "gpt-6.2-sol"),
        ("tool", "exec_command"),
        ("model", "gpt-6.2-sol"),
    ]
    first, last = steps[0].response, steps[2].response
    assert first is not None and last is not None
    assert [b["type"] for b in first.content] == ["thinking", "tool_use"]
    assert first.tool_uses[0]["input"] == {"cmd": "pytest -q"}
    assert first.id == "resp_1" and last.id == "resp_2"
    assert first.usage.input_tokens == 1200 - 1000 - 50
    assert first.usage.cache_read_input_tokens == 1000
    assert first.usage.cache_creation_input_tokens == 50
    assert first.usage.model_extra["reasoning_output_tokens"] == 25
    assert last.usage.input_tokens == 150 and last.usage.cache_read_input_tokens == 1150
    assert last.usage.model_extra["reasoning_output_tokens"] == 10
    assert trace.tool_results()["call_1"].content.endswith("3 passed\n")
    assert "token_usage_record" not in conv.report.skipped
