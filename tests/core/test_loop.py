"""The agent loop: compaction, cost, and a session.end on every way out."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from engine_helpers import SCRIPT, agent, reply, use

from regista import ContextConfig, tool
from regista.context import SUMMARY_PREFIX, SUMMARY_SYSTEM
from regista.errors import PricingWarning, ProviderError
from regista.pricing import cost_usd
from regista.providers import ScriptedProvider
from regista.providers.base import set_meta
from regista.trace.events import ContextCompaction, ErrorEvent, LlmRequestEvent, SessionEnd
from regista.trace.reader import Trace
from regista.types import LlmRequest, LlmResponse, Usage

# -- compaction --------------------------------------------------------------------------


def _chatty_model() -> Any:
    turns: list[int] = []

    def model(request: LlmRequest) -> dict[str, Any]:
        if request.system == SUMMARY_SYSTEM:
            return {"content": [{"type": "text", "text": "SUMMARY of earlier turns"}]}
        turns.append(len(turns))
        if len(turns) > 5:
            return reply(text="finished")
        return reply(use(f"toolu_{len(turns)}", "echo", text="z" * 300))

    return model


async def test_compaction_is_recorded_and_the_conversation_stays_valid(tmp_path: Path) -> None:
    provider = ScriptedProvider(_chatty_model())
    context = ContextConfig(max_tokens=400, keep_last=1)
    result = await agent(tmp_path, None, provider=provider, context=context).run("go")
    trace = Trace.load(result.trace_path)
    compactions = trace.of_type(ContextCompaction)
    assert compactions, "the budget was passed: a compaction must happen"
    first = compactions[0]
    assert first.summary == "SUMMARY of earlier turns"
    assert first.replaced[0]["content"][0]["text"] == "go"
    assert first.tokens_before > 400
    assert trace.summary().compactions == len(compactions)
    assert any(s.kind == "compaction" for s in trace.steps())
    # The compaction call itself was sent to the model with the summary prompt.
    summary_requests = [r for r in provider.requests if r.system == SUMMARY_SYSTEM]
    assert len(summary_requests) == len(compactions)
    assert summary_requests[0].hash == first.request_hash
    # Every request after it starts with the summary and still alternates, and every
    # tool_result answers a tool_use of the message before it.
    calls = trace.llm_calls()
    after = [req for req, _ in calls if req.messages[0]["content"][0]["text"] != "go"]
    assert after
    for req in after:
        assert req.messages[0]["content"][0]["text"].startswith(SUMMARY_PREFIX)
        roles = [m["role"] for m in req.messages]
        assert roles == ["user", "assistant"] * (len(roles) // 2) + ["user"] * (len(roles) % 2)
        for prev, msg in zip(req.messages, req.messages[1:], strict=False):
            results = [b for b in msg["content"] if b.get("type") == "tool_result"]
            uses = {b["id"] for b in prev["content"] if b.get("type") == "tool_use"}
            assert {b["tool_use_id"] for b in results} <= uses
    # The rebuilt requests still hash as recorded after the history was rewritten.
    assert [r.hash for r, _ in calls] == [e.request_hash for e in trace.of_type(LlmRequestEvent)]
    assert result.stop_reason == "end_turn"


# -- pricing -----------------------------------------------------------------------------


def test_known_model_cost() -> None:
    usage = Usage(
        input_tokens=1_000_000,
        output_tokens=1_000_000,
        cache_creation_input_tokens=1_000_000,
        cache_read_input_tokens=1_000_000,
    )
    assert cost_usd("claude-sonnet-4-6", usage) == pytest.approx(3 + 15 + 3.75 + 0.3)
    assert cost_usd("claude-sonnet-4-5-20250929", usage) == cost_usd("claude-sonnet-4-5", usage)


def test_unknown_model_costs_none_with_a_warning() -> None:
    with pytest.warns(PricingWarning, match="no price known for model 'mystery-model-x'"):
        assert cost_usd("mystery-model-x", Usage(input_tokens=10)) is None


class _LiveLike:
    """A provider that reports itself as a live, non-scripted model."""

    name = "fake-live"

    def __init__(self, script: list[dict[str, Any]]) -> None:
        self._inner = ScriptedProvider(script)

    async def complete(self, request: LlmRequest, *, on_text: Any = None) -> LlmResponse:
        response = await self._inner.complete(request)
        response.model = request.model
        return set_meta(response, self.name)


async def test_live_cost_is_summed_and_unknown_is_never_a_silent_zero(tmp_path: Path) -> None:
    script = [reply(use("toolu_1", "echo", text="a")), reply(text="ok")]
    result = await agent(tmp_path, None, provider=_LiveLike(script)).run("go")
    assert result.cost_usd == pytest.approx(2 * (100 * 3 + 20 * 15) / 1e6)
    assert Trace.load(result.trace_path).summary().cost_usd == pytest.approx(result.cost_usd)

    with pytest.warns(PricingWarning):
        unknown = await agent(
            tmp_path, None, provider=_LiveLike(script), model="mystery-model-y"
        ).run("go")
    assert unknown.cost_usd is None
    trace = Trace.load(unknown.trace_path)
    assert trace.end is not None and trace.end.cost_usd is None
    assert trace.summary().cost_usd is None


# -- session.end on every exit path ------------------------------------------------------


def _end(path: Path) -> SessionEnd:
    end = Trace.load(path).end
    assert end is not None, "the trace must end with session.end"
    return end


async def test_end_when_done(tmp_path: Path) -> None:
    result = await agent(tmp_path, SCRIPT).run("go")
    end = _end(result.trace_path)
    assert (end.stop_reason, end.turns, end.steps, end.tool_calls) == (
        "end_turn",
        1,
        6,
        3,
    )  # one task
    assert end.output == "Done: hihi, 5."


async def test_end_at_max_turns(tmp_path: Path) -> None:
    looping = ScriptedProvider(lambda req: reply(use("toolu_x", "echo", text="again")))
    result = await agent(tmp_path, None, provider=looping, max_turns=3).run("go")
    # max_turns counts model calls; the run's turns are what the person typed: its task
    assert result.stop_reason == "max_turns" and result.turns == 1
    assert len(Trace.load(result.trace_path).llm_calls()) == 3
    assert _end(result.trace_path).stop_reason == "max_turns"


async def test_end_on_provider_error(tmp_path: Path) -> None:
    def failing(request: LlmRequest) -> dict[str, Any]:
        if len(request.messages) > 1:
            raise ConnectionError("network down")
        return reply(use("toolu_1", "echo", text="a"))

    with pytest.raises(ProviderError, match="network down") as exc:
        await agent(tmp_path, None, provider=ScriptedProvider(failing)).run("go")
    path = exc.value.trace_path
    assert path is not None
    end = _end(path)
    assert end.stop_reason == "error" and "network down" in (end.error or "")
    errors = Trace.load(path).of_type(ErrorEvent)
    assert [(e.where, e.step) for e in errors] == [("provider", 2)]


async def test_end_on_script_exhausted(tmp_path: Path) -> None:
    with pytest.raises(ProviderError):
        await agent(tmp_path, [reply(use("toolu_1", "echo", text="a"))]).run("go")
    (path,) = tmp_path.glob("*.jsonl")
    assert _end(path).stop_reason == "error"


async def test_end_on_cancellation(tmp_path: Path) -> None:
    started = asyncio.Event()

    @tool
    async def wait_forever() -> str:
        """Never returns."""
        started.set()
        await asyncio.sleep(3600)
        return "unreachable"

    a = agent(tmp_path, [reply(use("toolu_1", "wait_forever"))], tools=[wait_forever])
    task = asyncio.create_task(a.run("go"))
    await asyncio.wait_for(started.wait(), 5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    (path,) = tmp_path.glob("*.jsonl")
    end = _end(path)
    assert end.stop_reason == "cancelled"
    step = Trace.load(path).steps()[1]
    assert step.kind == "tool" and not step.complete


def test_run_sync(tmp_path: Path) -> None:
    result = agent(tmp_path, SCRIPT).run_sync("go")
    assert result.stop_reason == "end_turn" and result.trace_path.exists()


async def test_session_id_and_clock_make_byte_identical_traces(tmp_path: Path) -> None:
    from regista.loop import FakeClock

    paths = []
    for sub in ("a", "b"):
        r = await agent(
            tmp_path / sub, SCRIPT, session_id="01J00000000000000000000000", clock=FakeClock()
        ).run("go")
        assert r.session_id == "01J00000000000000000000000"
        paths.append(r.trace_path)
    assert paths[0].read_bytes() == paths[1].read_bytes()


async def test_an_invalid_scripted_response_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(ProviderError) as info:
        await agent(tmp_path, [{"content": "not a list of blocks"}]).run("Hi")
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith("ScriptedProvider: response 1 is invalid: content:")
    end = Trace.load(next(tmp_path.glob("*.jsonl"))).end
    assert end is not None and end.error == message


async def test_a_scripted_response_without_content_is_an_error(tmp_path: Path) -> None:
    """A dict with no content (a misspelt key) is not taken for an empty answer."""
    with pytest.raises(ProviderError, match=r"response 1 has no 'content' \(its keys: contnet\)"):
        await agent(tmp_path, [{"contnet": [{"type": "text", "text": "hi"}]}]).run("Hi")


async def test_a_provider_bug_names_the_provider(tmp_path: Path) -> None:
    class Broken:
        name = "in-house"

        async def complete(self, request: LlmRequest, *, on_text: Any = None) -> LlmResponse:
            raise KeyError("choices")

    with pytest.raises(ProviderError) as info:
        await agent(tmp_path, None, provider=Broken()).run("go")
    assert str(info.value) == "provider 'in-house' failed: KeyError: 'choices'"
    end = _end(next(tmp_path.glob("*.jsonl")))
    assert end.stop_reason == "error" and end.error == str(info.value)


@pytest.mark.parametrize("asynchronous", [False, True])
async def test_an_on_text_callback_that_raises_is_the_callers_error(
    tmp_path: Path, asynchronous: bool
) -> None:
    """A bug in the caller's streaming callback surfaces as itself, not as the provider's
    failure, and the trace still ends cleanly."""

    def sync_cb(step: int, delta: str) -> None:
        raise ValueError("my callback broke")

    async def async_cb(step: int, delta: str) -> None:
        raise ValueError("my callback broke")

    with pytest.raises(ValueError, match="my callback broke"):
        await agent(tmp_path, SCRIPT).run("go", on_text=async_cb if asynchronous else sync_cb)
    trace = Trace.load(next(tmp_path.glob("*.jsonl")))
    (error,) = [e for e in trace.events if isinstance(e, ErrorEvent)]
    assert (error.where, error.error_type) == ("agent", "ValueError")
    assert trace.end is not None and trace.end.stop_reason == "error"


async def test_a_provider_bug_in_a_forks_live_half_names_that_provider(tmp_path: Path) -> None:
    from regista import rewind

    class Broken:
        name = "in-house"

        async def complete(self, request: LlmRequest, *, on_text: Any = None) -> LlmResponse:
            raise KeyError("choices")

    recorded = await agent(tmp_path, SCRIPT).run("go")
    with pytest.raises(ProviderError, match=r"^provider 'in-house' failed: KeyError"):
        await rewind(recorded.trace_path, 2, agent(tmp_path, None, provider=Broken()))
