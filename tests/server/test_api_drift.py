"""A recording always reads back: whatever the providers accept is kept, never refused.

Seeded (``REGISTA_FUZZ_SEED`` gives other cases): each entry point that writes traces — the
agent loop, the recording proxy (Anthropic and OpenAI, through the real SDKs) and the
Claude Code and Codex importers — is driven with the shapes the real APIs take today and
regista has no model for: content blocks such as ``server_tool_use``,
``web_search_tool_result``, ``mcp_tool_use``, ``container_upload``, ``document`` and
``image`` with base64 data, citations, unknown request and response fields, null cache
counts, new stop reasons, and OpenAI's ``refusal``, ``audio`` and ``annotations``. The trace
must read back, verify, and replay what was recorded.
"""

from __future__ import annotations

import copy
import json
import os
import random
from pathlib import Path
from typing import Any

import anthropic
import openai
import orjson
import pytest
from builders import get_weather
from fakes.anthropic_server import FakeAnthropicServer
from fakes.openai_server import FakeOpenAIServer
from importers.cc_fixtures import CCSession, text, tool_use
from importers.codex_fixtures import basic_rollout
from sdk_agents import new_replay, regista_server

from regista import Agent
from regista.cli.main import main
from regista.errors import TraceWriteError
from regista.importers import convert, write_runs
from regista.providers import ScriptedProvider
from regista.replay import replay
from regista.trace.reader import Trace
from regista.trace.recorder import TraceRecorder
from regista.types import LlmRequest, LlmResponse

CASES = 4
_SEED = os.environ.get("REGISTA_FUZZ_SEED")


def rng_for(name: str) -> random.Random:
    return random.Random(f"regista-drift-{name}" + (f"-{_SEED}" if _SEED else ""))


#: A 1×1 PNG, base64.
PNG = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYGD4DwABBAEAwS2OUAAAAABJRU5E"
    "rkJggg=="
)
#: Answer blocks of the Messages API that regista has no model for, as the API sends them.
ANSWER_BLOCKS: list[dict[str, Any]] = [
    {"type": "server_tool_use", "id": "srvtoolu_01", "name": "web_search",
     "input": {"query": "weather Paris"}},
    {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_01",
     "content": [{"type": "web_search_result", "url": "https://w.example/paris",
                  "title": "Paris", "encrypted_content": "EqgfCioIARgB", "page_age": None}]},
    {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_02",
     "content": {"type": "web_search_tool_result_error", "error_code": "max_uses_exceeded"}},
    {"type": "text", "text": "Sunny, says the forecast.",
     "citations": [{"type": "web_search_result_location", "url": "https://w.example/paris",
                    "title": "Paris", "encrypted_index": "Eo8BCioI", "cited_text": "sunny"}]},
    {"type": "mcp_tool_use", "id": "mcptoolu_01", "name": "lookup", "server_name": "notes",
     "input": {"q": "umbrella"}},
    {"type": "mcp_tool_result", "tool_use_id": "mcptoolu_01", "is_error": False,
     "content": [{"type": "text", "text": "no umbrella needed"}]},
    {"type": "code_execution_tool_result", "tool_use_id": "srvtoolu_03",
     "content": {"type": "code_execution_result", "stdout": "42\n", "stderr": "",
                 "return_code": 0, "content": []}},
    {"type": "container_upload", "file_id": "file_011CNha8iCJcU1wXNR6q4V8w"},
    {"type": "thinking", "thinking": "The user wants weather.", "signature": "EqQBCkYIBxgC"},
    {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix"},
    {"type": "tool_search_tool_result", "tool_use_id": "srvtoolu_04", "content": {"x": 1}},
]  # fmt: skip
#: User blocks the Messages API takes (the proxy and the importers get them; the loop sends
#: its task as text).
USER_BLOCKS: list[dict[str, Any]] = [
    {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                 "data": PNG}},
    {"type": "document", "source": {"type": "base64", "media_type": "application/pdf",
                                    "data": "JVBERi0xLjQKJcfsj6IKNSAwIG9iago="},
     "title": "Forecast", "citations": {"enabled": True}},
    {"type": "document", "source": {"type": "text", "media_type": "text/plain",
                                    "data": "Sunny all week."}},
    {"type": "search_result", "source": "https://w.example/paris", "title": "Paris",
     "content": [{"type": "text", "text": "Sunny."}], "citations": {"enabled": True}},
    {"type": "container_upload", "file_id": "file_011CNha8iCJcU1wXNR6q4V8w"},
    {"type": "text", "text": "And tomorrow?", "cache_control": {"type": "ephemeral", "ttl": "1h"}},
]  # fmt: skip
STOP_REASONS = ["pause_turn", "refusal", "model_context_window_exceeded", "end_turn"]
#: Top-level request fields regista has no model for.
REQUEST_FIELDS: dict[str, Any] = {
    "service_tier": "auto",
    "container": "container_011CNha8",
    "context_management": {"edits": [{"type": "clear_tool_uses_20250919"}]},
    "mcp_servers": [{"type": "url", "url": "https://mcp.example/sse", "name": "notes"}],
    "a_field_from_2027": {"nested": [1, 2, 3]},
}
#: Top-level answer fields regista has no model for.
ANSWER_FIELDS: dict[str, Any] = {
    "container": {"id": "container_011CNha8", "expires_at": "2026-12-01T00:00:00Z"},
    "context_management": {"applied_edits": []},
    "a_field_from_2027": True,
}
USAGE = {
    "input_tokens": 12,
    "output_tokens": 9,
    "cache_creation_input_tokens": None,
    "cache_read_input_tokens": None,
    "server_tool_use": {"web_search_requests": 1},
    "service_tier": "standard",
    "cache_creation": {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 0},
}


def _some(rng: random.Random, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return copy.deepcopy(rng.sample(items, rng.randint(1, len(items))))


def _fields(rng: random.Random, fields: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in fields.items() if rng.random() < 0.7}


def _reads_back(path: Path) -> Trace:
    trace = Trace.load(path)
    assert main(["verify", str(path)]) == 0
    return trace


async def test_the_loop_keeps_every_shape(tmp_path: Path, capsys: Any) -> None:
    rng = rng_for("loop")
    for case in range(CASES):
        use = {"type": "tool_use", "id": f"toolu_{case}", "name": "get_weather",
               "input": {"city": "Paris"}}  # fmt: skip
        first = {"content": [*_some(rng, ANSWER_BLOCKS), use], "stop_reason": "tool_use",
                 "usage": dict(USAGE), **_fields(rng, ANSWER_FIELDS)}  # fmt: skip
        last = {"content": _some(rng, ANSWER_BLOCKS), "stop_reason": rng.choice(STOP_REASONS),
                "usage": dict(USAGE), **_fields(rng, ANSWER_FIELDS)}  # fmt: skip
        agent = Agent(
            model="claude-sonnet-4-6",
            tools=[get_weather],
            provider=ScriptedProvider([first, last]),
            trace_dir=tmp_path / str(case),
        )
        result = await agent.run("Weather in Paris?")
        trace = _reads_back(result.trace_path)
        answers = [r.content for _, r in trace.llm_calls()]
        assert answers == [first["content"], last["content"]]
        again = await replay(result.trace_path, trace_dir=tmp_path / "replays")
        assert again.stop_reason == result.stop_reason
    capsys.readouterr()


@pytest.mark.parametrize("stream", [False, True])
def test_the_anthropic_proxy_keeps_every_shape(tmp_path: Path, stream: bool) -> None:
    rng = rng_for(f"anthropic-{stream}")
    store = tmp_path / "store"
    sent: list[tuple[dict[str, Any], dict[str, Any]]] = []
    with FakeAnthropicServer() as fake, regista_server(store, anthropic=fake.url) as server:
        client = anthropic.Anthropic(
            api_key="k", base_url=f"{server.url}/v1/record/anthropic", max_retries=0
        )
        for case in range(CASES):
            answer = {"content": _some(rng, ANSWER_BLOCKS), "stop_reason":
                      rng.choice(STOP_REASONS), "usage": dict(USAGE),
                      **_fields(rng, ANSWER_FIELDS)}  # fmt: skip
            fake.script(answer)
            kwargs: dict[str, Any] = dict(
                model="claude-sonnet-4-6",
                max_tokens=256,
                messages=[{"role": "user", "content": [text(f"case {case}"),
                                                       *_some(rng, USER_BLOCKS)]}],
                extra_body=_fields(rng, REQUEST_FIELDS),
            )  # fmt: skip
            if stream:
                with client.messages.stream(**kwargs) as s:
                    got = s.get_final_message().to_dict(mode="json", warnings=False)
            else:
                got = client.messages.create(**kwargs).to_dict(mode="json", warnings=False)
            sent.append((kwargs, got))
        server.record_done()
    paths = sorted(store.glob("*.jsonl"))
    assert len(paths) == CASES
    with regista_server(store) as server:
        for path in paths:
            trace = _reads_back(path)
            ((request, _),) = trace.llm_calls()
            case = int(request.messages[0]["content"][0]["text"].split()[1])
            kwargs, got = sent[case]
            assert request.messages == kwargs["messages"]
            for key, value in kwargs["extra_body"].items():  # kept verbatim
                assert request.params[key] == value
            rp = new_replay(server, trace.session_id)
            r = server.http.post(
                f"/v1/replays/{rp['id']}/anthropic/v1/messages",
                json={k: v for k, v in kwargs.items() if k != "extra_body"},
            )
            assert r.status_code == 200, r.text
            served = r.json()
            assert served["content"] == got["content"]
            assert served["stop_reason"] == got["stop_reason"]
            for key in ANSWER_FIELDS:
                assert served.get(key) == got.get(key)


def test_the_openai_proxy_keeps_every_shape(tmp_path: Path) -> None:
    rng = rng_for("openai")
    store = tmp_path / "store"
    message_fields: dict[str, Any] = {
        "refusal": "I can't help with that.",
        "annotations": [{"type": "url_citation", "url_citation": {
            "url": "https://w.example", "title": "W", "start_index": 0, "end_index": 5}}],
        "audio": {"id": "audio_1", "data": "UklGRg==", "transcript": "hi", "expires_at": 1},
    }  # fmt: skip
    parts: list[dict[str, Any]] = [
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo=",
                                            "detail": "low"}},
        {"type": "input_audio", "input_audio": {"data": "UklGRg==", "format": "wav"}},
        {"type": "file", "file": {"file_data": "JVBERi0=", "filename": "f.pdf"}},
    ]  # fmt: skip
    bodies = []
    with FakeOpenAIServer() as fake, regista_server(store, openai=fake.url) as server:
        client = openai.OpenAI(api_key="k", base_url=f"{server.url}/v1/record/openai")
        for case in range(CASES):
            fake.script(
                {
                    "content": rng.choice([None, "Sunny."]),
                    "message": _fields(rng, message_fields),
                    "finish_reason": rng.choice(["stop", "length", "content_filter"]),
                    "extra": {"service_tier": "default", "a_field_from_2027": [1]},
                }
            )
            body: dict[str, Any] = dict(
                model="gpt-4o",
                messages=[{"role": "user", "name": "ann", "content": [
                    {"type": "text", "text": f"case {case}"}, *rng.sample(parts, 2)]},
                    {"role": "assistant", "content": None, "refusal": "No.",
                     "audio": {"id": "audio_0"}},
                    {"role": "user", "content": "Please?"}],
                tools=[{"type": "function", "function": {"name": "f", "parameters": {},
                                                         "strict": True}},
                       {"type": "custom", "custom": {"name": "grep", "description": "g"}}],
                extra_body=_fields(rng, {"modalities": ["text", "audio"],
                                         "audio": {"voice": "alloy", "format": "wav"},
                                         "web_search_options": {}, "prediction": None}),
            )  # fmt: skip
            got = client.chat.completions.create(**body).to_dict()
            bodies.append((body, got))
        server.record_done()
    paths = sorted(store.glob("*.jsonl"))
    assert len(paths) == CASES
    with regista_server(store) as server:
        for path in paths:
            trace = _reads_back(path)
            ((request, _),) = trace.llm_calls()
            case = int(request.messages[0]["content"][0]["text"].split()[1])
            body, got = bodies[case]
            assert request.messages[0]["openai"] == {"name": "ann"}
            assert [t["name"] for t in request.tools] == ["f", "grep"]
            assert [t["openai"] for t in request.tools] == body["tools"]
            assert request.messages[1]["openai"] == {"refusal": "No.", "audio": {"id": "audio_0"}}
            rp = new_replay(server, trace.session_id)
            r = server.http.post(
                f"/v1/replays/{rp['id']}/openai/v1/chat/completions",
                json={k: v for k, v in body.items() if k != "extra_body"},
            )
            assert r.status_code == 200, r.text
            served = r.json()
            assert served["choices"][0]["message"] == got["choices"][0]["message"]
            assert served["choices"][0]["finish_reason"] == got["choices"][0]["finish_reason"]
            assert served["a_field_from_2027"] == [1]


def test_the_claude_code_importer_keeps_every_shape(tmp_path: Path) -> None:
    rng = rng_for("claude-code")
    for case in range(CASES):
        s = CCSession()
        s.prompt("Look it up")
        s._envelope("user", message={"role": "user", "content": _some(rng, USER_BLOCKS)})
        blocks = _some(rng, ANSWER_BLOCKS)
        s.answer(*blocks, tool_use("toolu_01A", "Bash", command="ls"), usage=dict(USAGE))
        s.tool_result("toolu_01A", [text("a.txt"), USER_BLOCKS[0]])
        s.answer(*_some(rng, ANSWER_BLOCKS), stop_reason=rng.choice(STOP_REASONS))
        source = s.write(tmp_path / str(case) / "s.jsonl")
        (path,) = write_runs(convert("claude-code", source), tmp_path / str(case) / "t")
        trace = _reads_back(path)
        answers = [r.content for _, r in trace.llm_calls()]
        assert answers[0][: len(blocks)] == blocks
        _replays_loose(path, "anthropic")


def test_the_codex_importer_keeps_every_shape(tmp_path: Path) -> None:
    rng = rng_for("codex")
    items: list[dict[str, Any]] = [
        {"type": "image_generation_call", "id": "ig_1", "status": "completed", "result": "iVBO"},
        {"type": "local_shell_call", "call_id": "call_L", "status": "completed",
         "action": {"type": "exec", "command": ["ls"]}},
        {"type": "web_search_call", "status": "completed",
         "action": {"type": "search", "query": "weather"}},
        {"type": "message", "role": "user", "content": [
            {"type": "input_image", "image_url": "data:image/png;base64,iVBORw0KGgo="}]},
        {"type": "a_kind_from_2027", "payload": {"x": 1}},
    ]  # fmt: skip
    for case in range(CASES):
        r = basic_rollout()
        at = rng.randint(5, len(r.lines) - 1)
        for item in rng.sample(items, rng.randint(1, len(items))):
            r.lines.insert(at, {"timestamp": r.lines[at]["timestamp"], "type": "response_item",
                                "payload": item})  # fmt: skip
        source = r.write(tmp_path / str(case) / "rollout-2026-02-11T08-27-22-019b.jsonl")
        (path,) = write_runs(convert("codex", source), tmp_path / str(case) / "t")
        _reads_back(path)
        _replays_loose(path, "openai")


def _replays_loose(path: Path, provider: str) -> None:
    """Every recorded answer is served (an imported run replays loose)."""
    trace = Trace.load(path)
    with regista_server(path.parent) as server:
        rp = new_replay(server, trace.session_id)
        route = "anthropic/v1/messages" if provider == "anthropic" else "openai/v1/chat/completions"
        for request, _ in trace.llm_calls():
            body = {"model": "m", "max_tokens": 64, "messages": request.messages or
                    [{"role": "user", "content": "x"}]}  # fmt: skip
            r = server.http.post(f"/v1/replays/{rp['id']}/{route}", content=orjson.dumps(body))
            assert r.status_code == 200, r.text
            json.loads(r.text)


def test_a_shape_the_reader_refuses_is_refused_when_written(tmp_path: Path) -> None:
    """Each entry point writes through the trace writer, which asks the reader's own check:
    a value the reader would refuse is one clear error when written, and the trace keeps
    what was written before it."""
    path = tmp_path / "t.jsonl"
    rec = TraceRecorder.create(path, "01JBADSHAPE000000000000000")
    rec.start(task="t", model="m", provider="scripted")
    bad_request = LlmRequest(model="m", messages=[{"role": "user", "content": [{"text": "x"}]}])
    with pytest.raises(TraceWriteError, match=r"messages\[0\]\.content\[0\]\.type"):
        rec.request(bad_request)
    step = rec.request(LlmRequest(model="m", messages=[{"role": "user", "content": "x"}]))
    bad = LlmResponse.model_construct(content=[{"type": "tool_use", "id": 7}])
    with pytest.raises(TraceWriteError, match=r"response\.content\[0\]\.id: expected a string"):
        rec.response(step, bad, provider="scripted")
    with pytest.raises(TraceWriteError, match=r"content\[0\]\.type: expected a string"):
        rec.tool_result(0, "t", "f", [{"type": 5}])
    rec.response(step, LlmResponse(content=[{"type": "text", "text": "ok"}]), provider="x")
    rec.end("end_turn")
    assert len(Trace.load(path).steps()) == 1
