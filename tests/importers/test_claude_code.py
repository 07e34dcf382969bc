"""Claude Code transcripts converted into regista runs."""

from __future__ import annotations

import warnings
from pathlib import Path

import orjson
import pytest

from regista.errors import TranscriptWarning
from regista.importers import convert_file, detect
from regista.importers.claude_code import convert
from regista.trace.reader import Trace

from .cc_fixtures import CCSession, basic_session, text, tool_use


def _trace(conv_run_bytes: bytes) -> Trace:
    return Trace.from_bytes(conv_run_bytes, "<test>")


def test_detected_from_content_not_name(tmp_path: Path) -> None:
    path = basic_session().write(tmp_path / "notes.txt")
    assert detect(path.read_bytes()) == "claude-code"
    # a regista line is told by its envelope, the trace layer's own test
    line = b'{"schema_version":2,"session_id":"S","seq":0,"type":"session.start"}\n'
    assert detect(line) == "regista"
    assert detect(b"hello\n") is None


def test_split_lines_make_one_model_step_with_usage_once(tmp_path: Path) -> None:
    path = basic_session().write(tmp_path / "s.jsonl")
    trace = _trace(convert(path).main.to_bytes())
    steps = trace.steps()
    assert [s.kind for s in steps] == ["model", "tool", "tool", "model", "tool", "model"]
    first = steps[0].response
    assert first is not None
    assert [b["type"] for b in first.content] == ["thinking", "text", "tool_use", "tool_use"]
    assert first.content[0]["thinking"] == "Let me look at the test first."
    # The usage is repeated on the four lines: counted once per API call.
    assert trace.summary().usage.output_tokens == 97 + 107 + 117
    assert trace.summary().usage.cache_read_input_tokens == 3 * 15120
    assert trace.steps()[5].response.stop_reason == "end_turn"  # type: ignore[union-attr]


def test_tool_results_paired_by_id_with_errors(tmp_path: Path) -> None:
    path = basic_session().write(tmp_path / "s.jsonl")
    trace = _trace(convert(path).main.to_bytes())
    results = trace.tool_results()
    assert results["toolu_01A"].is_error  # came back second, paired by id
    assert results["toolu_01A"].content.startswith("Exit code 1")
    assert not results["toolu_01B"].is_error
    assert results["toolu_01B"].model_extra["tool_use_result"]["file"]["numLines"] == 2
    bash = next(s for s in trace.steps() if s.tool_call and s.tool_call.name == "Bash")
    assert bash.is_error and bash.complete


def test_requests_rebuild_and_hash(tmp_path: Path) -> None:
    path = basic_session().write(tmp_path / "s.jsonl")
    trace = _trace(convert(path).main.to_bytes())
    requests = list(trace.iter_requests())
    assert len(requests) == 3
    for ev, request in requests:
        assert request.hash == ev.request_hash
    last = requests[-1][1].messages
    assert [m["role"] for m in last] == ["user", "assistant", "user", "assistant", "user"]
    # Both tool results went back to the model in one user message.
    assert [b["tool_use_id"] for b in last[2]["content"]] == ["toolu_01B", "toolu_01A"]


def test_unknowns_marked_and_metadata_kept(tmp_path: Path) -> None:
    path = basic_session().write(tmp_path / "s.jsonl")
    trace = _trace(convert(path).main.to_bytes())
    meta = trace.start.metadata
    assert trace.start.instructions is None and trace.start.tools == []
    assert {"instructions", "tools", "max_tokens", "params"} <= set(meta["unknown"])
    assert meta["cwd"] == "/home/ann/projects/shop"
    assert meta["git_branch"] == "main" and meta["version"] == "2.1.39"
    assert meta["title"] == "Fix the failing refund test"
    assert meta["imported_from"]["format"] == "claude-code"
    assert meta["import_report"]["skipped"] == {
        "file-history-snapshot": 1,
        "progress": 1,
        "queue-operation": 1,
    }
    req = trace.steps()[0].request_event
    assert req is not None and "system" in req.model_extra["unknown"]
    assert trace.steps()[0].response_event.ts == "2026-03-02T09:15:03.685Z"  # type: ignore[union-attr]


def test_a_split_message_interleaved_with_results_is_still_one_step(tmp_path: Path) -> None:
    s = CCSession()
    s.prompt("Two things")
    mid = s.answer(tool_use("toolu_X1", "Bash", command="ls"))
    s.tool_result("toolu_X1", "a.py")
    # The second block of the same response is written after the first tool ran.
    s.raw(
        {
            **s.lines[-2],
            "uuid": "late",
            "message": {
                **s.lines[-2]["message"],
                "content": [tool_use("toolu_X2", "Bash", command="pwd")],
            },
        }
    )
    s.tool_result("toolu_X2", "/home")
    s.answer(text("done"))
    trace = _trace(convert(s.write(tmp_path / "s.jsonl")).main.to_bytes())
    model_steps = [st for st in trace.steps() if st.kind == "model"]
    assert len(model_steps) == 2
    assert model_steps[0].response.id == mid  # type: ignore[union-attr]
    assert len(model_steps[0].response.tool_uses) == 2  # type: ignore[union-attr]
    assert all(st.complete for st in trace.steps())


def test_a_line_that_is_not_json_is_reported_and_the_rest_imports(tmp_path: Path) -> None:
    path = basic_session().write(tmp_path / "s.jsonl")
    lines = path.read_bytes().split(b"\n")
    lines.insert(4, b'{"type":"assistant", "message": {"id": ')
    path.write_bytes(b"\n".join(lines))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        conv = convert_file(path)
    assert conv is not None
    messages = [str(w.message) for w in caught if w.category is TranscriptWarning]
    assert messages == [f"{path}:5: skipped: not valid JSON " + messages[0].split("JSON ", 1)[1]]
    assert len(_trace(conv.main.to_bytes()).steps()) == 6


def test_compaction_becomes_a_compaction_step(tmp_path: Path) -> None:
    s = CCSession()
    s.prompt("Refactor the shop")
    s.answer(text("Working on it."))
    s.compact("This session is being continued from a previous conversation. Summary: refactor.")
    s.prompt("Go on")
    s.answer(text("Continuing."))
    trace = _trace(convert(s.write(tmp_path / "s.jsonl")).main.to_bytes())
    kinds = [st.kind for st in trace.steps()]
    assert kinds == ["model", "compaction", "model"]
    comp = trace.steps()[1].compaction
    assert comp is not None and comp.tokens_before == 170251
    assert comp.summary.startswith("This session is being continued")
    assert [m["role"] for m in comp.replaced] == ["user", "assistant"]
    _, after = list(trace.iter_requests())[1]
    assert after.messages[0]["content"][0]["text"] == comp.summary
    assert trace.summary().compactions == 1


def _parent_with_task(prompt: str, *, with_agent_id: str | None = None) -> CCSession:
    s = CCSession(version="1.0.98" if with_agent_id is None else "2.1.39")
    s.prompt("Find where refunds are computed")
    s.answer(
        tool_use("toolu_T1", "Task", description="search", prompt=prompt, subagent_type="Explore")
    )
    return s


def _child(prompt: str, agent_id: str | None, sidechain_session: str) -> CCSession:
    c = CCSession(
        session_id=sidechain_session,
        agent_id=agent_id,
        sidechain=True,
        model="claude-haiku-4-5-20251001",
    )
    c.prompt(prompt)
    c.answer(tool_use("toolu_C1", "Grep", pattern="refund"))
    c.tool_result("toolu_C1", "refund.py:2")
    c.answer(text("Refunds are computed in refund.py line 2."))
    return c


def _check_link(conv_runs: list, parent_sid: str) -> None:
    parent, child = conv_runs
    call = next(ev for ev in parent.events if ev["type"] == "tool.call")
    assert call["subagent"]["session_id"] == child.session_id
    start = child.events[0]
    assert start["metadata"]["parent"] == {
        "session_id": parent_sid,
        "step": call["step"],
        "tool_use_id": "toolu_T1",
    }
    child_trace = _trace(child.to_bytes())
    assert child_trace.start.model == "claude-haiku-4-5-20251001"
    assert [s.kind for s in child_trace.steps()] == ["model", "tool", "model"]


def test_inline_sidechain_matched_by_prompt(tmp_path: Path) -> None:
    prompt = "Search the code for refund computations"
    s = _parent_with_task(prompt)
    child = _child(prompt, None, s.session_id)
    child._n = 100
    s.lines.extend(child.lines)
    s.tool_result("toolu_T1", [text("Refunds are computed in refund.py line 2.")])
    s.answer(text("It is in refund.py."))
    conv = convert(s.write(tmp_path / "s.jsonl"))
    assert len(conv.runs) == 2
    _check_link(conv.runs, conv.main.session_id)
    main = _trace(conv.main.to_bytes())
    assert [st.kind for st in main.steps()] == ["model", "tool", "model"]


@pytest.mark.parametrize("layout", ["flat", "nested"])
def test_subagent_files_become_linked_runs(tmp_path: Path, layout: str) -> None:
    prompt = "Search the code for refund computations"
    s = _parent_with_task(prompt, with_agent_id="a1b2c3d4")
    s.tool_result(
        "toolu_T1",
        [text("Refunds are computed in refund.py line 2.")],
        result={
            "status": "completed",
            "prompt": prompt,
            "agentId": "a1b2c3d4",
            "content": [text("Refunds are computed in refund.py line 2.")],
            "totalDurationMs": 5000,
            "totalTokens": 1200,
            "totalToolUseCount": 1,
        },
    )
    path = s.write(tmp_path / "proj" / f"{s.session_id}.jsonl")
    child = _child(prompt, "a1b2c3d4", s.session_id)
    if layout == "flat":
        child.write(path.parent / "agent-a1b2c3d4.jsonl")
        # A flat agent file of another session is not this session's subagent.
        _child("Warmup", "ffff0000", "other-session").write(path.parent / "agent-ffff0000.jsonl")
    else:
        sub = path.parent / path.stem / "subagents"
        child.write(sub / "agent-a1b2c3d4.jsonl")
        (sub / "agent-a1b2c3d4.meta.json").write_bytes(
            orjson.dumps({"agentType": "Explore", "spawnDepth": 1})
        )
    conv = convert(path)
    assert len(conv.runs) == 2
    _check_link(conv.runs, conv.main.session_id)
    result = next(ev for ev in conv.main.events if ev["type"] == "tool.result")
    assert result["subagent"]["session_id"] == conv.runs[1].session_id


def test_compaction_agent_file_gives_the_compaction_its_usage(tmp_path: Path) -> None:
    s = CCSession()
    s.prompt("Refactor")
    s.answer(text("ok"))
    s.compact("Summary of the work so far.")
    path = s.write(tmp_path / f"{s.session_id}.jsonl")
    c = CCSession(agent_id="acompact-e1f845", sidechain=True)
    c.prompt("Your task is to create a detailed summary of the conversation so far.")
    c.answer(
        text("<summary>Summary of the work so far.</summary>"),
        usage={"input_tokens": 9000, "output_tokens": 700},
    )
    c.write(path.parent / path.stem / "subagents" / "agent-acompact-e1f845.jsonl")
    conv = convert(path)
    comp = next(ev for ev in conv.main.events if ev["type"] == "context.compaction")
    assert comp["usage"]["input_tokens"] == 9000
    assert comp["subagent"]["session_id"] == conv.runs[1].session_id
    assert conv.runs[1].events[0]["metadata"]["parent"]["step"] == comp["step"]


def test_api_error_lines_are_errors_not_model_calls(tmp_path: Path) -> None:
    s = CCSession()
    s.prompt("hi")
    s.answer(
        text("API Error: 529 overloaded"),
        model="<synthetic>",
        usage={"input_tokens": 0, "output_tokens": 0},
    )
    s.answer(text("Hello!"))
    trace = _trace(convert(s.write(tmp_path / "s.jsonl")).main.to_bytes())
    assert [st.kind for st in trace.steps()] == ["model"]
    assert trace.summary().errors == 1


def test_the_format_registry_knows_claude_code(tmp_path: Path) -> None:
    from regista import open_run

    path = basic_session().write(tmp_path / "s.jsonl")
    opened = open_run(path)
    assert opened.format.name == "claude-code"
    assert len(opened.trace().steps()) == 6
    index = opened.index()  # converted as it scans
    assert index.scan() and len(index) == 6
    index.close()


def test_a_malformed_content_block_is_left_out_and_said(tmp_path: Path) -> None:
    s = CCSession()
    s.prompt("Fix it.")
    s.answer(
        text("Looking."),
        {"tyXe": "text", "text": "a block whose type was lost"},
        {"type": "thinking", "thinking": None},
        tool_use("toolu_01A", "Bash", command="ls"),
    )
    s.raw(
        {
            "type": "user",
            "message": {"role": "user", "content": ["stray", {"type": 3}]},
            "uuid": "u-stray",
            "timestamp": s._ts(),
        }
    )
    s.tool_result("toolu_01A", [{"type": "text", "text": "refund.py"}, {"type": "text"}])
    s.raw(
        {
            "type": "user",
            "message": {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": True, "content": "x"}],
            },
            "uuid": "u-bad-result",
            "timestamp": s._ts(),
        }
    )
    s.answer(text("Done."), stop_reason="end_turn")
    conv = convert(s.write(tmp_path / "s.jsonl"))
    trace = _trace(conv.main.to_bytes())  # every line reads back
    steps = trace.steps()
    response = steps[0].response
    assert response is not None
    assert [b["type"] for b in response.content] == ["text", "tool_use"]
    result = steps[1].result
    assert result is not None and result.content == [{"type": "text", "text": "refund.py"}]
    assert "6 malformed content blocks left out" in conv.report.notes
