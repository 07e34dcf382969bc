"""Fork and rewind: change one step and let the agent carry on."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from builders import SIMPLE_SCRIPT, answer, by_turn, simple_agent, tool_use
from files import DENIED, HAPPY, LOOP, search_hit

from regista import ModelAnswerEdit, ToolResultEdit, fork, rewind
from regista.errors import InvalidEditError, ProviderError, ReplayDivergence, UserError
from regista.providers import AnthropicProvider, ScriptedProvider
from regista.samples.refund import refund_agent
from regista.trace.events import LlmResponseEvent
from regista.trace.reader import Trace

pytestmark = pytest.mark.usefixtures("sample_db")  # agents made from agent_ref


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


async def test_fixing_the_search_result_ends_the_loop(tmp_path: Path) -> None:
    before = _digest(LOOP)
    result = await fork(LOOP, 1, ToolResultEdit(search_hit()), live_after=1, trace_dir=tmp_path)
    assert result.parent_stop_reason == "max_turns"
    assert result.stop_reason == "end_turn"
    assert "refunded $189.00" in (result.output or "")
    assert (result.recorded_steps, result.edited_steps) == (1, 1)
    assert result.live_steps == result.steps - 2
    assert result.cost_usd == 0.0
    assert _digest(LOOP) == before  # the parent is only read
    trace = Trace.load(result.trace_path)
    parent = Trace.load(LOOP)
    assert trace.start.forked_from == {
        "session_id": parent.session_id,
        "at_step": 1,
        "edit": {"kind": "tool_result", "content": search_hit(), "is_error": False},
        "live_after": 1,
        "path": str(LOOP),
    }
    assert [s.source for s in trace.steps()[:3]] == ["recorded", "edit", "live"]
    # the steps before the edit are the parent's, hash for hash
    assert trace.request_hashes()[0] == parent.request_hashes()[0]


async def test_an_edited_tool_result_changes_the_outcome(tmp_path: Path) -> None:
    edit = ToolResultEdit('{"error": "order ORD-1042 not found"}', is_error=True)
    result = await fork(HAPPY, 3, edit, live_after=3, trace_dir=tmp_path)
    assert result.parent_stop_reason == "end_turn"
    assert result.stop_reason == "max_turns"
    step3 = Trace.load(result.trace_path).steps()[3]
    assert step3.result is not None and step3.result.is_error and step3.source == "edit"


async def test_rewind_replays_the_prefix_and_goes_live(tmp_path: Path) -> None:
    result = await rewind(HAPPY, 4, trace_dir=tmp_path)
    assert result.stop_reason == "end_turn"
    assert (result.recorded_steps, result.edited_steps, result.live_steps) == (4, 0, 5)
    trace = Trace.load(result.trace_path)
    assert trace.start.forked_from is not None and trace.start.forked_from["edit"] is None
    assert trace.request_hashes()[:3] == Trace.load(HAPPY).request_hashes()[:3]


async def test_rewind_live_half_through_the_real_sdk(tmp_path: Path, fake_anthropic: Any) -> None:
    fake_anthropic.script(
        {
            "content": [{"type": "text", "text": "Refund issued (live)."}],
            "stop_reason": "end_turn",
            "usage": {"input_tokens": 900, "output_tokens": 12},
        },
    )
    agent = refund_agent()
    agent.trace_dir = tmp_path
    provider = AnthropicProvider(
        "claude-sonnet-4-6",
        api_key="sk-test",
        base_url=fake_anthropic.url,
        max_retries=0,
        stream=True,
    )
    result = await rewind(HAPPY, 8, agent=agent, provider=provider)
    assert result.output == "Refund issued (live)."
    assert result.live_steps == 1 and result.recorded_steps == 8
    assert result.cost_usd is not None and result.cost_usd > 0
    sent = fake_anthropic.requests[0].body
    parent_request = Trace.load(HAPPY).steps()[8].request
    assert parent_request is not None
    assert sent["messages"] == parent_request.messages
    assert sent["system"] == parent_request.system


async def test_loose_playback_records_whether_requests_matched(tmp_path: Path) -> None:
    result = await fork(
        HAPPY, 3, ToolResultEdit('{"status": "lost"}'), loose=True, trace_dir=tmp_path
    )
    assert result.live_steps == 0
    assert result.stop_reason == "end_turn"
    matched = [ev.matched for ev in Trace.load(result.trace_path).of_type(LlmResponseEvent)]
    assert matched == [None, None, False, False, False]
    assert result.matched == {4: False, 6: False, 8: False}


async def test_model_answer_edit(tmp_path: Path) -> None:
    recorded = await simple_agent(tmp_path).run("Weather?")
    edit = ModelAnswerEdit([tool_use("toolu_x", "get_forecast", city="Oslo", days=1)])
    live = ScriptedProvider(by_turn(SIMPLE_SCRIPT))
    agent = simple_agent(tmp_path, provider=live)
    result = await fork(recorded.trace_path, 0, edit, live_after=0, agent=agent)
    steps = Trace.load(result.trace_path).steps()
    assert steps[0].source == "edit"
    assert steps[1].tool_call is not None and steps[1].tool_call.input == {
        "city": "Oslo",
        "days": 1,
    }
    assert steps[1].source == "live"
    assert result.output == "It is sunny in Paris."


async def test_model_answer_edit_at_a_call_that_failed(tmp_path: Path) -> None:
    """The provider failed at step 2: an answer given there is what the fork goes on from."""

    def failing(request: Any) -> dict[str, Any]:
        if sum(1 for m in request.messages if m["role"] == "assistant"):
            raise ConnectionError("overloaded")
        return SIMPLE_SCRIPT[0]

    with pytest.raises(ProviderError) as failed:
        await simple_agent(tmp_path, provider=ScriptedProvider(failing)).run("Weather?")
    parent = failed.value.trace_path
    assert parent is not None
    live = simple_agent(tmp_path, provider=ScriptedProvider(by_turn(SIMPLE_SCRIPT)))
    loose = await fork(parent, 2, ModelAnswerEdit.text("Sunny, says the edit."), loose=True)
    assert (loose.stop_reason, loose.output) == ("end_turn", "Sunny, says the edit.")
    assert (loose.recorded_steps, loose.edited_steps, loose.live_steps) == (2, 1, 0)
    edit = ModelAnswerEdit([tool_use("toolu_x", "get_forecast", city="Oslo", days=1)])
    result = await fork(parent, 2, edit, live_after=2, agent=live)
    steps = Trace.load(result.trace_path).steps()
    assert [s.source for s in steps] == ["recorded", "recorded", "edit", "live", "live"]
    assert steps[3].tool_call is not None and steps[3].tool_call.input["city"] == "Oslo"
    assert result.output == "It is sunny in Paris."


def test_model_answer_parse() -> None:
    assert ModelAnswerEdit.parse("hello").content == [{"type": "text", "text": "hello"}]
    as_dict = ModelAnswerEdit.parse('{"content": "plain"}').content
    assert as_dict == [{"type": "text", "text": "plain"}]
    blocks = ModelAnswerEdit.parse('[{"type": "text", "text": "x"}]').content
    assert blocks == [{"type": "text", "text": "x"}]
    with pytest.raises(InvalidEditError, match="not valid"):
        ModelAnswerEdit.parse('[{"type": "text", "text": ')


@pytest.mark.parametrize(
    ("at", "edit", "message"),
    [
        (99, ToolResultEdit("x"), "step 99 does not exist"),
        (-1, ToolResultEdit("x"), "does not exist"),
        (0, ToolResultEdit("x"), "a tool-result edit needs a tool step"),
        (1, ModelAnswerEdit.text("x"), "a model-answer edit needs a model step"),
        (
            0,
            ModelAnswerEdit([{"type": "tool_use", "name": "get_order", "input": "{bad"}]),
            "input is not valid JSON",
        ),
        (0, ModelAnswerEdit([{"type": "tool_use", "name": "nope", "input": {}}]), "unknown tool"),
        (0, ModelAnswerEdit([{"type": "image"}]), "unsupported block type"),
        (0, ModelAnswerEdit([]), "at least one"),
        (0, ModelAnswerEdit.text("  "), "cannot be empty"),
    ],
)
async def test_bad_edits_are_rejected_and_nothing_is_written(
    tmp_path: Path, at: int, edit: Any, message: str
) -> None:
    before = _digest(HAPPY)
    with pytest.raises(InvalidEditError, match=message):
        await fork(HAPPY, at, edit, live_after=at, trace_dir=tmp_path)
    assert _digest(HAPPY) == before
    assert not list(tmp_path.glob("*.jsonl"))


async def test_no_agent_fails_before_doing_anything(tmp_path: Path) -> None:
    recorded = await simple_agent(tmp_path / "a").run("Weather?")
    assert Trace.load(recorded.trace_path).start.agent_ref is None
    with pytest.raises(UserError, match="--agent module:attr"):
        await rewind(recorded.trace_path, 2, trace_dir=tmp_path / "b")
    assert not (tmp_path / "b").exists()


async def test_changed_agent_before_the_edit_is_a_divergence(tmp_path: Path) -> None:
    recorded = await simple_agent(tmp_path).run("Weather?")
    other = simple_agent(tmp_path, instructions="Be terse.")
    with pytest.raises(ReplayDivergence, match=r"request\.system"):
        await fork(recorded.trace_path, 1, ToolResultEdit("x"), live_after=1, agent=other)


async def test_agent_given_as_a_reference(tmp_path: Path) -> None:
    result = await rewind(HAPPY, 8, agent="regista.samples.refund:refund_agent", trace_dir=tmp_path)
    assert result.stop_reason == "end_turn"


def test_fork_edit_json_round_trip() -> None:
    d = ToolResultEdit("x", True).to_dict()
    assert json.loads(json.dumps(d)) == {"kind": "tool_result", "content": "x", "is_error": True}
    _ = answer


COMPACTED = DENIED


async def test_loose_playback_never_serves_a_summary_as_a_model_answer(tmp_path: Path) -> None:
    """A shorter result keeps the fork under the context budget for longer: it compacts
    later than the parent, and the parent's summary must not come back as a model's answer
    (model calls get recorded answers, the compaction the recorded summary)."""
    parent = Trace.load(COMPACTED)
    assert [s.kind for s in parent.steps()][10:] == ["compaction", "model", "tool", "model"]
    result = await fork(COMPACTED, 8, ToolResultEdit("ok"), loose=True, trace_dir=tmp_path)
    trace = Trace.load(result.trace_path)
    assert [s.kind for s in trace.steps()][10:] == ["model", "tool", "compaction", "model"]
    assert trace.steps()[12].compaction is not None
    assert parent.steps()[10].compaction is not None
    assert trace.steps()[12].compaction.summary == parent.steps()[10].compaction.summary
    assert result.output == parent.summary().output
    assert result.stop_reason == "end_turn"


async def test_loose_playback_cannot_invent_a_summary(tmp_path: Path) -> None:
    """A much longer result makes the fork compact more often than the parent: there is no
    recorded summary left to serve, and the error says how to go on."""
    with pytest.raises(ReplayDivergence, match="compacts its context once more") as info:
        await fork(COMPACTED, 1, ToolResultEdit("x" * 4000), loose=True, trace_dir=tmp_path)
    assert "leave out loose=True" in str(info.value)
