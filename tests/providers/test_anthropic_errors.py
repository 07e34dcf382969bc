"""AnthropicProvider failures and credentials: errors, missing keys, no secrets in traces."""

from __future__ import annotations

from pathlib import Path

import pytest
from anthropic_support import (
    MODEL,
    SECRET,
    TOOL_ANSWER,
    auth_values,
    get_weather,
    provider,
    request,
)
from fakes.anthropic_server import FakeAnthropicServer, FakeDisconnect, FakeError

from regista import Agent, MissingCredentialsError, ProviderError, UserError
from regista.providers.anthropic import AnthropicProvider
from regista.trace.events import ErrorEvent, SessionEnd
from regista.trace.reader import Trace

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
    assert "sk-ant-from-env" in auth_values(fake_anthropic.requests[0].headers)


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
    values = auth_values(fake_anthropic.requests[0].headers)
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
    assert SECRET in auth_values(headers)
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
