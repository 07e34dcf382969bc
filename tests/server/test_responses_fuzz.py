"""Seeded fuzz of the Responses API's edge: the request / response normaliser, the body and
stream served back, and HTTP bodies to the Responses routes (record and replay).

Whatever a client sends, the normaliser gives a request the trace reader accepts or one 400;
a recording always reads back; a replay's answer streams to what it was built from.
``REGISTA_FUZZ_SEED`` picks the seed and ``REGISTA_FUZZ_CASES`` the number of cases.
"""

from __future__ import annotations

import copy
import os
import random
from pathlib import Path
from typing import Any

import openai
import orjson
from fakes.responses_server import FakeResponsesServer
from files import found
from responses_agent import responses_agent
from sdk_agents import new_replay, regista_server
from test_server_fuzz import _body, _value

from regista.server.record import book
from regista.trace.reader import Trace
from regista.trace.validate import check_messages, check_response
from regista.wire.errors import HttpError
from regista.wire.openai_responses import (
    ResponsesStream,
    input_items,
    responses_body,
    responses_events,
    responses_request,
    responses_response,
)
from regista.wire.sessions import SessionBook

SEED = int(os.environ.get("REGISTA_FUZZ_SEED", "2424"))
CASES = int(os.environ.get("REGISTA_FUZZ_CASES", "60"))

#: Input items of every kind the API accepts (and Codex sends).
ITEMS: list[Any] = [
    {"role": "user", "content": "Weather in Paris?"},
    {"type": "message", "role": "developer",
     "content": [{"type": "input_text", "text": "Be brief."}]},
    {"type": "message", "role": "system", "content": "You are a bot."},
    {"type": "message", "role": "user", "content": [
        {"type": "input_text", "text": "look"},
        {"type": "input_image", "image_url": "https://x/y.png", "detail": "auto"},
        {"type": "input_file", "file_id": "file_1"}]},
    {"type": "message", "role": "assistant", "id": "msg_1", "status": "completed",
     "phase": "commentary",
     "content": [{"type": "output_text", "text": "ok", "annotations": []},
                 {"type": "refusal", "refusal": "no"}]},
    {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "hm"}],
     "encrypted_content": "gAAA"},
    {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "get_weather",
     "arguments": '{"city": "Paris"}', "status": "completed"},
    {"type": "function_call", "call_id": "call_2", "name": "f", "arguments": "not json"},
    {"type": "function_call_output", "call_id": "call_1", "output": "sunny"},
    {"type": "function_call_output", "call_id": "call_2",
     "output": [{"type": "input_text", "text": "x"}]},
    {"type": "custom_tool_call", "call_id": "call_3", "name": "apply_patch", "input": "*** Begin"},
    {"type": "custom_tool_call_output", "call_id": "call_3", "output": "Done"},
    {"type": "local_shell_call", "id": "lsh_1", "call_id": "call_4", "status": "completed",
     "action": {"type": "exec", "command": ["ls"], "env": {}}},
    {"type": "local_shell_call_output", "id": "lsh_1", "call_id": "call_4", "output": "a\nb"},
    {"type": "web_search_call", "id": "ws_1", "status": "completed",
     "action": {"type": "search", "query": "weather"}},
    {"type": "item_reference", "id": "msg_0"},
    {"type": "compaction", "encrypted_content": "zzz"},
    {"type": "shell_call", "call_id": "call_5", "action": {"commands": ["pwd"]}},
    {"type": "shell_call_output", "call_id": "call_5", "output": [{"stdout": "/", "stderr": ""}]},
]  # fmt: skip
TOOLS: list[Any] = [
    {"type": "function", "name": "get_weather", "parameters": {"type": "object"}, "strict": True},
    {"type": "custom", "name": "apply_patch", "format": {"type": "grammar", "syntax": "lark"}},
    {"type": "web_search"},
    {"type": "local_shell"},
    {"type": "mcp", "server_label": "x", "server_url": "https://x"},
]
CHOICES: list[Any] = [
    "auto",
    "none",
    "required",
    {"type": "function", "name": "get_weather"},
    {"type": "allowed_tools", "mode": "auto", "tools": []},
    {"type": "custom", "name": "apply_patch"},
    {"type": "web_search_preview"},
]
OUTPUT: list[Any] = [
    i for i in ITEMS if i.get("type") not in ("message",) or i.get("role") == "assistant"
]


def _mutate(rng: random.Random, value: Any) -> Any:
    """``value`` with one part, at any depth, replaced by a random value (or left whole)."""
    value = copy.deepcopy(value)
    if rng.random() < 0.4:
        return value
    node = value
    for _ in range(rng.randrange(1, 6)):
        if isinstance(node, dict) and node:
            key = rng.choice(list(node))
            if rng.random() < 0.35 or not isinstance(node[key], dict | list):
                node[key] = _value(rng)
                break
            node = node[key]
        elif isinstance(node, list) and node:
            i = rng.randrange(len(node))
            if rng.random() < 0.35 or not isinstance(node[i], dict | list):
                node[i] = _value(rng)
                break
            node = node[i]
        else:
            break
    return value


def request_body(rng: random.Random) -> dict[str, Any]:
    body: dict[str, Any] = {
        "model": "gpt-5",
        "input": [ITEMS[0], *rng.sample(ITEMS, rng.randrange(len(ITEMS)))],
        "instructions": rng.choice([None, "Be kind.", [{"role": "developer", "content": "x"}]]),
        "tools": rng.sample(TOOLS, rng.randrange(len(TOOLS) + 1)),
        "tool_choice": rng.choice(CHOICES),
        "reasoning": {"effort": "low", "summary": "auto"},
        "include": ["reasoning.encrypted_content"],
        "store": rng.choice([True, False]),
        "stream": rng.choice([True, False]),
        "text": {"verbosity": "low"},
        "client_metadata": {"x": "y"},
    }
    if rng.random() < 0.2:
        body["input"] = "plain text"
    return _mutate(rng, body)  # type: ignore[no-any-return]


def response_body(rng: random.Random) -> dict[str, Any]:
    server = FakeResponsesServer()
    output = rng.sample(OUTPUT, rng.randrange(len(OUTPUT) + 1))
    body = server.response({"output": output, "text": "hi"}, {"model": "gpt-5"})
    return _mutate(rng, body)  # type: ignore[no-any-return]


def test_normalised_requests_and_responses_read_back(tmp_path: Path) -> None:
    rng = random.Random(SEED)
    book = SessionBook(tmp_path)
    written = 0
    for n in range(CASES * 4):
        body = request_body(rng)
        where = f"seed {SEED}, case {n}: {orjson.dumps(body)[:300]!r}"
        try:
            request = responses_request(body)
        except HttpError as exc:
            assert exc.status == 400, where
            continue
        check_messages(request.messages)
        # sent whole to a live provider (a chained call of a fork): items that read back
        again = responses_request({"input": input_items(request.messages)})
        assert len(again.messages) == len(request.messages), where
        assert request.tool_choice is None or isinstance(request.tool_choice.get("type"), str)
        answer = response_body(rng)
        try:
            response = responses_response(answer)
        except ValueError:
            continue
        check_response(response.payload())
        # served back: the recorded body itself, and a stream that adds up to it
        served = responses_body(response, body)
        assert served == answer, where
        acc = ResponsesStream()
        for event in responses_events(served):
            acc.feed(event)
        assert acc.done and acc.result() == served, where
        # and built from the Messages shape when there is no recorded body
        plain = response.model_copy(update={"openai_responses": None})
        rebuilt = responses_body(plain, body)
        assert isinstance(rebuilt["output"], list), where
        book.record("openai", request, response, api="openai-responses")
        written += 1
    book.close()
    assert written > CASES  # most cases are well-formed enough to be recorded
    for path in found(tmp_path):
        Trace.load(path)  # the reader's own check: every recording reads back


def test_fuzzed_bodies_to_the_responses_routes(tmp_path: Path) -> None:
    rng = random.Random(SEED + 1)
    store = tmp_path / "store"
    with FakeResponsesServer() as fake:
        fake.answer_with(lambda body: {"text": "fine"})
        with regista_server(store, openai=fake.url) as server:
            client = openai.OpenAI(
                api_key="k", base_url=f"{server.url}/v1/record/openai", max_retries=0
            )
            responses_agent(client)
            assert book(server.app.state.ctx).wait_written()  # written after the answer
            rid = new_replay(server, next(store.glob("*.jsonl")).stem, mode="loose")["id"]
            routes = [f"/v1/replays/{rid}/openai/v1/responses", "/v1/record/openai/responses"]
            for route in routes:
                for n in range(CASES // 2):
                    raw = orjson.dumps(request_body(rng)) if n % 2 else _body(rng, "x")
                    r = server.http.post(route, content=raw)
                    where = f"seed {SEED + 1}, {route}, case {n}: {raw[:200]!r}"
                    assert r.status_code < 500, where
                    assert "Traceback" not in r.text, where
                    if r.status_code >= 400:
                        assert isinstance(r.json(), dict), where
            server.record_done()
    for path in found(store):
        Trace.load(path)  # whatever the proxy recorded reads back


def test_a_cut_or_damaged_stream_never_breaks_the_recorder() -> None:
    rng = random.Random(SEED + 2)
    for n in range(CASES):
        body = response_body(rng)
        raw = b"".join(responses_events(body))
        cut = raw[: rng.randrange(len(raw) + 1)]
        if rng.random() < 0.5 and cut:
            i = rng.randrange(len(cut))
            cut = cut[:i] + bytes([rng.randrange(256)]) + cut[i + 1 :]
        acc = ResponsesStream()
        at = 0
        while at < len(cut):  # fed in pieces, as a network delivers them
            step = rng.randrange(1, 200)
            acc.feed(cut[at : at + step])
            at += step
        result = acc.result()
        assert result is None or isinstance(result, dict), f"seed {SEED + 2}, case {n}"
        if cut == raw:
            assert acc.complete and result == body, f"seed {SEED + 2}, case {n}"
