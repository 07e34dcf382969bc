"""Seeded fuzz of the server's HTTP bodies: whatever arrives, the answer is JSON with a
4xx status (or a served replay), never a 500 or a traceback.

``REGISTA_FUZZ_SEED`` picks the seed and ``REGISTA_FUZZ_CASES`` the number of bodies per
route (default 60, a few seconds)."""

from __future__ import annotations

import os
import random
from pathlib import Path
from typing import Any

import anthropic
import orjson
import pytest
from fakes.anthropic_server import FakeAnthropicServer
from sdk_agents import anthropic_agent, new_replay, regista_server

SEED = int(os.environ.get("REGISTA_FUZZ_SEED", "1414"))
CASES = int(os.environ.get("REGISTA_FUZZ_CASES", "60"))

_WORDS = ["messages", "role", "user", "assistant", "tool", "content", "type", "text",
          "tool_use", "tool_result", "system", "model", "stream", "tool_calls", "function",
          "arguments", "run", "mode", "edits", "step", "answer", "live_after", "live",
          "stream_options", "include_usage", "id", "input", "\u00e9\u0000", "../",
          "resourceSpans", "scopeSpans", "spans", "traceId", "spanId", "parentSpanId",
          "attributes", "key", "value", "stringValue", "intValue", "startTimeUnixNano",
          "gen_ai.operation.name", "chat", "gen_ai.prompt.0.content"]  # fmt: skip


def _value(rng: random.Random, depth: int = 0) -> Any:
    kind = rng.randrange(9 if depth < 4 else 5)
    if kind == 0:
        return rng.choice(_WORDS)
    if kind == 1:
        return rng.randint(-(2**40), 2**40)
    if kind == 2:
        return rng.choice([None, True, False, 0.5, float(rng.randint(-9, 9))])
    if kind == 3:
        return "".join(chr(rng.randrange(1, 0x2FFF)) for _ in range(rng.randrange(12)))
    if kind == 4:
        return ""
    if kind in (5, 6):
        return {rng.choice(_WORDS): _value(rng, depth + 1) for _ in range(rng.randrange(5))}
    return [_value(rng, depth + 1) for _ in range(rng.randrange(4))]


def _body(rng: random.Random, run: str) -> bytes:
    choice = rng.randrange(6)
    if choice == 0:
        return bytes(rng.randrange(256) for _ in range(rng.randrange(40)))
    if choice == 1:  # nearly valid: a real-looking request with one part scrambled
        body: dict[str, Any] = {
            "model": "m",
            "max_tokens": 5,
            "messages": [{"role": "user", "content": "Weather in Paris?"}],
            "run": run,
        }
        body[rng.choice(list(body))] = _value(rng)
        return orjson.dumps(body)
    value = _value(rng)
    if isinstance(value, dict) and rng.random() < 0.5:
        value["run"] = run
    try:
        raw = orjson.dumps(value)
    except TypeError:
        raw = b"{}"
    return raw[: rng.randrange(len(raw) + 1)] if choice == 2 else raw


def _otlp_body(rng: random.Random) -> bytes:
    """A real-looking OTLP JSON export with one part, at any depth, replaced."""
    attr = {"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}}
    span = {"traceId": "0af7651916cd43dd8448eb211c80319c", "spanId": "b7ad6b7169203331",
            "name": "chat m", "startTimeUnixNano": "1700000000000000000",
            "endTimeUnixNano": "1700000001000000000",
            "attributes": [attr, {"key": "gen_ai.prompt.0.content",
                                  "value": {"stringValue": "hi"}}]}  # fmt: skip
    body: Any = {"resourceSpans": [{"resource": {"attributes": []},
                                    "scopeSpans": [{"scope": {}, "spans": [span]}]}]}  # fmt: skip
    node = body
    for _ in range(rng.randrange(1, 9)):  # walk down, then replace what is there
        if isinstance(node, dict) and node:
            key = rng.choice(list(node))
            if rng.random() < 0.3 or not isinstance(node[key], dict | list):
                node[key] = _value(rng)
                break
            node = node[key]
        elif isinstance(node, list) and node:
            i = rng.randrange(len(node))
            if rng.random() < 0.3 or not isinstance(node[i], dict | list):
                node[i] = _value(rng)
                break
            node = node[i]
        else:
            break
    return orjson.dumps(body)


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    store = tmp_path_factory.mktemp("fuzz")
    with FakeAnthropicServer() as fake, regista_server(store, anthropic=fake.url) as server:
        fake.script(
            {"content": [{"type": "tool_use", "id": "t1", "name": "get_weather",
                          "input": {"city": "Paris"}}]},
            {"content": [{"type": "text", "text": "sunny"}]},
        )  # fmt: skip
        anthropic_agent(
            anthropic.Anthropic(api_key="k", base_url=f"{server.url}/v1/record/anthropic")
        )
        server.record_done()
    (path,) = store.glob("*.jsonl")
    return path


def test_fuzzed_bodies_never_break_the_server(recorded: Path) -> None:
    rng = random.Random(SEED)
    with regista_server(recorded.parent) as server:
        rid = new_replay(server, recorded.stem, mode="loose")["id"]
        routes = [
            "/v1/replays",
            f"/v1/replays/{rid}/anthropic/v1/messages",
            f"/v1/replays/{rid}/anthropic/v1/messages/count_tokens",
            f"/v1/replays/{rid}/openai/v1/chat/completions",
            "/v1/record/anthropic/v1/count_tokens?x=1",
            "/v1/traces",
        ]
        for route in routes:
            for n in range(CASES):
                body = _body(rng, recorded.stem)
                r = server.http.post(route, content=body)
                where = f"seed {SEED}, {route}, case {n}: {body[:200]!r}"
                assert r.status_code < 500 or (
                    route.startswith("/v1/record") and r.status_code == 502
                ), where
                assert "Traceback" not in r.text, where
                if r.status_code >= 400:
                    assert isinstance(r.json(), dict), where
        for n in range(CASES):  # the OTLP receiver: nearly valid JSON exports
            body = _otlp_body(rng)
            r = server.http.post(
                "/v1/traces", content=body, headers={"content-type": "application/json"}
            )
            assert r.status_code in (200, 400), f"seed {SEED}, otlp case {n}: {body[:300]!r}"
        for n in range(CASES):  # the OTLP receiver's protobuf side
            body = _body(rng, recorded.stem)
            r = server.http.post(
                "/v1/traces", content=body, headers={"content-type": "application/x-protobuf"}
            )
            assert r.status_code in (200, 400), f"seed {SEED}, protobuf case {n}: {body[:200]!r}"


def _tool_result_body(rng: random.Random, provider: str) -> dict[str, Any]:
    """A request that answers the recorded tool call, its tool result's fields fuzzed."""
    if provider == "openai":
        result: dict[str, Any] = {"role": "tool", "tool_call_id": "t1", "content": "sunny"}
        call = {"id": "t1", "type": "function",
                "function": {"name": "get_weather", "arguments": "{}"}}  # fmt: skip
        turns = [{"role": "assistant", "content": None, "tool_calls": [call]}, result]
    else:
        result = {"type": "tool_result", "tool_use_id": "t1", "content": "sunny"}
        use = {"type": "tool_use", "id": "t1", "name": "get_weather", "input": {}}
        turns = [{"role": "assistant", "content": [use]}, {"role": "user", "content": [result]}]
    for _ in range(rng.randrange(1, 3)):
        result[rng.choice([*result, "is_error"])] = _value(rng)
    messages = [{"role": "user", "content": "Weather in Paris?"}, *turns]
    return {"model": "m", "max_tokens": 5, "messages": messages}


def test_fuzzed_tool_results_never_break_a_fork_with_an_edited_one(recorded: Path) -> None:
    """A fork puts its edit in place of the agent's tool result in every request: whatever
    that result holds (an id that is a list, content of any shape), a 4xx, never a 500."""
    rng = random.Random(SEED)
    with regista_server(recorded.parent) as server:
        for n in range(CASES):
            provider = rng.choice(["anthropic", "openai"])
            edit = {"step": 1, "tool_result": "rainy", "is_error": rng.random() < 0.5}
            rp = new_replay(server, recorded.stem, edits=[edit], live="signal")
            route = (
                f"/v1/replays/{rp['id']}/anthropic/v1/messages"
                if provider == "anthropic"
                else f"/v1/replays/{rp['id']}/openai/v1/chat/completions"
            )
            body = _tool_result_body(rng, provider)
            r = server.http.post(route, content=orjson.dumps(body))
            where = f"seed {SEED}, case {n}: {orjson.dumps(body)[:300]!r}"
            assert r.status_code < 500, where
            assert "Traceback" not in r.text, where


def test_fuzzed_fork_models_are_a_name_or_a_400(recorded: Path) -> None:
    """``"model"`` of a fork (seeded): any JSON value, and names with odd characters, is
    taken as the fork's model (its ``forked_from.model``) when it is a name, else a 400
    with one message; never a 500."""
    rng = random.Random(SEED)
    names = ["claude-opus-4-1", "gpt-4.1", "m" * 256, "m" * 257, " m", "m\n", "\u00e9t\u00e9",
             "a/b:c@d", "\u0000", "\t"]  # fmt: skip
    with regista_server(recorded.parent) as server:
        for n in range(CASES):
            model = rng.choice(names) if rng.randrange(2) else _value(rng)
            spec = {"run": recorded.stem, "live_after": 0, "live": "proxy", "model": model}
            r = server.http.post("/v1/replays", content=orjson.dumps(spec))
            where = f"seed {SEED}, case {n}: {model!r}"
            valid = (
                isinstance(model, str)
                and model == model.strip()
                and model.isprintable()
                and 0 < len(model) <= 256
            )
            assert r.status_code == (201 if valid else 400), (where, r.text)
            if valid:
                status = server.http.get(f"/v1/replays/{r.json()['id']}").json()
                assert status["forked_from"]["model"] == model, where
                assert server.http.delete(f"/v1/replays/{r.json()['id']}").status_code == 204
            else:
                assert "'model'" in r.json()["error"]["message"], where


def _run_id(rng: random.Random, known: list[str]) -> str:
    """A run id near the known ones: cut, grown, cased, or with path syntax in it."""
    base = rng.choice(known)
    kind = rng.randrange(7)
    if kind == 0:
        return base[: rng.randrange(len(base) + 1)]
    if kind == 1:
        return base + rng.choice(["", ".jsonl", "x", "/", "%00", "\u00e9", " "])
    if kind == 2:
        return base.lower() if rng.random() < 0.5 else base.upper()
    if kind == 3:
        return rng.choice(["../", "..", "./", "/", "~/", "outside/"]) + base
    if kind == 4:
        return "".join(
            rng.choice(["a", ".", "/", "-", "_", "\\", "\u0000", "%2F"]) for _ in range(8)
        )
    if kind == 5:
        return base * rng.randrange(1, 30)
    return base


def test_fuzzed_run_ids_find_only_the_store_s_runs(recorded: Path, tmp_path: Path) -> None:
    """Ids near a renamed trace's, a symlinked outside trace's and path syntax: only the
    store's run is ever answered, by its id or its file name; the rest is a 4xx."""
    from urllib.parse import quote

    store, run_id = recorded.parent, recorded.stem
    renamed = recorded.rename(store / "renamed.jsonl")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.jsonl").write_text(renamed.read_text().replace(run_id, "secret-run"))
    (store / "link.jsonl").symlink_to(outside / "secret.jsonl")
    (store / "junk.jsonl").write_bytes(b"\xff\x00not json\n")
    found = {run_id, f"{run_id}.jsonl", "renamed", "renamed.jsonl"}
    known = [run_id, "renamed", "secret-run", "secret", "link", "junk", "outside/secret"]
    rng = random.Random(SEED)
    with regista_server(store) as server:
        for n in range(CASES * 2):
            bad = _run_id(rng, known)
            where = f"seed {SEED}, case {n}: {bad!r}"
            r = server.http.get(f"/v1/runs/{quote(bad, safe='')}")
            if r.status_code == 307:  # a trailing slash: the router points at the address without
                assert bad.endswith("/") or not bad, where
            elif bad in found:
                assert r.status_code == 200 and r.json()["session_id"] == run_id, where
            else:
                assert 400 <= r.status_code < 500, (where, r.status_code, r.text)
                assert "error" in r.json() and "step_kinds" not in r.json(), where
            r = server.http.post("/v1/replays", json={"run": bad})
            assert (r.status_code == 201) == (bad in found), (where, r.status_code, r.text)
            assert r.status_code < 500 and "Traceback" not in r.text, where
