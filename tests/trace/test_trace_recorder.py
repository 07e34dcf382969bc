"""The recorder writes valid traces on its own, without an agent loop; formats are detected
from a file's first bytes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from regista import replay
from regista.errors import TraceWriteError
from regista.pricing import add_costs
from regista.trace.formats import (
    REGISTA,
    TraceFormat,
    formats,
    is_regista_trace,
    open_run,
    register_format,
)
from regista.trace.reader import Trace
from regista.trace.recorder import TraceRecorder, common_prefix
from regista.types import LlmRequest, LlmResponse, Usage

TOOL = {"name": "get_weather", "description": "Weather.", "input_schema": {"type": "object"}}


def _record(path: Path) -> tuple[LlmRequest, LlmRequest]:
    user = {"role": "user", "content": [{"type": "text", "text": "Weather in Paris?"}]}
    first = LlmRequest(model="m", system="Be brief.", messages=[user], tools=[TOOL])
    call = {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}}
    answer1 = LlmResponse(
        model="m",
        content=[call],
        stop_reason="tool_use",
        usage=Usage(input_tokens=10, output_tokens=5),
    )
    result = {"type": "tool_result", "tool_use_id": "toolu_1", "content": "sunny"}
    second = first.model_copy(
        update={
            "messages": [
                user,
                {"role": "assistant", "content": [call]},
                {"role": "user", "content": [result]},
            ]
        }
    )
    answer2 = LlmResponse(
        model="m",
        content=[{"type": "text", "text": "Sunny."}],
        usage=Usage(input_tokens=20, output_tokens=3),
    )
    with TraceRecorder.create(path, "01RECORDERTEST000000000000", clock=lambda: "T") as rec:
        rec.start(
            task="Weather in Paris?",
            model="m",
            provider="scripted",
            instructions="Be brief.",
            tools=[TOOL],
        )
        assert rec.model_step(first, answer1, provider="scripted", cost_usd=0.0) == 0
        assert rec.tool_step("toolu_1", "get_weather", {"city": "Paris"}, "sunny") == 1
        step = rec.request(second)
        rec.response(step, answer2, provider="scripted", cost_usd=0.0)
        rec.end("end_turn", output="Sunny.")
        assert rec.closed
    return first, second


def test_a_trace_written_by_the_recorder_alone_reads_back(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    first, second = _record(path)
    trace = Trace.load(path)
    assert trace.complete and [e.seq for e in trace.events] == list(range(len(trace)))
    assert [e.type for e in trace.events] == [
        "session.start",
        "llm.request",
        "llm.response",
        "tool.call",
        "permission.decision",
        "tool.result",
        "llm.request",
        "llm.response",
        "session.end",
    ]
    lines = [orjson.loads(x) for x in path.read_bytes().splitlines()]
    # the second request stores only what is new after the shared first message
    assert lines[6]["messages_prefix"] == 1 and len(lines[6]["messages"]) == 2
    # the reader rebuilds each full request, and its hash is the one recorded
    requests = [req for req, _ in trace.llm_calls()]
    assert [r.messages for r in requests] == [first.messages, second.messages]
    assert trace.request_hashes() == [first.hash, second.hash]
    assert [st.index for st in trace.steps()] == [0, 1, 2]
    summary = trace.summary()
    assert (summary.turns, summary.steps, summary.tool_calls) == (1, 3, 1)
    assert summary.usage.input_tokens == 30 and summary.cost_usd == 0.0
    assert summary.output == "Sunny."
    assert trace.tool_results()["toolu_1"].content == "sunny"


async def test_a_recorded_trace_replays(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    _record(path)
    result = await replay(path, trace_dir=tmp_path / "replays")
    assert result.output == "Sunny." and result.recorded_steps == 3


def test_an_unknown_cost_keeps_the_total_unknown(tmp_path: Path) -> None:
    assert add_costs(1.0, 2.0) == 3.0
    assert add_costs(None, 2.0) is None and add_costs(1.0, None) is None
    with TraceRecorder.create(tmp_path / "t.jsonl", "S") as rec:
        rec.start(task="t", model="m", provider="p")
        req = LlmRequest(model="m", messages=[{"role": "user", "content": "hi"}])
        rec.model_step(req, LlmResponse(), provider="p", cost_usd=None)
        rec.model_step(req, LlmResponse(), provider="p", cost_usd=0.5)
        end = rec.end("end_turn")
    assert end.cost_usd is None and rec.cost_usd is None


def test_regista_traces_are_detected_by_their_first_bytes(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    _record(path)
    assert open_run(path).format is REGISTA
    assert open_run(path).in_place  # a regista trace is read where it is
    assert open_run(path).trace().session_id == "01RECORDERTEST000000000000"
    # keys in another order, leading white space: still a regista trace
    assert is_regista_trace(b' {"seq": 0, "session_id": "S", "schema_version": 1}\n')
    assert not is_regista_trace(b'{"type": "user", "sessionId": "x"}\n')
    assert not is_regista_trace(b"\x00\x01not json")
    # nothing claims it: regista's reader answers, and its error names the problem
    other = tmp_path / "other.jsonl"
    other.write_bytes(b"hello\n")
    assert open_run(other).format is REGISTA
    assert open_run(tmp_path / "missing.jsonl").format is REGISTA


def test_a_registered_format_opens_the_files_it_claims(tmp_path: Path) -> None:
    source = tmp_path / "t.jsonl"
    _record(source)
    foreign = tmp_path / "foreign.log"
    foreign.write_bytes(b"FOREIGN " + source.name.encode() + b"\n")

    def convert(path: Path, data: bytes) -> bytes:
        return (path.parent / data.split()[1].decode()).read_bytes()

    fmt = TraceFormat("foreign", lambda head: head.startswith(b"FOREIGN "), convert)
    before = formats()
    register_format(fmt)
    try:
        assert formats()[0] is REGISTA and formats()[-1] is fmt
        assert open_run(foreign).format is fmt and open_run(source).format is REGISTA
        opened = open_run(foreign)
        assert opened.format is fmt and not opened.in_place
        assert opened.trace().session_id == "01RECORDERTEST000000000000"
        assert Trace.load(foreign).session_id == "01RECORDERTEST000000000000"
        index = opened.index()  # no index of its own: the converted bytes, kept in memory
        assert index.scan() and index.start is not None
        index.close()
        register_format(TraceFormat("foreign", fmt.handles_bytes, fmt.convert))
        assert len(formats()) == len(before) + 1  # same name: replaced, not added
    finally:
        from regista.trace import formats as module

        module._formats[:] = list(before)


def test_the_shared_history_is_the_same_messages_then_equal_ones() -> None:
    import copy
    import random

    rng = random.Random(5)
    pool: list[Any] = [{"role": "user", "content": c} for c in ("a", "b", 1, 1.0, True, [])]
    for _ in range(300):
        prev = [rng.choice(pool) for _ in range(rng.randint(0, 6))]
        cur = [m if rng.random() < 0.6 else copy.deepcopy(m) for m in prev[: rng.randint(0, 6)]]
        cur += [rng.choice(pool) for _ in range(rng.randint(0, 3))]
        plain = 0
        while plain < min(len(prev), len(cur)) and prev[plain] == cur[plain]:
            plain += 1
        assert common_prefix(prev, cur) == plain


def _bad_calls(rec: TraceRecorder) -> list[tuple[str, Any]]:
    """Calls with a value of another type than the event's field (as untyped code may make)."""
    bad: Any = None
    return [
        ("input", lambda: rec.tool_call("toolu_9", "f", bad)),
        ("name", lambda: rec.tool_call("toolu_9", bad, {})),
        ("content", lambda: rec.tool_result(0, "toolu_9", "f", [1, 2])),
        ("source", lambda: rec.tool_result(0, "toolu_9", "f", "x", source="elsewhere")),
        ("duration_ms", lambda: rec.tool_result(0, "toolu_9", "f", "x", duration_ms="slow")),
        ("by", lambda: rec.decision(0, "toolu_9", allowed=True, reason=None, by=["me"])),
        ("where", lambda: rec.error("nowhere", "E", "m")),
        ("provider", lambda: rec.response(0, LlmResponse(model="m"), provider=bad)),
        ("task", lambda: rec.start(task=bad, model="m", provider="p")),
        ("stop_reason", lambda: rec.end(bad)),
    ]


def test_a_value_the_reader_would_refuse_is_refused_and_the_trace_stays_whole(
    tmp_path: Path,
) -> None:
    """A call that gives a value of another type is refused with one clear error, nothing is
    written, and the recording goes on: the trace never holds a line the reader refuses."""
    path = tmp_path / "t.jsonl"
    with TraceRecorder.create(path, "01JCHECKS000000000000000000") as rec:
        rec.start(task="t", model="m", provider="p")
        for field, call in _bad_calls(rec):
            size = path.stat().st_size
            with pytest.raises(
                TraceWriteError, match=rf"cannot record an? [a-z.]+ event in .*: {field}"
            ):
                call()
            assert path.stat().st_size == size, field
        step = rec.tool_call("toolu_1", "f", {"q": 1})
        rec.decision(step, "toolu_1", allowed=True, reason=None, by="policy")
        rec.tool_result(step, "toolu_1", "f", [{"type": "text", "text": "ok"}], duration_ms=3)
        rec.end("end_turn")
    trace = Trace.load(path)
    assert [ev.type for ev in trace.events] == [
        "session.start", "tool.call", "permission.decision", "tool.result", "session.end"
    ]  # fmt: skip
    assert trace.events[1].step == 0 and trace.events[3].duration_ms == 3.0


def test_turns_are_what_the_person_typed(tmp_path: Path) -> None:
    """The recorder counted model answers as turns: a loop's one task with three calls read
    "3 turns", a conversation of two prompts through the proxy "5 turns", while an import
    of the same conversation said 2. A turn is a request whose last message is new text the
    person typed: not tool results, not a harness's notes, not a retry."""
    rec = TraceRecorder.create(tmp_path / "t.jsonl", "s-turns")
    rec.start(task="weather", model="m", provider="anthropic")
    use = {"type": "tool_use", "id": "toolu_1", "name": "w", "input": {}}
    asks = LlmResponse.model_validate({"content": [use], "stop_reason": "tool_use"})
    done = LlmResponse.model_validate({"content": [{"type": "text", "text": "ok"}]})
    note = {"type": "text", "text": "<system-reminder>be brief</system-reminder>"}
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": [note, {"type": "text", "text": "Weather?"}]}
    ]
    turns = []

    def call(answer: LlmResponse) -> None:
        step = rec.request(LlmRequest(model="m", messages=messages))
        rec.response(step, answer, provider="anthropic")
        turns.append((rec.turns, Trace.load(tmp_path / "t.jsonl").events[-1].turn))

    call(asks)
    call(asks)  # a retry of the same request
    result = {"type": "tool_result", "tool_use_id": "toolu_1", "content": "sun"}
    messages += [
        {"role": "assistant", "content": [use]},
        {"role": "user", "content": [result, note]},
    ]
    call(done)
    messages += [
        {"role": "assistant", "content": done.content},
        {"role": "user", "content": "And Rome?"},
    ]
    call(done)
    rec.end("end_turn")
    assert turns == [(1, 0), (1, 0), (1, 0), (2, 1)]
    assert Trace.load(tmp_path / "t.jsonl").summary().turns == 2
