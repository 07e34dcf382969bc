"""Reading a trace for a listing of its steps: without the messages, the same steps."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from files import SAMPLES as SAMPLE_TRACES
from files import found

from regista.errors import RegistaError, TraceFormatError
from regista.trace.events import LlmRequestEvent, ToolCall
from regista.trace.reader import Trace
from regista.trace.steps import Step
from regista.vocab import step_gist

SAMPLES = found(SAMPLE_TRACES)
assert SAMPLES[0].stem == "refund_denied_compaction"  # the lines changed below are in it


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.stem)
def test_a_listing_reads_the_same_steps_and_summary(path: Path) -> None:
    full, listed = Trace.load(path), Trace.load(path, messages=False)
    assert listed.summary() == full.summary()
    assert [step_gist(s) for s in listed.steps()] == [step_gist(s) for s in full.steps()]
    assert [s.title for s in listed.steps()] == [s.title for s in full.steps()]
    for a, b in zip(full.events, listed.events, strict=True):
        if isinstance(a, LlmRequestEvent):
            assert (b.model, b.step, b.turn, b.messages, b.tools) == (
                a.model,
                a.step,
                a.turn,
                [],
                [],
            )
        elif a.type == "context.compaction":
            assert len(b.replaced) == len(a.replaced) and b.summary == a.summary
        else:
            assert b == a


def _with_line(tmp_path: Path, kind: str, change: dict[str, object]) -> Path:
    lines = SAMPLES[0].read_bytes().splitlines()
    k = next(i for i, ln in enumerate(lines) if f'"type":"{kind}"'.encode() in ln)
    lines[k] = orjson.dumps({**orjson.loads(lines[k]), **change})
    path = tmp_path / "t.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


def test_a_listing_does_not_look_into_request_messages(tmp_path: Path) -> None:
    path = _with_line(tmp_path, "llm.request", {"messages": [{"role": 3}]})
    with pytest.raises(TraceFormatError, match="messages"):
        Trace.load(path)
    assert Trace.load(path, messages=False).summary() == Trace.load(SAMPLES[0]).summary()


@pytest.mark.parametrize(
    ("kind", "change", "message"),
    [
        ("llm.request", {"model": 7}, "model"),
        ("llm.request", {"schema_version": 99}, "schema"),
        ("context.compaction", {"replaced": "none"}, "replaced"),
        ("context.compaction", {"usage": {"input_tokens": "x"}}, "usage"),
        ("llm.response", {"response": {"content": "x"}}, "content"),
    ],
)
def test_what_a_listing_reads_is_still_checked(
    tmp_path: Path, kind: str, change: dict[str, object], message: str
) -> None:
    path = _with_line(tmp_path, kind, change)
    with pytest.raises(RegistaError, match=message):  # a format error, or a newer schema
        Trace.load(path, messages=False)


def test_a_step_sees_events_added_after_it_was_looked_at() -> None:
    call = ToolCall(session_id="s", seq=1, step=0, turn=0, tool_use_id="t", name="f")
    step = Step(index=0, kind="tool")
    assert step.tool_call is None
    step.events.append(call)
    assert step.tool_call is call and step.roles() == {ToolCall: call}
    other = call.model_copy(update={"name": "g"})
    step.events = [other]  # a new list of the same length
    assert step.tool_call is other


def test_a_half_written_request_is_dropped_as_the_reader_drops_it(tmp_path: Path) -> None:
    """A listing reads a request from its head: cut after its head, it is still half
    written, and left out with a warning as ``Trace.load`` leaves it out."""
    import asyncio

    from builders import rich_agent

    from regista.errors import TraceWarning
    from regista.trace.listing import Listing
    from regista.trace.reader import Trace

    path = asyncio.run(rich_agent(tmp_path).run("weather")).trace_path
    lines = path.read_bytes().split(b"\n")
    last = max(i for i, line in enumerate(lines) if b'"type":"llm.request"' in line[:200])
    head = lines[last].index(b'"messages_prefix"') + 40  # past the head, short of the end
    cut = tmp_path / "cut.jsonl"
    cut.write_bytes(b"\n".join(lines[:last]) + b"\n" + lines[last][:head])
    with pytest.warns(TraceWarning, match="half-written"):
        listing = Listing.load(cut)
    with pytest.warns(TraceWarning, match="half-written"):
        trace = Trace.load(cut)
    assert listing.truncated and trace.truncated
    assert len(listing.events) == len(trace.events) == last
