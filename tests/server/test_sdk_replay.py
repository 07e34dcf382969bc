"""Record a plain SDK agent through the proxy, then replay it through the real SDKs."""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import Callable
from pathlib import Path

import anthropic
import openai
import pytest
from fakes.anthropic_server import FakeAnthropicServer
from fakes.openai_server import FakeOpenAIServer
from sdk_agents import (
    anthropic_agent,
    anthropic_agent_async,
    new_replay,
    openai_agent,
    regista_server,
)

from regista.trace.reader import Trace

ANSWERS = (
    {"content": [{"type": "tool_use", "id": "toolu_1", "name": "get_weather",
                  "input": {"city": "Paris"}}]},
    {"content": [{"type": "text", "text": "It is sunny in Paris, enjoy the walk by the Seine."}]},
)  # fmt: skip
OPENAI_ANSWERS = (
    {"tool_calls": [{"id": "call_1", "name": "get_weather", "arguments": '{"city":  "Paris"}'}]},
    {"content": "It is sunny in Paris, enjoy the walk by the Seine."},
)


_RECORDINGS: dict[tuple[str, bool], tuple[Path, str]] = {}


def _cached(
    kind: str, stream: bool, tmp_path: Path, record: Callable[[Path, bool], tuple[Path, str]]
) -> tuple[Path, str]:
    """A recording made once per process, copied into this test's own store."""
    key = (kind, stream)
    if key not in _RECORDINGS:
        _RECORDINGS[key] = record(tmp_path / "origin", stream)
    origin, output = _RECORDINGS[key]
    store = tmp_path / "store"
    shutil.copytree(origin, store)
    return store, output


def _record_anthropic(tmp_path: Path, stream: bool = False) -> tuple[Path, str]:
    return _cached("anthropic", stream, tmp_path, _record_anthropic_now)


def _record_anthropic_now(tmp_path: Path, stream: bool) -> tuple[Path, str]:
    store = tmp_path / "store"
    with FakeAnthropicServer() as fake, regista_server(store, anthropic=fake.url) as server:
        fake.script(*ANSWERS)
        client = anthropic.Anthropic(
            api_key="sk-ant-secret-123", base_url=f"{server.url}/v1/record/anthropic"
        )
        out = anthropic_agent(client, stream=stream)
        server.record_done()
        assert len(fake.requests) == 2
        headers = fake.requests[0].headers
        assert "sk-ant-secret-123" in headers.get("x-api-key", headers.get("authorization", ""))
    (trace,) = store.glob("*.jsonl")
    assert "sk-ant-secret-123" not in trace.read_text()
    return store, out


def test_record_then_replay_anthropic_sends_nothing_upstream(tmp_path: Path) -> None:
    store, recorded = _record_anthropic(tmp_path)
    (path,) = store.glob("*.jsonl")
    trace = Trace.load(path)
    assert [s.kind for s in trace.steps()] == ["model", "tool", "model"]
    assert trace.end is not None and trace.end.stop_reason == "end_turn"
    with FakeAnthropicServer() as fake, regista_server(store, anthropic=fake.url) as server:
        rp = new_replay(server, trace.session_id)
        client = anthropic.Anthropic(api_key="unused", base_url=rp["anthropic_base_url"])
        assert anthropic_agent(client) == recorded
        # the streaming helper reassembles the very message that was recorded
        rp2 = new_replay(server, trace.session_id)
        client2 = anthropic.Anthropic(api_key="unused", base_url=rp2["anthropic_base_url"])
        assert anthropic_agent(client2, stream=True) == recorded
        assert fake.requests == []
        status = server.http.get(f"/v1/replays/{rp['id']}").json()
        assert status["served"] == 2 and status["matched"] == 2


def test_streamed_message_equals_the_recording(tmp_path: Path) -> None:
    store, _ = _record_anthropic(tmp_path, stream=True)
    (path,) = store.glob("*.jsonl")
    trace = Trace.load(path)
    recorded = trace.llm_calls()[0][1].payload()
    with regista_server(store) as server:
        rp = new_replay(server, trace.session_id)
        client = anthropic.Anthropic(api_key="unused", base_url=rp["anthropic_base_url"])
        with client.messages.stream(
            model="claude-sonnet-4-6",
            max_tokens=512,
            system="You are a weather bot.",
            messages=[{"role": "user", "content": "Weather in Paris?"}],
        ) as s:
            final = s.get_final_message()
    assert [b.model_dump(exclude_none=True) for b in final.content] == recorded["content"]
    assert (final.id, final.model, final.stop_reason, final.stop_sequence) == (
        recorded["id"],
        recorded["model"],
        recorded["stop_reason"],
        recorded["stop_sequence"],
    )
    assert final.usage.input_tokens == recorded["usage"]["input_tokens"]
    assert final.usage.output_tokens == recorded["usage"]["output_tokens"]


def test_changed_prompt_is_a_409_conflict_with_digests_and_diff(tmp_path: Path) -> None:
    store, _ = _record_anthropic(tmp_path)
    (path,) = store.glob("*.jsonl")
    run = path.stem
    with regista_server(store) as server:
        rp = new_replay(server, run)
        client = anthropic.Anthropic(api_key="unused", base_url=rp["anthropic_base_url"])
        with pytest.raises(anthropic.ConflictError) as info:
            anthropic_agent(client, system="You are a grumpy weather bot.")
        err = info.value.body["error"]  # type: ignore[index]
        assert err["type"] == "replay_divergence" and err["step"] == 0
        assert err["expected_digest"] != err["got_digest"]
        assert err["diff"][0].startswith("system: recorded 'You are a")
        assert info.value.response.headers["x-should-retry"] == "false"
        status = server.http.get(f"/v1/replays/{rp['id']}").json()
        assert status["requests"] == 1 and status["served"] == 0  # no retry, not consumed
        # the step was not consumed: the right request is still served
        assert anthropic_agent(client).startswith("It is sunny")


def test_loose_mode_serves_in_order_and_counts_matches(tmp_path: Path) -> None:
    store, recorded = _record_anthropic(tmp_path)
    (path,) = store.glob("*.jsonl")
    with regista_server(store) as server:
        rp = new_replay(server, path.stem, mode="loose")
        client = anthropic.Anthropic(api_key="unused", base_url=rp["anthropic_base_url"])
        assert anthropic_agent(client, system="Something else") == recorded
        status = server.http.get(f"/v1/replays/{rp['id']}").json()
        assert status["served"] == 2 and status["matched"] == 0
        assert status["divergence"]["step"] == 0
        assert new_replay(server, path.stem, mode="warn")["id"]  # the harness's name


def test_async_client_and_twenty_concurrent_replays(tmp_path: Path) -> None:
    store, recorded = _record_anthropic(tmp_path)
    (path,) = store.glob("*.jsonl")
    with regista_server(store) as server:
        replays = [new_replay(server, path.stem) for _ in range(20)]

        async def main() -> list[str]:
            clients = [
                anthropic.AsyncAnthropic(api_key="unused", base_url=rp["anthropic_base_url"])
                for rp in replays
            ]
            return await asyncio.gather(*(anthropic_agent_async(c) for c in clients))

        assert asyncio.run(main()) == [recorded] * 20


def _record_openai(tmp_path: Path, stream: bool) -> tuple[Path, str]:
    return _cached("openai", stream, tmp_path, _record_openai_now)


def _record_openai_now(tmp_path: Path, stream: bool) -> tuple[Path, str]:
    store = tmp_path / "store"
    with FakeOpenAIServer() as fake, regista_server(store, openai=fake.url) as server:
        fake.script(*OPENAI_ANSWERS)
        client = openai.OpenAI(
            api_key="sk-openai-secret", base_url=f"{server.url}/v1/record/openai"
        )
        out = openai_agent(client, stream=stream)
        server.record_done()
        assert len(fake.requests) == 2
        assert fake.requests[0].headers["authorization"] == "Bearer sk-openai-secret"
    (trace,) = store.glob("*.jsonl")
    assert "sk-openai-secret" not in trace.read_text()
    return store, out


@pytest.mark.parametrize("stream", [False, True])
def test_openai_record_then_replay(tmp_path: Path, stream: bool) -> None:
    store, recorded = _record_openai(tmp_path, stream)
    (path,) = store.glob("*.jsonl")
    trace = Trace.load(path)
    assert [s.kind for s in trace.steps()] == ["model", "tool", "model"]
    first = trace.llm_calls()[0][1]
    assert first.tool_uses[0]["input"] == {"city": "Paris"}
    with FakeOpenAIServer() as fake, regista_server(store, openai=fake.url) as server:
        rp = new_replay(server, trace.session_id)
        client = openai.OpenAI(api_key="unused", base_url=rp["openai_base_url"])
        assert openai_agent(client, stream=stream) == recorded
        rp2 = new_replay(server, trace.session_id)
        client2 = openai.OpenAI(api_key="unused", base_url=rp2["openai_base_url"])
        resp = client2.chat.completions.create(
            model="gpt-4o",
            messages=[
                {"role": "system", "content": "You are a weather bot."},
                {"role": "user", "content": "Weather in Paris?"},
            ],
        )
        # the recorded body comes back exactly: ids, raw argument string, finish reason, usage
        call = resp.choices[0].message.tool_calls[0]  # type: ignore[index]
        assert call.id == "call_1" and call.function.arguments == '{"city":  "Paris"}'  # type: ignore[union-attr]
        assert resp.id == "chatcmpl-fake0001" and resp.system_fingerprint == "fp_fake"
        assert resp.choices[0].finish_reason == "tool_calls"
        assert resp.usage is not None and resp.usage.prompt_tokens == 12
        assert fake.requests == []


def test_openai_conflict_and_unsupported_endpoints(tmp_path: Path) -> None:
    store, _ = _record_openai(tmp_path, False)
    (path,) = store.glob("*.jsonl")
    with regista_server(store) as server:
        rp = new_replay(server, path.stem)
        client = openai.OpenAI(api_key="unused", base_url=rp["openai_base_url"], max_retries=3)
        with pytest.raises(openai.ConflictError) as info:
            openai_agent(client, task="Weather in Rome?")
        body = info.value.body
        assert isinstance(body, dict) and body["type"] == "replay_divergence"
        assert server.http.get(f"/v1/replays/{rp['id']}").json()["requests"] == 1
        with pytest.raises(openai.BadRequestError, match="chat/completions"):
            client.embeddings.create(model="text-embedding-3-small", input="x")
        with pytest.raises(openai.ConflictError, match="diverged at step 0"):
            client.responses.create(model="gpt-4o", input="x")  # served, not refused
        aclient = anthropic.Anthropic(api_key="unused", base_url=rp["anthropic_base_url"])
        with pytest.raises(anthropic.BadRequestError, match="v1/messages"):
            aclient.models.list()
        # a token count is answered (see test_record_claude_code_shapes.py)
        counted = aclient.messages.count_tokens(
            model="claude-sonnet-4-6", messages=[{"role": "user", "content": "x"}]
        )
        assert counted.input_tokens > 0


def test_openai_async_client_replays(tmp_path: Path) -> None:
    store, recorded = _record_openai(tmp_path, False)
    (path,) = store.glob("*.jsonl")
    with regista_server(store) as server:
        rp = new_replay(server, path.stem)

        async def main() -> str:
            client = openai.AsyncOpenAI(api_key="unused", base_url=rp["openai_base_url"])
            first = await client.chat.completions.create(
                model="gpt-4o",
                messages=[
                    {"role": "system", "content": "You are a weather bot."},
                    {"role": "user", "content": "Weather in Paris?"},
                ],
            )
            call = first.choices[0].message.tool_calls[0]  # type: ignore[index]
            second = await client.chat.completions.create(
                model="gpt-4o",
                messages=[
                    {"role": "system", "content": "You are a weather bot."},
                    {"role": "user", "content": "Weather in Paris?"},
                    {"role": "assistant", "content": None,
                     "tool_calls": [call.model_dump()]},  # type: ignore[list-item]
                    {"role": "tool", "tool_call_id": call.id, "content": "sunny in Paris"},
                ],
            )  # fmt: skip
            return second.choices[0].message.content or ""

        assert asyncio.run(main()) == recorded


@pytest.mark.parametrize("kind", ["anthropic", "openai"])
def test_sdk_traces_replay_in_the_harness_too(
    tmp_path: Path, kind: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from regista.cli.main import main

    if kind == "anthropic":
        store, recorded = _record_anthropic(tmp_path)
    else:
        store, recorded = _record_openai(tmp_path, False)
    (path,) = store.glob("*.jsonl")
    code = main(["replay", str(path), "--trace-dir", str(tmp_path / "replays")])
    out = capsys.readouterr()
    assert code == 0, out.err
    assert f"output: {recorded}" in out.out


def test_model_tools_and_sampling_are_not_part_of_the_strict_digest(tmp_path: Path) -> None:
    """Only the system prompt and messages are compared: another model name, other tools
    and other sampling parameters still match step 0."""
    store, _ = _record_anthropic(tmp_path)
    (path,) = store.glob("*.jsonl")
    with regista_server(store) as server:
        rp = new_replay(server, path.stem)
        client = anthropic.Anthropic(api_key="unused", base_url=rp["anthropic_base_url"])
        client.messages.create(
            model="claude-opus-4-1",
            max_tokens=7,
            extra_body={"temperature": 0.1, "top_p": 0.5},
            system="You are a weather bot.",
            tools=[{"name": "other", "description": "x", "input_schema": {"type": "object"}}],
            messages=[{"role": "user", "content": "Weather in Paris?"}],
        )
        status = server.http.get(f"/v1/replays/{rp['id']}").json()
        assert status["served"] == 1 and status["matched"] == 1
