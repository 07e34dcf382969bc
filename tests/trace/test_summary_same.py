"""``Trace.summary`` counts and adds up as one plain pass over the events would."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from files import SAMPLES as SAMPLE_TRACES
from files import found
from show_odd import odd_trace

from regista.cli.show_pass import StepsPass
from regista.pricing import add_costs
from regista.tokens import Tokens, tokens_of
from regista.trace.events import (
    ContextCompaction,
    ErrorEvent,
    LlmResponseEvent,
    PermissionDecision,
    SessionEnd,
    ToolCall,
)
from regista.trace.grouping import failed
from regista.trace.reader import Trace, TraceSummary
from regista.types import Usage
from regista.vocab import end_outcome

SAMPLES = found(SAMPLE_TRACES)


def plain_summary(trace: Trace) -> TraceSummary:
    """The summary as one loop over the events says it (the reference)."""
    start, end = trace.start, trace.end
    usage, cost, turns, tokens = Usage(), 0.0, 0, Tokens()
    tool_calls = denials = compactions = 0
    errors = []
    for ev in trace.events:
        if isinstance(ev, LlmResponseEvent):
            usage = usage + Usage.model_validate(ev.response.get("usage") or {})
            tokens = tokens + tokens_of(ev.response.get("usage"))
            turns = max(turns, ev.turn + 1)
            cost = add_costs(cost, ev.cost_usd)
        elif isinstance(ev, ToolCall):
            tool_calls += 1
        elif isinstance(ev, PermissionDecision):
            denials += not ev.allowed
        elif isinstance(ev, ContextCompaction):
            compactions += 1
            usage = usage + Usage.model_validate(ev.usage or {})
            tokens = tokens + tokens_of(ev.usage)
            cost = add_costs(cost, ev.cost_usd)
        elif isinstance(ev, ErrorEvent):
            errors.append(ev)
    if end is not None:
        cost, turns = end.cost_usd, end.turns
    steps = trace.steps()
    # An error event of no step (no number, or one no opener had begun when it came; see
    # regista.trace.grouping) is an error of the run.
    grouped = {id(ev) for st in steps for ev in st.events}
    return TraceSummary(
        session_id=trace.session_id,
        task=start.task,
        model=start.model,
        provider=start.provider,
        turns=turns,
        steps=len(steps),
        tool_calls=tool_calls,
        cost_usd=cost,
        stop_reason=end.stop_reason if end else None,
        usage=usage,
        tokens=tokens,
        output=end.output if end else None,
        replay_of=start.replay_of,
        forked_from=start.forked_from,
        complete=end is not None,
        errors=sum(failed(s.flags) for s in steps)
        + sum(1 for ev in errors if id(ev) not in grouped),
        denials=denials,
        compactions=compactions,
        status=end_outcome(end),
    )


def _odd(tmp_path: Path, **kw: Any) -> Trace:
    return Trace.load(odd_trace(tmp_path / "odd.jsonl", **kw))


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.stem)
def test_the_samples(path: Path) -> None:
    for messages in (True, False):
        trace = Trace.load(path, messages=messages)
        assert trace.summary() == plain_summary(trace) == StepsPass(trace, None).summary


@pytest.mark.parametrize(
    "kw", [{}, {"end": False}, {"fork": True}, {"steps": False}, {"shuffled": True}]
)
def test_odd_traces(tmp_path: Path, kw: dict[str, Any]) -> None:
    """``regista show`` adds up its own summary as it reads the steps: the same one."""
    trace = _odd(tmp_path, **kw)
    assert trace.summary() == plain_summary(trace) == StepsPass(trace, 50).summary


def test_costs_are_added_in_trace_order_and_an_unknown_one_makes_the_total_unknown(
    tmp_path: Path,
) -> None:
    trace = _odd(tmp_path, end=False)
    priced = [ev for ev in trace.events if isinstance(ev, LlmResponseEvent | ContextCompaction)]
    for i, ev in enumerate(priced):  # sums whose value depends on the order of the additions
        ev.__dict__["cost_usd"] = [0.1, 1e16, 0.3, -1e16, 0.7][i % 5]
    expected = plain_summary(trace).cost_usd
    assert trace.summary().cost_usd == expected == StepsPass(trace, None).summary.cost_usd
    priced[3].__dict__["cost_usd"] = None
    assert trace.summary().cost_usd is None is plain_summary(trace).cost_usd
    assert StepsPass(trace, None).summary.cost_usd is None


def test_usage_of_an_odd_shape_is_read_as_usage_reads_it(tmp_path: Path) -> None:
    trace = _odd(tmp_path)
    responses = [ev for ev in trace.events if isinstance(ev, LlmResponseEvent)]
    responses[0].response["usage"] = {"input_tokens": 5.0, "output_tokens": True}
    responses[1].response["usage"] = None
    assert trace.summary() == plain_summary(trace) == StepsPass(trace, None).summary
    responses[2].response["usage"] = {"input_tokens": "many"}
    with pytest.raises(ValueError):
        trace.summary()
    with pytest.raises(ValueError):
        StepsPass(trace, None)


def test_errors_before_their_step_and_errors_of_no_step(tmp_path: Path) -> None:
    trace = _odd(tmp_path)
    events = trace.events
    sid = trace.session_id
    early = ErrorEvent(session_id=sid, seq=0, step=3, error_type="E", message="before its step")
    lost = ErrorEvent(session_id=sid, seq=0, step=999, error_type="E", message="no such step")
    end = events.pop() if isinstance(events[-1], SessionEnd) else None
    events.insert(1, early)
    events.append(lost)
    if end is not None:
        events.append(end)
    trace = Trace(events, trace.path)
    assert trace.summary() == plain_summary(trace) == StepsPass(trace, None).summary
