"""AnthropicProvider end to end: the real ``anthropic`` SDK against a fake Messages API."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import uuid
import warnings
from pathlib import Path
from typing import Any

import pytest
from fakes.anthropic_server import FakeAnthropicServer, FakeDisconnect, FakeError

from regista import Agent, MissingCredentialsError, ProviderError, UserError, tool
from regista.errors import PricingWarning
from regista.pricing import cost_usd
from regista.providers.anthropic import AnthropicProvider
from regista.trace.events import ErrorEvent, SessionEnd
from regista.trace.reader import Trace
from regista.types import LlmRequest, LlmResponse, Usage

MODEL = "claude-sonnet-4-6"
SECRET = "sk-ant-test-SECRET-123"


def provider(server: FakeAnthropicServer, **kwargs: Any) -> AnthropicProvider:
    kwargs.setdefault("api_key", "sk-ant-test-key")
    kwargs.setdefault("max_retries", 0)
    return AnthropicProvider(MODEL, base_url=server.url, **kwargs)


def request(**kwargs: Any) -> LlmRequest:
    kwargs.setdefault("model", MODEL)
    kwargs.setdefault("messages", [{"role": "user", "content": [{"type": "text", "text": "hi"}]}])
    return LlmRequest(**kwargs)


@tool
def get_weather(
    city: str, units: dict[str, str | None] | None = None, days: list[int] | None = None
) -> str:
    """Current weather for a city.

    Args:
        city: The city.
        units: Units per quantity.
        days: Days ahead to forecast.
    """
    return f"Sunny in {city}, 21°C"


TOOL_ANSWER = {
    "content": [
        {"type": "text", "text": "Let me check the weather."},
        {
            "type": "tool_use",
            "id": "toolu_01",
            "name": "get_weather",
            "input": {"city": "Paris", "units": {"temp": "C", "extra": None}, "days": [1, 2]},
        },
    ],
    "usage": {
        "input_tokens": 120,
        "output_tokens": 42,
        "cache_creation_input_tokens": 30,
        "cache_read_input_tokens": 900,
    },
}
THINKING_ANSWER = {
    "content": [
        {"type": "thinking", "thinking": "The user greets me; I greet back.", "signature": "c2ln"},
        {"type": "redacted_thinking", "data": "ZW5jcnlwdGVk"},
        {"type": "text", "text": "Hello! How can I help you today?"},
    ],
    "stop_reason": "end_turn",
}


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
    assert (result.turns, result.tool_calls) == (2, 1)
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


# -- errors --------------------------------------------------------------------------------


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
@pytest.mark.parametrize(
    ("status", "expected"),
    [
        (400, "Anthropic API error 400 invalid_request_error: boom"),
        (401, "Anthropic API error 401 authentication_error: boom"),
        (429, "Anthropic API error 429 rate_limit_error: boom"),
        (500, "Anthropic API error 500 api_error: boom"),
        (529, "Anthropic API error 529 overloaded_error: boom"),
    ],
)
async def test_http_errors_become_provider_errors(
    fake_anthropic: FakeAnthropicServer, stream: bool, status: int, expected: str
) -> None:
    fake_anthropic.script(FakeError(status, message="boom"))
    with pytest.raises(ProviderError) as info:
        await provider(fake_anthropic, stream=stream).complete(request())
    assert str(info.value) == f"{expected} (request id req_fake_0001)"
    assert type(info.value) is ProviderError
    assert info.value.__cause__ is None and info.value.__suppress_context__


async def test_error_event_in_the_middle_of_a_stream(fake_anthropic: FakeAnthropicServer) -> None:
    fake_anthropic.script(FakeError(529, message="Overloaded", mid_stream=True))
    with pytest.raises(ProviderError, match="while streaming, overloaded_error: Overloaded"):
        await provider(fake_anthropic, stream=True).complete(request())


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
async def test_unreachable_server(stream: bool) -> None:
    with FakeAnthropicServer() as server:
        url = server.url  # a port that nothing listens on once the server stops
    p = AnthropicProvider(MODEL, api_key="k", base_url=url, max_retries=0, stream=stream)
    with pytest.raises(
        ProviderError, match=rf"^connection to the Anthropic API failed at {url}/v1/messages"
    ):
        await p.complete(request())


async def test_dropped_connection(fake_anthropic: FakeAnthropicServer) -> None:
    fake_anthropic.script(FakeDisconnect())
    with pytest.raises(ProviderError, match=r"^connection to the Anthropic API failed at http"):
        await provider(fake_anthropic).complete(request())


async def test_stream_cut_short_is_an_error_not_a_partial_answer(
    fake_anthropic: FakeAnthropicServer,
) -> None:
    fake_anthropic.script(FakeDisconnect(TOOL_ANSWER, after_events=5))
    deltas: list[str] = []
    with pytest.raises(ProviderError, match="stream ended before the message was complete"):
        await provider(fake_anthropic, stream=True).complete(request(), on_text=deltas.append)
    assert deltas == ["Let ", "me c"]  # what had arrived did reach the callback


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
async def test_errors_of_the_callback_are_not_blamed_on_the_api(
    fake_anthropic: FakeAnthropicServer, stream: bool
) -> None:
    fake_anthropic.script(TOOL_ANSWER)

    def on_text(delta: str) -> None:
        raise ValueError("the UI broke")

    with pytest.raises(ValueError, match="the UI broke"):
        await provider(fake_anthropic, stream=stream).complete(request(), on_text=on_text)


async def test_retries_follow_the_sdk(fake_anthropic: FakeAnthropicServer) -> None:
    fake_anthropic.script(
        FakeError(500, message="hiccup", headers={"retry-after-ms": "1"}),
        {"content": [{"type": "text", "text": "recovered"}]},
    )
    response = await provider(fake_anthropic, max_retries=1).complete(request())
    assert response.text == "recovered"
    assert len(fake_anthropic.requests) == 2


async def test_error_ends_the_trace(fake_anthropic: FakeAnthropicServer, tmp_path: Path) -> None:
    fake_anthropic.script(TOOL_ANSWER, FakeError(429, message="Too many requests"))
    agent = Agent(
        model=MODEL, tools=[get_weather], provider=provider(fake_anthropic), trace_dir=tmp_path
    )
    with pytest.raises(ProviderError, match="429 rate_limit_error: Too many requests") as info:
        await agent.run("Weather?")

    assert info.value.trace_path is not None
    trace = Trace.load(info.value.trace_path)
    errors = trace.of_type(ErrorEvent)
    assert [(e.where, e.step) for e in errors] == [("provider", 2)]
    assert "429 rate_limit_error" in errors[0].message
    end = trace.end
    assert isinstance(end, SessionEnd)
    assert end.stop_reason == "error"
    assert end.error == str(info.value)
    assert end.turns == 1 and end.tool_calls == 1


# -- credentials ---------------------------------------------------------------------------


@pytest.fixture
def no_home_config(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No SDK credential profile in the user's home either."""
    monkeypatch.setenv("HOME", str(tmp_path))


@pytest.mark.usefixtures("no_home_config")
def test_missing_key_is_reported_when_the_provider_is_made() -> None:
    with pytest.raises(MissingCredentialsError, match="set the ANTHROPIC_API_KEY environment"):
        AnthropicProvider(MODEL)


@pytest.mark.usefixtures("no_home_config")
def test_agent_without_provider_reports_the_missing_key(tmp_path: Path) -> None:
    agent = Agent(model=MODEL, trace_dir=tmp_path)
    with pytest.raises(MissingCredentialsError, match="ANTHROPIC_API_KEY"):
        agent.provider  # noqa: B018


async def test_environment_is_honoured(
    fake_anthropic: FakeAnthropicServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-from-env")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake_anthropic.url)
    fake_anthropic.script({"content": [{"type": "text", "text": "ok"}]})
    response = await AnthropicProvider(MODEL, max_retries=0).complete(request())
    assert response.text == "ok"
    assert "sk-ant-from-env" in _auth_values(fake_anthropic.requests[0].headers)


async def test_explicit_arguments_win_over_the_environment(
    fake_anthropic: FakeAnthropicServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    with FakeAnthropicServer() as elsewhere:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", elsewhere.url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-from-env")
        fake_anthropic.script({"content": [{"type": "text", "text": "ok"}]})
        p = AnthropicProvider(MODEL, api_key="sk-ant-explicit", base_url=fake_anthropic.url)
        await p.complete(request())
        assert elsewhere.requests == []
    values = _auth_values(fake_anthropic.requests[0].headers)
    assert "sk-ant-explicit" in values and "sk-ant-from-env" not in values


def test_client_and_connection_arguments_are_exclusive(fake_anthropic: FakeAnthropicServer) -> None:
    import anthropic

    client = anthropic.AsyncAnthropic(api_key="k", base_url=fake_anthropic.url)
    with pytest.raises(UserError, match="either client= or api_key"):
        AnthropicProvider(MODEL, client=client, api_key="k")
    assert AnthropicProvider(MODEL, client=client).base_url.startswith(fake_anthropic.url)


def test_unloadable_sdk_credentials_are_reported(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("ANTHROPIC_PROFILE", "work")
    monkeypatch.setenv("ANTHROPIC_CONFIG_DIR", str(tmp_path))
    with pytest.raises(MissingCredentialsError, match=r"could not be loaded.*ANTHROPIC_API_KEY"):
        AnthropicProvider(MODEL)


def test_repr_shows_no_key(fake_anthropic: FakeAnthropicServer) -> None:
    p = provider(fake_anthropic, api_key=SECRET)
    assert SECRET not in repr(p)


def _auth_values(headers: dict[str, str]) -> str:
    return " ".join(v for k, v in headers.items() if k in ("authorization", "x-api-key"))


# -- no secrets in traces ------------------------------------------------------------------


@pytest.mark.parametrize("via", ["argument", "environment"])
@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
async def test_no_credentials_reach_the_trace(
    fake_anthropic: FakeAnthropicServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    via: str,
    stream: bool,
) -> None:
    fake_anthropic.script(
        TOOL_ANSWER,
        {"content": [{"type": "text", "text": "Sunny."}]},
        # An error body that echoes the key must not carry it into the trace either.
        FakeError(401, message=f"invalid key: {SECRET}"),
    )
    if via == "environment":
        monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
        p = AnthropicProvider(MODEL, base_url=fake_anthropic.url, max_retries=0, stream=stream)
    else:
        p = provider(fake_anthropic, api_key=SECRET, stream=stream)
    agent = Agent(model=MODEL, tools=[get_weather], provider=p, trace_dir=tmp_path)
    ok = await agent.run("Weather in Paris?")
    with pytest.raises(ProviderError) as failed:
        await agent.run("Again?")
    assert SECRET not in str(failed.value)

    # The test means something only if the SDK really sent the key.
    headers = fake_anthropic.requests[0].headers
    assert SECRET in _auth_values(headers)
    sensitive = {
        v
        for k, v in headers.items()
        if k in ("authorization", "x-api-key", "anthropic-version", "user-agent")
        or k.startswith("anthropic-")
    }
    assert sensitive
    traces = sorted(tmp_path.glob("*.jsonl"))
    assert ok.trace_path in traces and len(traces) == 2
    for path in traces:
        text = path.read_text()
        assert SECRET not in text
        for value in sensitive:
            assert value not in text, f"header value {value!r} leaked into {path.name}"
        lowered = text.lower()
        assert "authorization" not in lowered and "x-api-key" not in lowered


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
