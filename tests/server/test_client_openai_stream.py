"""``regista.client`` writes OpenAI's stream helper: ``chat.completions.stream(...)`` and its
``beta`` alias, sync and async, served from the replay and, past the cut, from a fake
provider through the real SDK; the fork's trace holds what the helper's final completion
held (tool-call ids and arguments, finish reason, usage)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import openai
import pytest
from fakes.openai_server import FakeOpenAIServer
from sdk_agents import TOOLS_OPENAI, get_weather, openai_agent, regista_server

from regista.client import ReplaySession
from regista.trace.reader import Trace

ANSWERS = (
    {"tool_calls": [{"id": "call_1", "name": "get_weather", "arguments": '{"city":  "Paris"}'}]},
    {"content": "It is sunny in Paris."},
)
SYSTEM = {"role": "system", "content": "You are a weather bot."}


@pytest.fixture(scope="module")
def parent(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An OpenAI session recorded through the proxy: a tool call, then the answer."""
    store = tmp_path_factory.mktemp("recording")
    with FakeOpenAIServer() as fake, regista_server(store, openai=fake.url) as server:
        fake.script(*ANSWERS)
        client = openai.OpenAI(api_key="k", base_url=f"{server.url}/v1/record/openai")
        assert openai_agent(client) == "It is sunny in Paris."
        server.record_done()
    (path,) = store.glob("*.jsonl")
    return path


def _after(messages: list[dict[str, Any]], message: Any) -> bool:
    """Append the answer (and its tool results) to ``messages``; whether it was the last."""
    calls = [
        {"id": tc.id, "type": "function",
         "function": {"name": tc.function.name, "arguments": tc.function.arguments}}
        for tc in message.tool_calls or []
    ]  # fmt: skip
    entry: dict[str, Any] = {"role": "assistant", "content": message.content}
    if calls:
        entry["tool_calls"] = calls
    messages.append(entry)
    for tc in calls:
        args = json.loads(tc["function"]["arguments"])
        messages.append({"role": "tool", "tool_call_id": tc["id"], "content": get_weather(**args)})
    return not calls


def stream_agent(client: Any, beta: bool) -> str:
    messages: list[dict[str, Any]] = [SYSTEM, {"role": "user", "content": "Weather in Paris?"}]
    chat = client.beta.chat if beta else client.chat
    for _ in range(5):
        with chat.completions.stream(
            model="gpt-4o",
            messages=messages,
            tools=TOOLS_OPENAI,
            stream_options={"include_usage": True},
        ) as stream:
            for _event in stream:  # read event by event, as a UI would
                pass
            final = stream.get_final_completion()
        if _after(messages, final.choices[0].message):
            return str(final.choices[0].message.content)
    raise AssertionError("the agent did not finish")


async def stream_agent_async(client: Any, beta: bool) -> str:
    messages: list[dict[str, Any]] = [SYSTEM, {"role": "user", "content": "Weather in Paris?"}]
    chat = client.beta.chat if beta else client.chat
    for _ in range(5):
        async with chat.completions.stream(
            model="gpt-4o",
            messages=messages,
            tools=TOOLS_OPENAI,
            stream_options={"include_usage": True},
        ) as stream:
            final = await stream.get_final_completion()
        if _after(messages, final.choices[0].message):
            return str(final.choices[0].message.content)
    raise AssertionError("the agent did not finish")


def _check_fork(paths: list[Path], parent: Path) -> None:
    (path,) = paths
    fork = Trace.load(path)
    assert fork.start is not None and fork.start.forked_from is not None
    assert fork.start.forked_from["session_id"] == parent.stem
    assert [e.source for e in fork.events if e.type == "llm.response"] == ["recorded", "live"]
    assert [s.kind for s in fork.steps()] == ["model", "tool", "model"]
    (_, recorded), (live_request, live) = fork.llm_calls()
    want = Trace.load(parent).llm_calls()[0][1]
    assert recorded.tool_uses == want.tool_uses  # the ids and the parsed arguments
    assert recorded.openai["arguments"] == ['{"city":  "Paris"}']  # the raw string, exactly
    assert recorded.openai["finish_reason"] == "tool_calls"
    assert recorded.usage == want.usage
    assert "parsed" not in recorded.openai["message"]  # the SDK's field, not the API's
    assert live.text == "Rainy, take an umbrella." and live.stop_reason == "end_turn"
    assert live.usage.input_tokens > 0  # the usage chunk
    # the model saw the edited tool result, and so does the trace
    result = live_request.messages[-1]["content"][0]
    assert result["content"] == [{"type": "text", "text": "rainy in Paris"}]
    assert fork.end is not None and fork.end.output == "Rainy, take an umbrella."


@pytest.mark.parametrize("beta", [False, True], ids=["chat", "beta.chat"])
def test_openai_stream_helper_is_written_sync(parent: Path, tmp_path: Path, beta: bool) -> None:
    with FakeOpenAIServer() as fake, regista_server(parent.parent) as server:
        fake.script({"content": "Rainy, take an umbrella."})
        real = openai.OpenAI(api_key="k", base_url=fake.url)
        with ReplaySession(
            server.url,
            parent.stem,
            edits=[{"step": 1, "tool_result": "rainy in Paris"}],
            trace_dir=tmp_path,
        ) as rs:
            assert stream_agent(rs.wrap(real), beta) == "Rainy, take an umbrella."
        assert len(fake.requests) == 1 and fake.requests[0].body["stream"] is True
        assert fake.requests[0].body["messages"][-1]["content"] == "rainy in Paris"
    _check_fork(rs.trace_paths, parent)


@pytest.mark.parametrize("beta", [False, True], ids=["chat", "beta.chat"])
def test_openai_stream_helper_is_written_async(parent: Path, tmp_path: Path, beta: bool) -> None:
    with FakeOpenAIServer() as fake, regista_server(parent.parent) as server:
        fake.script({"content": "Rainy, take an umbrella."})
        real = openai.AsyncOpenAI(api_key="k", base_url=fake.url)
        with ReplaySession(
            server.url,
            parent.stem,
            edits=[{"step": 1, "tool_result": "rainy in Paris"}],
            trace_dir=tmp_path,
        ) as rs:
            out = asyncio.run(stream_agent_async(rs.wrap(real), beta))
            assert out == "Rainy, take an umbrella."
        assert len(fake.requests) == 1
    _check_fork(rs.trace_paths, parent)


def test_an_abandoned_openai_stream_helper_is_not_written(parent: Path, tmp_path: Path) -> None:
    with regista_server(parent.parent) as server:
        real = openai.OpenAI(api_key="k", base_url="http://127.0.0.1:9")
        with ReplaySession(server.url, parent.stem, trace_dir=tmp_path) as rs:
            helper = rs.wrap(real).chat.completions.stream(
                model="gpt-4o",
                messages=[SYSTEM, {"role": "user", "content": "Weather in Paris?"}],
                tools=TOOLS_OPENAI,
            )
            with helper as stream:
                next(iter(stream))  # the first event only
    assert all(Trace.load(p).llm_calls() == [] for p in rs.trace_paths)


def test_a_response_format_class_is_written_as_its_schema(parent: Path, tmp_path: Path) -> None:
    from pydantic import BaseModel

    class Weather(BaseModel):
        city: str

    with FakeOpenAIServer() as fake, regista_server(parent.parent) as server:
        fake.script({"content": '{"city": "Paris"}'})
        real = openai.OpenAI(api_key="k", base_url=fake.url)
        with ReplaySession(server.url, parent.stem, live_after=-1, trace_dir=tmp_path) as rs:
            with rs.wrap(real).chat.completions.stream(
                model="gpt-4o",
                messages=[SYSTEM, {"role": "user", "content": "Which city?"}],
                response_format=Weather,
            ) as stream:
                final = stream.get_final_completion()
            assert final.choices[0].message.parsed == Weather(city="Paris")
    (path,) = rs.trace_paths
    (request, response), *_ = Trace.load(path).llm_calls()
    assert request.params["response_format"]["json_schema"]["name"] == "Weather"
    assert response.text == '{"city": "Paris"}'
