"""AnthropicProvider end to end: the real ``anthropic`` SDK against a fake Messages API."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import uuid
import warnings
from pathlib import Path

import pytest
from anthropic_support import (
    MODEL,
    THINKING_ANSWER,
    TOOL_ANSWER,
    get_weather,
    provider,
    request,
)
from fakes.anthropic_server import FakeAnthropicServer

from regista import Agent, UserError
from regista.errors import PricingWarning
from regista.pricing import cost_usd
from regista.trace.reader import Trace
from regista.types import LlmResponse, Usage

# -- round trips ------------------------------------------------------------------------


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
async def test_tool_use_round_trip(fake_anthropic: FakeAnthropicServer, stream: bool) -> None:
    fake_anthropic.script(TOOL_ANSWER)
    response = await provider(fake_anthropic, stream=stream).complete(request())

    assert isinstance(response, LlmResponse)
    assert response.id == "msg_fake_0001"
    assert response.model == MODEL
    assert response.content == TOOL_ANSWER["content"]
    assert response.stop_reason == "tool_use"
    assert response.stop_sequence is None
    assert response.usage == Usage(
        input_tokens=120,
        output_tokens=42,
        cache_creation_input_tokens=30,
        cache_read_input_tokens=900,
    )
    assert response.__regista_meta__.provider == "anthropic"
    assert fake_anthropic.requests[0].streamed is stream


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
async def test_thinking_blocks_round_trip(
    fake_anthropic: FakeAnthropicServer, stream: bool
) -> None:
    fake_anthropic.script(THINKING_ANSWER)
    response = await provider(fake_anthropic, stream=stream).complete(request())
    assert response.content == THINKING_ANSWER["content"]
    assert [next(iter(b)) for b in response.content] == ["type"] * 3  # "type" first, API-like
    assert response.text == "Hello! How can I help you today?"


async def test_stream_and_json_give_the_same_payload(fake_anthropic: FakeAnthropicServer) -> None:
    fake_anthropic.answer_with(lambda body: {**TOOL_ANSWER, "id": "msg_same"})
    plain = await provider(fake_anthropic).complete(request())
    streamed = await provider(fake_anthropic, stream=True).complete(request())
    assert streamed.payload() == plain.payload()


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
@pytest.mark.parametrize(
    ("stop_reason", "stop_sequence"),
    [
        ("end_turn", None),
        ("max_tokens", None),
        ("stop_sequence", "END"),
        ("pause_turn", None),
        ("refusal", None),
    ],
)
async def test_stop_reasons(
    fake_anthropic: FakeAnthropicServer, stream: bool, stop_reason: str, stop_sequence: str | None
) -> None:
    fake_anthropic.script(
        {
            "content": [{"type": "text", "text": "partial"}],
            "stop_reason": stop_reason,
            "stop_sequence": stop_sequence,
        }
    )
    response = await provider(fake_anthropic, stream=stream).complete(request())
    assert (response.stop_reason, response.stop_sequence) == (stop_reason, stop_sequence)


async def test_request_is_sent_in_full(fake_anthropic: FakeAnthropicServer) -> None:
    fake_anthropic.script({"content": [{"type": "text", "text": "ok"}]})
    params = {
        "temperature": 0.3,
        "top_p": 0.9,
        "top_k": 40,
        "stop_sequences": ["END"],
        "thinking": {"type": "enabled", "budget_tokens": 1024},
        "metadata": {"user_id": "u-1"},
    }
    req = request(
        system="You are terse.",
        tools=[get_weather.schema],
        tool_choice={"type": "auto"},
        max_tokens=2048,
        params=params,
    )
    await provider(fake_anthropic).complete(req)
    body = fake_anthropic.requests[0].body
    assert body["model"] == MODEL
    assert body["system"] == "You are terse."
    assert body["messages"] == req.messages
    assert body["tools"] == req.tools and body["tools"][0]["name"] == "get_weather"
    assert body["tool_choice"] == {"type": "auto"}
    assert body["max_tokens"] == 2048
    for name, value in params.items():
        assert body[name] == value
    assert "stream" not in body


async def test_empty_optional_fields_are_not_sent(fake_anthropic: FakeAnthropicServer) -> None:
    fake_anthropic.script({"content": [{"type": "text", "text": "ok"}]})
    await provider(fake_anthropic).complete(request())
    assert set(fake_anthropic.requests[0].body) == {"model", "messages", "max_tokens"}


async def test_params_may_not_override_request_fields(fake_anthropic: FakeAnthropicServer) -> None:
    with pytest.raises(UserError, match="params may not set model, stream"):
        await provider(fake_anthropic).complete(request(params={"stream": True, "model": "x"}))
    assert fake_anthropic.requests == []


# -- streaming callbacks -----------------------------------------------------------------


async def test_on_text_receives_deltas_in_order(fake_anthropic: FakeAnthropicServer) -> None:
    text = "The quick brown fox jumps over the lazy dog."
    fake_anthropic.script({"content": [{"type": "text", "text": text}, TOOL_ANSWER["content"][1]]})
    deltas: list[str] = []
    response = await provider(fake_anthropic, stream=True).complete(
        request(), on_text=deltas.append
    )
    assert deltas == [text[i : i + 4] for i in range(0, len(text), 4)]
    assert response.text == text
    assert response.tool_uses[0]["input"] == TOOL_ANSWER["content"][1]["input"]


async def test_async_on_text_is_awaited(fake_anthropic: FakeAnthropicServer) -> None:
    fake_anthropic.script({"content": [{"type": "text", "text": "abcdefgh"}]})
    seen: list[str] = []

    async def on_text(delta: str) -> None:
        await asyncio.sleep(0)
        seen.append(delta)

    await provider(fake_anthropic, stream=True).complete(request(), on_text=on_text)
    assert seen == ["abcd", "efgh"]


async def test_on_text_without_streaming_gets_whole_text_blocks(
    fake_anthropic: FakeAnthropicServer,
) -> None:
    fake_anthropic.script(TOOL_ANSWER)
    seen: list[str] = []
    await provider(fake_anthropic).complete(request(), on_text=seen.append)
    assert seen == ["Let me check the weather."]
    assert not fake_anthropic.requests[0].streamed


# -- an agent session ----------------------------------------------------------------------


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
async def test_agent_two_turn_tool_session(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path, stream: bool
) -> None:
    fake_anthropic.script(TOOL_ANSWER, {"content": [{"type": "text", "text": "Sunny, 21°C."}]})
    agent = Agent(
        model=MODEL,
        instructions="You report the weather.",
        tools=[get_weather],
        provider=provider(fake_anthropic, stream=stream),
        trace_dir=tmp_path,
    )
    deltas: list[tuple[int, str]] = []
    result = await agent.run("Weather in Paris?", on_text=lambda step, d: deltas.append((step, d)))

    assert result.stop_reason == "end_turn"
    assert result.output == "Sunny, 21°C."
    assert (result.turns, result.tool_calls) == (1, 1)
    assert "".join(d for s, d in deltas if s == 2) == "Sunny, 21°C."

    second = fake_anthropic.requests[1].body
    assert second["system"] == "You report the weather."
    assert [t["name"] for t in second["tools"]] == ["get_weather"]
    assert second["messages"][1] == {"role": "assistant", "content": TOOL_ANSWER["content"]}
    result_block = second["messages"][2]["content"][0]
    assert result_block["type"] == "tool_result"
    assert result_block["tool_use_id"] == "toolu_01"
    assert "Sunny in Paris" in json.dumps(result_block["content"])

    trace = Trace.load(result.trace_path)
    calls = trace.llm_calls()
    assert [resp.id for _, resp in calls] == ["msg_fake_0001", "msg_fake_0002"]
    assert calls[0][1].usage.cache_read_input_tokens == 900
    # The recorded requests are what the SDK sent.
    for (req, _), sent in zip(calls, fake_anthropic.bodies, strict=True):
        assert req.messages == sent["messages"]
    assert trace.end is not None and trace.end.stop_reason == "end_turn"


async def test_provider_survives_a_new_event_loop(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path
) -> None:
    fake_anthropic.answer_with(lambda body: {"content": [{"type": "text", "text": "hi"}]})
    agent = Agent(model=MODEL, provider=provider(fake_anthropic), trace_dir=tmp_path)

    def twice() -> list[str | None]:
        return [agent.run_sync("one").output, agent.run_sync("two").output]

    assert await asyncio.to_thread(twice) == ["hi", "hi"]
    assert len(fake_anthropic.requests) == 2


# -- cost ----------------------------------------------------------------------------------


async def test_cost_of_a_known_model_uses_the_api_model_name(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path
) -> None:
    dated = f"{MODEL}-20260101"
    fake_anthropic.script({"model": dated, **TOOL_ANSWER}, {"model": dated, "content": []})
    agent = Agent(
        model=MODEL, tools=[get_weather], provider=provider(fake_anthropic), trace_dir=tmp_path
    )
    result = await agent.run("Weather?")

    usage = Usage.model_validate(TOOL_ANSWER["usage"]) + Usage(input_tokens=10, output_tokens=5)
    assert result.cost_usd is not None and result.cost_usd > 0
    assert result.cost_usd == pytest.approx(cost_usd(MODEL, usage))
    calls = Trace.load(result.trace_path).llm_calls()
    assert {resp.model for _, resp in calls} == {dated}


async def test_unknown_model_has_unknown_cost(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path
) -> None:
    model = f"claude-unknown-{uuid.uuid4().hex[:8]}"
    fake_anthropic.script({"content": [{"type": "text", "text": "hi"}]})
    agent = Agent(model=model, provider=provider(fake_anthropic), trace_dir=tmp_path)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = await agent.run("Hello")
    assert result.cost_usd is None
    assert any(issubclass(w.category, PricingWarning) and model in str(w.message) for w in caught)
    end = Trace.load(result.trace_path).end
    assert end is not None and end.cost_usd is None


# -- import cost ---------------------------------------------------------------------------


def test_importing_providers_does_not_load_the_sdk() -> None:
    code = (
        "import sys, regista, regista.providers\n"
        "from regista.providers import ScriptedProvider, Provider\n"
        "assert 'anthropic' not in sys.modules, 'anthropic was imported'\n"
        "from regista.providers import AnthropicProvider\n"
        "assert 'anthropic' not in sys.modules, 'the provider class alone loaded the SDK'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
