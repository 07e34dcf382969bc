"""End to end: an app on the real SDKs, instrumented by OpenLLMetry with content capture,
exports over the real OTLP exporter to ``regista serve``; the runs hold the conversation, and
the same app replayed through the SDK replay server on those runs gets the same answers."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from fakes.anthropic_server import FakeAnthropicServer
from fakes.openai_server import FakeOpenAIServer

from regista.server import BackgroundServer, create_app
from regista.trace.reader import Trace

pytest.importorskip("opentelemetry.instrumentation.anthropic")
pytest.importorskip("opentelemetry.instrumentation.openai")

APP = Path(__file__).with_name("openllmetry_app.py")


def test_openllmetry_spans_become_runs(tmp_path: Path) -> None:
    store = tmp_path / "store"
    with (
        FakeAnthropicServer() as claude,
        FakeOpenAIServer() as gpt,
        BackgroundServer(create_app(store)) as server,
    ):
        claude.script(
            {
                "content": [
                    {
                        "type": "tool_use",
                        "id": "toolu_7",
                        "name": "get_order",
                        "input": {"order_id": "ORD-7"},
                    }
                ],
                "stop_reason": "tool_use",
                "usage": {"input_tokens": 21, "output_tokens": 9},
            },
            {
                "content": [{"type": "text", "text": "Refunded $40 for ORD-7."}],
                "usage": {"input_tokens": 40, "output_tokens": 8},
            },
        )
        gpt.script({"content": "ORD-7 was refunded."})
        env = {**os.environ, "TRACELOOP_TRACE_CONTENT": "true"}
        done = subprocess.run(
            [sys.executable, str(APP), f"{server.url}/v1/traces", claude.url, gpt.url],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        assert "Refunded $40" in done.stdout
        runs = sorted((Trace.load(p) for p in store.glob("*.jsonl")), key=lambda t: t.start.ts)
        # The received runs replay through the SDK replay server to the same answers
        # (loose: spans do not hold everything a request's digest needs).
        import httpx2

        with httpx2.Client(base_url=server.url) as http:
            urls = [
                http.post("/v1/replays", json={"run": r.session_id, "mode": "loose"}).json()
                for r in runs
            ]
        sink = tmp_path / "sink"  # the replayed app's own spans go to another store
        with BackgroundServer(create_app(sink)) as other:
            again = subprocess.run(
                [
                    sys.executable,
                    str(APP),
                    f"{other.url}/v1/traces",
                    urls[0]["anthropic_base_url"],
                    urls[1]["openai_base_url"],
                ],
                capture_output=True,
                text=True,
                env=env,
                timeout=120,
            )
        assert again.returncode == 0, again.stderr
        assert again.stdout == done.stdout
        assert len(claude.requests) == 2 and len(gpt.requests) == 1  # nothing reached them
    assert len(runs) == 2
    claude_run, gpt_run = runs
    steps = claude_run.steps()
    assert [s.kind for s in steps] == ["model", "tool", "model"]
    assert claude_run.start.task == "Refund order ORD-7?"
    first, last = steps[0].response, steps[2].response
    assert first is not None and last is not None
    assert first.tool_uses[0]["name"] == "get_order"
    assert last.text == "Refunded $40 for ORD-7."
    assert last.usage.output_tokens == 8
    request = claude_run.request_for(steps[2].request_event)  # type: ignore[arg-type]
    assert request.messages[0]["content"][0]["text"] == "Refund order ORD-7?"
    assert claude_run.start.metadata["service_name"] == "shop-assistant"
    assert gpt_run.steps()[0].response.text == "ORD-7 was refunded."  # type: ignore[union-attr]


# -- a plain agent: every model call a root span ------------------------------------------

ANTHROPIC_ANSWERS = (
    {
        "content": [
            {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}}
        ],
        "stop_reason": "tool_use",
        "usage": {"input_tokens": 21, "output_tokens": 9},
    },
    {
        "content": [{"type": "text", "text": "Sunny in Paris."}],
        "usage": {"input_tokens": 40, "output_tokens": 8},
    },
)
OPENAI_ANSWERS = (
    {"tool_calls": [{"id": "call_1", "name": "get_weather", "arguments": '{"city": "Paris"}'}]},
    {"content": "Sunny in Paris."},
)


def _plain_runs(
    tmp: Path, *flags: str, content: bool = True, env: dict[str, str] | None = None
) -> list[Trace]:
    """The runs that the plain agents' spans become, oldest first."""
    store = tmp / "store"
    with (
        FakeAnthropicServer() as claude,
        FakeOpenAIServer() as gpt,
        BackgroundServer(create_app(store)) as server,
    ):
        claude.script(*ANTHROPIC_ANSWERS)
        gpt.script(*OPENAI_ANSWERS)
        env = {
            **os.environ,
            "TRACELOOP_TRACE_CONTENT": "true" if content else "false",
            **(env or {}),
        }
        urls = [f"{server.url}/v1/traces", claude.url, gpt.url]
        done = subprocess.run(
            [sys.executable, str(APP), *urls, "--plain", *flags],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        assert done.stdout.count("Sunny in Paris.") == 2
    return sorted((Trace.load(p) for p in store.glob("*.jsonl")), key=lambda t: t.start.ts)


@pytest.fixture(scope="module", params=["openllmetry", "openinference"])
def plain(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> list[Trace]:
    if request.param == "openinference":
        pytest.importorskip("openinference.instrumentation.anthropic")
        pytest.importorskip("openinference.instrumentation.openai")
    flags = ["--openinference"] if request.param == "openinference" else []
    return _plain_runs(tmp_path_factory.mktemp(request.param), *flags)


def test_a_plain_agent_is_one_run_per_conversation_with_its_tool_steps(
    plain: list[Trace],
) -> None:
    """Two conversations (one per SDK) of two calls each: two runs, each model, tool, model;
    the anthropic SDK's own spans of the same calls are not a second call."""
    assert len(plain) == 2, [r.start.provider for r in plain]
    claude_run, gpt_run = plain
    for run in plain:
        assert [s.kind for s in run.steps()] == ["model", "tool", "model"]
        tool = run.steps()[1]
        assert tool.tool_call is not None and tool.tool_call.name == "get_weather"
        assert tool.tool_call.input == {"city": "Paris"}
        assert tool.result is not None and "sunny in Paris" in str(tool.result.content)
        assert run.start.task == "Weather in Paris?"
    usage = claude_run.summary().usage
    assert (usage.input_tokens, usage.output_tokens) == (61, 17)  # counted once
    assert claude_run.start.model == "claude-sonnet-4-6"
    assert claude_run.steps()[0].response_event.provider == "anthropic"  # type: ignore[union-attr]
    assert gpt_run.start.model == "gpt-4o"
    assert gpt_run.steps()[0].response_event.provider == "openai"  # type: ignore[union-attr]


def test_a_plain_agent_keeps_system_prompts_and_tool_calls(plain: list[Trace]) -> None:
    for run in plain:
        first, last = run.steps()[0], run.steps()[2]
        request = run.request_for(last.request_event)  # type: ignore[arg-type]
        assert request.system == "You are a weather bot."
        assert request.messages[0] == {
            "role": "user",
            "content": [{"type": "text", "text": "Weather in Paris?"}],
        }
        use = first.response.tool_uses[0]  # type: ignore[union-attr]
        assert (use["name"], use["input"]) == ("get_weather", {"city": "Paris"})
        results = [b for b in request.messages[2]["content"] if b["type"] == "tool_result"]
        assert results and results[0]["tool_use_id"] == use["id"]
        assert last.response.text == "Sunny in Paris."  # type: ignore[union-attr]


def test_a_step_without_content_is_marked_not_captured(tmp_path: Path) -> None:
    """OpenLLMetry with content capture off: each call is a step whose content was not
    captured, said in the replay payload (``content_captured: false``), counted once."""
    runs = _plain_runs(tmp_path, content=False)
    steps = [s for r in runs for s in r.steps()]
    assert len(steps) == 4 and all(s.kind == "model" for s in steps)
    for step in steps:
        assert step.response_event is not None
        assert step.response_event.response["content_captured"] is False
    tokens = sum(s.response.usage.output_tokens for s in steps)  # type: ignore[union-attr]
    assert tokens == 9 + 8 + 7 + 7
    # A replay does not answer such a step with an empty answer: a 409 names it.
    import openai

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "server"))
    from sdk_agents import new_replay, regista_server

    gpt_run = next(r for r in runs if r.start.provider == "openai")
    with regista_server(gpt_run.path.parent) as server:  # type: ignore[union-attr]
        rp = new_replay(server, gpt_run.session_id)
        gpt = openai.OpenAI(api_key="k", base_url=rp["openai_base_url"], max_retries=0)
        with pytest.raises(openai.ConflictError) as refused:
            gpt.chat.completions.create(
                model="gpt-4o", messages=[{"role": "user", "content": "Weather in Paris?"}]
            )
    assert refused.value.status_code == 409
    assert "step 0" in str(refused.value) and "content was not recorded" in str(refused.value)
    assert refused.value.body["type"] == "content_not_recorded"  # type: ignore[index]


def test_the_anthropic_sdks_own_spans_with_content_make_a_run(tmp_path: Path) -> None:
    """No instrumentation: the anthropic SDK's own spans (content mode on) are the plain
    agent's conversation, with its tool step; the openai SDK sends none."""
    content_mode = {"ANTHROPIC_OPEN_TELEMETRY_TRACES_CONTENT_MODE": "content"}
    (run,) = _plain_runs(tmp_path, "--native", env=content_mode)
    assert [s.kind for s in run.steps()] == ["model", "tool", "model"]
    request = run.request_for(run.steps()[2].request_event)  # type: ignore[arg-type]
    assert request.system == "You are a weather bot."
    assert run.steps()[0].response.stop_reason == "tool_use"  # type: ignore[union-attr]
    assert run.steps()[2].response.text == "Sunny in Paris."  # type: ignore[union-attr]


def test_a_plain_agents_runs_replay_strictly_through_the_sdks(plain: list[Trace]) -> None:
    """The received runs hold what the strict digest covers (system prompt and messages as
    the proxy normalises them): the same loops replay strictly, with no provider up."""
    import anthropic
    import openai

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "server"))
    from sdk_agents import anthropic_agent, new_replay, openai_agent, regista_server

    store = plain[0].path.parent  # type: ignore[union-attr]
    with regista_server(store) as server:
        claude_run, gpt_run = plain
        rp = new_replay(server, claude_run.session_id, mode="strict")
        claude = anthropic.Anthropic(api_key="k", base_url=rp["anthropic_base_url"], max_retries=0)
        assert anthropic_agent(claude) == "Sunny in Paris."
        rp = new_replay(server, gpt_run.session_id, mode="strict")
        gpt = openai.OpenAI(api_key="k", base_url=rp["openai_base_url"], max_retries=0)
        assert openai_agent(gpt) == "Sunny in Paris."
        status = server.http.get(f"/v1/replays/{rp['id']}").json()
        assert status["served"] == status["matched"] == 2, status
