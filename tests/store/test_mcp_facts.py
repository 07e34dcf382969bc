"""MCP answers an agent can use: a step's facts and content, loops flagged in a summary."""

from __future__ import annotations

import shutil
from pathlib import Path

import orjson
from builders import simple_agent

from regista.store.mcp_server import RunsTools

SAMPLES = Path(__file__).parents[2] / "sample_traces"


def test_run_summary_flags_the_repeated_searches_with_what_they_took(tmp_path: Path) -> None:
    shutil.copy(SAMPLES / "refund_search_loop.jsonl", tmp_path / "loop.jsonl")
    summary = RunsTools(tmp_path).run_summary("loop.jsonl")
    repeats = summary["repeats"]
    assert repeats["count"] == 9 and repeats["tokens"]["total"] == 6348
    assert [r["step"] for r in repeats["repeats"] if r["kind"] == "repeated_call"] == [
        11, 13, 15, 17, 19
    ]  # fmt: skip
    rows = summary["step_list"]
    assert rows[11]["repeat"].startswith("same tool call as step 1")
    # the 250 ms the result recorded (its call, decision and result span 500)
    assert "repeat" not in rows[1] and rows[1]["duration_ms"] == 250.0
    assert rows[0]["tokens"] == 618 and rows[0]["status"] == "ok"


def test_a_clean_run_has_no_repeats(tmp_path: Path) -> None:
    shutil.copy(SAMPLES / "refund_happy.jsonl", tmp_path / "happy.jsonl")
    assert RunsTools(tmp_path).run_summary("happy.jsonl")["repeats"] is None


def test_get_step_says_when_an_answer_was_recorded_without_its_content(tmp_path: Path) -> None:
    path = simple_agent(tmp_path).run_sync("Weather?").trace_path
    lines = path.read_bytes().splitlines()
    for i, raw in enumerate(lines):
        event = orjson.loads(raw)
        if event["type"] == "llm.response" and event["step"] == 2:
            event["response"]["content"] = []
            event["response"]["content_captured"] = False
            lines[i] = orjson.dumps(event)
    path.write_bytes(b"\n".join(lines) + b"\n")
    step = RunsTools(tmp_path).get_step(path.name, 2)
    assert step["answer"] == "not captured: this answer was recorded without its content"
    assert step["kind"] == "model" and "tokens" in step and "events" not in step
    first = RunsTools(tmp_path).get_step(path.name, 0)
    assert first["request"]["messages"] == 1 and first["model"] == "claude-sonnet-4-6"
