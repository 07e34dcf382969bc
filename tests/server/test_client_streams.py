"""``regista.client`` writes streamed calls to the fork's trace: the real SDKs stream from the
replay and, past the cut, from fake providers; the events add up to the final message."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import anthropic
import openai
from fakes.anthropic_server import FakeAnthropicServer
from fakes.openai_server import FakeOpenAIServer
from sdk_agents import anthropic_agent, openai_agent, regista_server, weather_answer

from regista.client import ReplaySession
from regista.trace.reader import Trace


def _fork(paths: list[Path]) -> Trace:
    (path,) = paths
    fork = Trace.load(path)
    assert fork.start is not None and fork.start.forked_from is not None
    return fork


def test_messages_stream_calls_are_written_recorded_then_live(
    recorded: Path, tmp_path: Path
) -> None:
    with FakeAnthropicServer() as fake, regista_server(recorded.parent) as server:
        fake.answer_with(weather_answer)
        real = anthropic.Anthropic(api_key="k", base_url=fake.url)
        with ReplaySession(
            server.url,
            recorded.stem,
            edits=[{"step": 1, "tool_result": "rainy in Paris"}],
            trace_dir=tmp_path / "forks",
        ) as rs:
            assert anthropic_agent(rs.wrap(real), stream=True) == "Tool: rainy in Paris"
        assert len(fake.requests) == 1 and fake.requests[0].streamed
    fork = _fork(rs.trace_paths)
    assert [e.source for e in fork.events if e.type == "llm.response"] == ["recorded", "live"]
    assert [s.kind for s in fork.steps()] == ["model", "tool", "model"]
    recorded_first = Trace.load(recorded).llm_calls()[0][1]
    calls = fork.llm_calls()
    assert calls[0][1].content == recorded_first.content
    assert calls[0][1].usage == recorded_first.usage
    live = calls[1][1]
    assert live.text == "Tool: rainy in Paris" and live.stop_reason == "end_turn"
    assert live.usage.output_tokens > 0  # the usage the stream carried
    assert fork.end is not None and fork.end.output == "Tool: rainy in Paris"


def test_raw_anthropic_streams_sync_and_async(recorded: Path, tmp_path: Path) -> None:
    messages = [{"role": "user", "content": "Weather in Paris?"}]
    kwargs: dict[str, Any] = dict(
        model="claude-sonnet-4-6", max_tokens=64, system="You are a weather bot."
    )
    with FakeAnthropicServer() as fake, regista_server(recorded.parent) as server:
        fake.answer_with(weather_answer)
        real = anthropic.Anthropic(api_key="k", base_url=fake.url)
        with ReplaySession(server.url, recorded.stem, trace_dir=tmp_path / "a") as rs:
            events = list(rs.wrap(real).messages.create(messages=messages, stream=True, **kwargs))
            assert events[-1].type == "message_stop"
        areal = anthropic.AsyncAnthropic(api_key="k", base_url=fake.url)

        async def run(rs: ReplaySession) -> list[Any]:
            stream = await rs.wrap(areal).messages.create(messages=messages, stream=True, **kwargs)
            return [ev async for ev in stream]

        with ReplaySession(
            server.url, recorded.stem, live_after=-1, trace_dir=tmp_path / "b"
        ) as live_rs:
            assert asyncio.run(run(live_rs))[-1].type == "message_stop"
        assert len(fake.requests) == 1  # the second session is live from step 0
    first, second = _fork(rs.trace_paths), _fork(live_rs.trace_paths)
    want = Trace.load(recorded).llm_calls()[0][1]
    assert first.llm_calls()[0][1].tool_uses == want.tool_uses
    got = second.llm_calls()[0][1]
    assert got.tool_uses[0]["input"] == {"city": "Paris"} and got.usage.input_tokens > 0
    assert [e.source for e in second.events if e.type == "llm.response"] == ["live"]


def test_an_abandoned_stream_is_not_written(recorded: Path, tmp_path: Path) -> None:
    with regista_server(recorded.parent) as server:
        real = anthropic.Anthropic(api_key="k", base_url="http://127.0.0.1:9")
        with ReplaySession(server.url, recorded.stem, trace_dir=tmp_path) as rs:
            stream = rs.wrap(real).messages.create(
                model="m",
                max_tokens=9,
                system="You are a weather bot.",
                messages=[{"role": "user", "content": "Weather in Paris?"}],
                stream=True,
            )
            next(iter(stream))
            stream.close()
    assert all(Trace.load(p).llm_calls() == [] for p in rs.trace_paths)


OPENAI_ANSWERS = (
    {"tool_calls": [{"id": "call_1", "name": "get_weather", "arguments": '{"city": "Paris"}'}]},
    {"content": "It is sunny in Paris."},
)


def test_openai_streams_with_usage_are_written(tmp_path: Path) -> None:
    store = tmp_path / "store"
    with FakeOpenAIServer() as fake, regista_server(store, openai=fake.url) as server:
        fake.script(*OPENAI_ANSWERS)
        client = openai.OpenAI(api_key="k", base_url=f"{server.url}/v1/record/openai")
        assert openai_agent(client, stream=True) == "It is sunny in Paris."
        server.record_done()
    (parent,) = store.glob("*.jsonl")
    with FakeOpenAIServer() as fake, regista_server(store) as server:
        fake.script({"content": "Rainy, take an umbrella."})
        real = openai.OpenAI(api_key="k", base_url=fake.url)
        with ReplaySession(
            server.url,
            parent.stem,
            edits=[{"step": 1, "tool_result": "rainy in Paris"}],
            trace_dir=tmp_path / "forks",
        ) as rs:
            assert openai_agent(rs.wrap(real), stream=True) == "Rainy, take an umbrella."
        assert len(fake.requests) == 1
        assert fake.requests[0].body["messages"][-1]["content"] == "rainy in Paris"
    fork = _fork(rs.trace_paths)
    assert [e.source for e in fork.events if e.type == "llm.response"] == ["recorded", "live"]
    calls = fork.llm_calls()
    assert calls[0][1].tool_uses[0]["id"] == "call_1"
    assert calls[0][1].usage == Trace.load(parent).llm_calls()[0][1].usage
    live = calls[1][1]
    assert live.text == "Rainy, take an umbrella." and live.usage.input_tokens > 0
    assert fork.end is not None and fork.end.output == "Rainy, take an umbrella."
