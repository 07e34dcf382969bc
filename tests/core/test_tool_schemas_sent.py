"""The loop sends the same tools list while the tools are the same (so the trace writes them
once and the hasher knows them by identity), and a changed tool as soon as it changes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
from engine_helpers import SCRIPT, agent, reply, use

from regista import tool
from regista.providers import ScriptedProvider
from regista.tools import Tool
from regista.trace.canonical import request_hash
from regista.trace.reader import Trace
from regista.types import LlmRequest


@tool
def note(text: str) -> str:
    """Keep a note."""
    return "kept"


def test_a_tool_gives_the_same_schema_until_a_part_of_it_changes() -> None:
    made = tool(note.fn)
    first = made.schema
    assert made.schema is first
    made.description = "Keep a short note."
    changed = made.schema
    assert changed is not first
    assert changed["description"] == "Keep a short note."
    assert first["description"] == "Keep a note."  # what was sent stays as it was
    made.input_schema = {"type": "object", "properties": {}}
    assert made.schema["input_schema"] == {"type": "object", "properties": {}}
    raw = {"name": "r", "description": "", "input_schema": {}, "extra": 1}
    recorded = Tool.from_schema(raw)
    assert recorded.schema == raw and recorded.schema is recorded.schema


def test_a_schema_changed_in_place_is_sent_changed_and_what_was_sent_stays() -> None:
    """What is sent is a copy made with the schema: a change in place is seen, and sent as a
    new schema; the one sent before is left as it was (the trace recorded it)."""
    made = tool(note.fn)
    sent = made.schema
    made.input_schema["properties"]["text"]["description"] = "changed in place"
    changed = made.schema
    assert changed is not sent
    assert changed["input_schema"]["properties"]["text"]["description"] == "changed in place"
    assert "description" not in sent["input_schema"]["properties"]["text"]
    assert made.schema is changed
    raw = {"name": "r", "description": "", "input_schema": {"type": "object"}}
    recorded = Tool.from_schema(raw)
    raw["input_schema"]["type"] = "changed"  # a recorded schema is served as recorded
    assert recorded.schema["input_schema"] == {"type": "object"}


def test_a_schema_changed_in_place_during_a_session_is_sent_and_recorded(tmp_path: Path) -> None:
    made = tool(note.fn)

    def widen(request: LlmRequest) -> dict[str, Any]:
        made.input_schema["properties"]["text"]["maxLength"] = 10  # in place
        return reply(use("toolu_2", "note", text="b"))

    script = [reply(use("toolu_1", "note", text="a")), widen, reply(text="Done.")]
    provider = ScriptedProvider(script)
    result = agent(tmp_path, script, provider=provider, tools=[made]).run_sync("go")
    sent = [
        "maxLength" in r.tools[0]["input_schema"]["properties"]["text"] for r in provider.requests
    ]
    assert sent == [False, False, True]
    assert ["tools" in x for x in _request_lines(result.trace_path)] == [True, False, True]
    _all_verified(result.trace_path)


def _request_lines(path: Path) -> list[dict[str, Any]]:
    lines = [orjson.loads(x) for x in path.read_bytes().splitlines()]
    return [x for x in lines if x["type"] == "llm.request"]


def _all_verified(path: Path) -> None:
    for ev, request in Trace.load(path).iter_requests():
        rebuilt = LlmRequest.model_validate(request.canonical())
        assert request_hash(rebuilt.canonical()) == ev.request_hash


def test_unchanged_tools_are_sent_as_the_same_list_and_written_once(tmp_path: Path) -> None:
    provider = ScriptedProvider(SCRIPT)
    result = agent(tmp_path, SCRIPT, provider=provider).run_sync("go")
    first, *later = provider.requests
    assert len(later) == 2 and all(r.tools is first.tools for r in later)
    assert ["tools" in x for x in _request_lines(result.trace_path)] == [True, False, False]
    _all_verified(result.trace_path)


def test_a_tool_changed_during_a_session_is_sent_changed(tmp_path: Path) -> None:
    made = tool(note.fn)

    def rename(request: LlmRequest) -> dict[str, Any]:
        made.description = "Keep a note, briefly."
        return reply(use("toolu_2", "note", text="b"))

    script = [reply(use("toolu_1", "note", text="a")), rename, reply(text="Done.")]
    provider = ScriptedProvider(script)
    result = agent(tmp_path, script, provider=provider, tools=[made]).run_sync("go")
    sent = [r.tools[0]["description"] for r in provider.requests]
    assert sent == ["Keep a note.", "Keep a note.", "Keep a note, briefly."]
    assert ["tools" in x for x in _request_lines(result.trace_path)] == [True, False, True]
    _all_verified(result.trace_path)


def test_a_tool_choice_changed_in_place_between_calls_is_hashed_as_sent(tmp_path: Path) -> None:
    choice: dict[str, Any] = {"type": "auto"}

    def switch(request: LlmRequest) -> dict[str, Any]:
        choice["type"] = "any"  # the agent's own dict, changed during the session
        return reply(use("toolu_2", "note", text="b"))

    script = [reply(use("toolu_1", "note", text="a")), switch, reply(text="Done.")]
    provider = ScriptedProvider(script)
    made = tool(note.fn)
    run = agent(tmp_path, script, provider=provider, tools=[made], tool_choice=choice)
    result = run.run_sync("go")
    sent = [r.tool_choice["type"] for r in provider.requests if r.tool_choice]
    assert sent == ["auto", "auto", "any"]
    _all_verified(result.trace_path)
