"""The writer's fast path (a line made from the fields, without a dict) writes the very bytes
the dict path writes and refuses what it refuses; the request encoder's shortcuts leave out
exactly what a value-by-value comparison leaves out, and the reader rebuilds every request."""

from __future__ import annotations

import io
import os
import random
import re
from collections import OrderedDict
from pathlib import Path
from typing import Any

import orjson
import pytest

from regista.errors import TraceWriteError
from regista.redact import redact_bytes
from regista.trace.canonical import request_hash, same_json
from regista.trace.compact import RequestDecoder, RequestEncoder
from regista.trace.events import (
    ContextCompaction,
    EventBase,
    LlmRequestEvent,
    LlmResponseEvent,
    PermissionDecision,
    SessionStart,
    ToolCall,
    ToolResult,
)
from regista.trace.reader import Trace
from regista.trace.validate import MAX_DEPTH, too_deep
from regista.trace.writer import TraceWriter, _nests_too_deep, _shape
from regista.types import LlmRequest

FUZZ_RUNS = int(os.environ.get("REGISTA_FUZZ_RUNS", "40"))
SORTED = orjson.OPT_SORT_KEYS
CLOCK = "2026-01-01T00:00:00.000Z"
ENVELOPE = ("schema_version", "session_id", "seq", "ts", "type")
CLASSES = [ToolCall, ToolResult, LlmResponseEvent, LlmRequestEvent, PermissionDecision]
SECRETS = [
    "sk-ant-api03-" + "a1B2" * 8,
    "AKIAABCDEFGHIJKLMNOP",
    "Bearer abcdefghijklmnop1234",
    "https://user:hunter2@example.com/x",
    "ghp_" + "a1" * 18,
]


def _rest(cls: type[EventBase]) -> list[str]:
    return [n for n in cls.model_fields if n not in ENVELOPE]


def _nested(levels: int, leaf: Any = 1) -> Any:
    value = leaf
    for i in range(levels):
        value = [value] if i % 2 else {"k": value}
    return value


def _text(rng: random.Random) -> str:
    parts = ["plain", "é ü 日本", "[{", '"quoted"', "\\", "\n", "x" * rng.randint(0, 300)]
    if rng.random() < 0.2:
        parts.append(rng.choice(SECRETS))
    return " ".join(rng.choice(parts) for _ in range(rng.randint(0, 4)))


def _scalar(rng: random.Random) -> Any:
    return rng.choice([_text(rng), rng.randint(-5, 10**12), 1.5, True, None, ""])


def _value(rng: random.Random, depth: int = 0) -> Any:
    roll = rng.random()
    if roll < 0.03:  # around the depth limit, in a value at level 2 of the line
        return _nested(MAX_DEPTH - 2 + rng.randint(-2, 1))
    if roll < 0.04:  # a dict subclass: orjson writes it as an object
        return OrderedDict(k=_nested(MAX_DEPTH + rng.randint(-2, 1)))
    if depth > 3 or roll < 0.5:
        return _scalar(rng)
    if roll < 0.75:
        return {f"k{i}": _value(rng, depth + 1) for i in range(rng.randint(0, 4))}
    return [_value(rng, depth + 1) for _ in range(rng.randint(0, 4))]


def _fields(rng: random.Random, cls: type[EventBase], results: list[tuple[str, Any]]) -> Any:
    # A field whose type cannot nest gets a scalar (a line with anything else is refused by
    # the reader's validation, whichever way it was written)
    nestable = _shape(cls).nestable
    fields = {n: _value(rng) if n in nestable else _scalar(rng) for n in _rest(cls)}
    if cls is ToolResult:
        fields["tool_use_id"] = f"u{rng.randint(0, 4)}"
    if cls is LlmRequestEvent:
        fields["system"] = rng.choice([None, "be brief", _text(rng)])
        fields["tools"] = rng.choice([[], [{"name": "f", "input_schema": {"type": "object"}}]])
        blocks: list[Any] = []
        for uid, content in results[-3:]:
            block: dict[str, Any] = {"type": "tool_result", "tool_use_id": uid}
            if rng.random() < 0.9:
                block["content"] = content if rng.random() < 0.8 else _value(rng)
            blocks.append(block)
        fields["messages"] = [{"role": "user", "content": blocks}, {"role": "user", "content": "x"}]
    roll = rng.random()
    if roll < 0.15:  # extras after the model's fields
        fields[f"extra_{rng.randint(0, 3)}"] = _value(rng)
    elif roll < 0.2:  # the fields out of order: the dict path
        keys = list(fields)
        rng.shuffle(keys)
        fields = {k: fields[k] for k in keys}
    elif roll < 0.23:  # a field left to its default (or missing): the dict path
        fields.pop(rng.choice(_rest(cls)))
    return fields


def _writers(tmp_path: Path, name: str, clock: Any) -> tuple[TraceWriter, TraceWriter]:
    pair = []
    for side in ("fast", "dicts"):
        w = TraceWriter(tmp_path / f"{name}-{side}.jsonl", "S1", clock=clock)
        w.write(SessionStart, task="t", model="m", provider="scripted")
        pair.append(w)
    return pair[0], pair[1]


def _outcome(write: Any, cls: type[EventBase], fields: dict[str, Any]) -> str:
    try:
        write(cls, fields)
    except Exception as exc:
        return type(exc).__name__
    return "ok"


@pytest.mark.parametrize("clock", ["constant", "fresh"])
def test_fuzz_the_fast_path_writes_the_bytes_of_the_dict_path(tmp_path: Path, clock: str) -> None:
    rng = random.Random(7071)
    fixed = (lambda: CLOCK) if clock == "constant" else (lambda: "".join(CLOCK))
    for run in range(FUZZ_RUNS):
        fast, dicts = _writers(tmp_path, str(run), fixed)
        results: list[tuple[str, Any]] = []
        for _ in range(rng.randint(1, 12)):
            cls = rng.choice(CLASSES)
            fields = _fields(rng, cls, results)
            copy = orjson.dumps(fields, default=dict)
            got = _outcome(fast.append, cls, fields)
            assert got == _outcome(dicts._append, cls, fields)
            assert orjson.dumps(fields, default=dict) == copy  # the fields are not changed
            if cls is ToolResult and got == "ok":
                results.append((fields["tool_use_id"], fields["content"]))
            assert fast.path.read_bytes() == dicts.path.read_bytes()
        fast.close()
        dicts.close()
        for line in fast.path.read_bytes().splitlines():
            assert redact_bytes(line) == line  # every secret shape was replaced


def test_the_fast_path_refuses_a_value_nested_too_deep_even_in_a_dict_subclass(
    tmp_path: Path,
) -> None:
    with TraceWriter(tmp_path / "t.jsonl", "S1") as w:
        w.write(SessionStart, task="t", model="m", provider="scripted")
        fields = {"step": 0, "turn": 0, "tool_use_id": "t", "name": "f"}
        w.append(ToolCall, {**fields, "input": OrderedDict(k=_nested(MAX_DEPTH - 2))})
        good = w.path.read_bytes()
        for deep in (OrderedDict(k=_nested(MAX_DEPTH - 1)), {"k": _nested(MAX_DEPTH - 1)}):
            with pytest.raises(TraceWriteError, match="nested more than"):
                w.append(ToolCall, {**fields, "input": deep})
            assert w.path.read_bytes() == good
    assert len(Trace.load(tmp_path / "t.jsonl")) == 2


def test_a_clock_that_gives_no_json_value_is_pydantics_to_say(tmp_path: Path) -> None:
    with TraceWriter(tmp_path / "t.jsonl", "S1") as w:
        w.write(SessionStart, task="t", model="m", provider="scripted")
        w.clock = object  # type: ignore[assignment]
        with pytest.raises(ValueError, match="ts"):
            w.append(ToolCall, {"step": 0, "turn": 0, "tool_use_id": "t", "name": "f", "input": {}})
        assert w.next_seq == 1


class _ValueByValue:
    """The encoder as it compared everything value by value (the reference)."""

    def __init__(self) -> None:
        self.context: Any = None
        self.results: dict[str, Any] = {}

    def encode(self, line: dict[str, Any]) -> dict[str, Any]:
        out = dict(line)
        if self.context is not None and all(
            same_json(line[k], v) for k, v in zip(("system", "tools"), self.context, strict=True)
        ):
            del out["system"], out["tools"]
        self.context = (line["system"], line["tools"])
        refs: list[str] = []
        bare = {
            b.get("tool_use_id")
            for m in line["messages"]
            for b in (m.get("content") if isinstance(m.get("content"), list) else [])
            if isinstance(b, dict) and b.get("type") == "tool_result" and "content" not in b
        }
        messages = []
        for m in line["messages"]:
            content = m.get("content")
            if not isinstance(content, list):
                messages.append(m)
                continue
            blocks = []
            for b in content:
                uid = b.get("tool_use_id") if isinstance(b, dict) else None
                if (
                    isinstance(b, dict)
                    and b.get("type") == "tool_result"
                    and "content" in b
                    and isinstance(uid, str)
                    and uid in self.results
                    and uid not in bare
                    and same_json(b["content"], self.results[uid])
                ):
                    blocks.append({k: v for k, v in b.items() if k != "content"})
                    if uid not in refs:
                        refs.append(uid)
                else:
                    blocks.append(b)
            messages.append({**m, "content": blocks})
        if refs:
            out["messages"] = messages
            out["result_refs"] = refs
        return out


def _message(rng: random.Random, results: dict[str, Any]) -> Any:
    if rng.random() < 0.2:
        return {"role": "assistant", "content": _text(rng)}
    blocks: list[Any] = [{"type": "text", "text": "t"}]
    for _ in range(rng.randint(0, 3)):
        uid: Any = rng.choice([*results, "u9", 7]) if results else "u9"
        block: dict[str, Any] = {"type": "tool_result", "tool_use_id": uid}
        if rng.random() < 0.9:
            recorded = results.get(uid) if isinstance(uid, str) else None
            roll = rng.random()  # the recorded object, an equal copy, or another value
            sent = recorded if roll < 0.6 else orjson.loads(orjson.dumps(recorded))
            block["content"] = sent if roll < 0.85 else [{"type": "text", "text": "other"}]
        blocks.append(block)
    return {"role": "user", "content": blocks}


def test_fuzz_the_encoder_leaves_out_what_a_value_by_value_comparison_does() -> None:
    rng = random.Random(8081)
    systems = ["s1", None, "s2"]
    toolsets: list[Any] = [[], [{"name": "a", "n": 1}], [{"name": "a", "n": 1.0}]]
    for _ in range(FUZZ_RUNS * 5):
        mine, reference, decoder = RequestEncoder(), _ValueByValue(), RequestDecoder()
        results: dict[str, Any] = {}
        system, tools = rng.choice(systems), rng.choice(toolsets)
        for step in range(rng.randint(1, 8)):
            if rng.random() < 0.3:
                uid = f"u{rng.randint(0, 3)}"
                results[uid] = rng.choice(["r", "", {"a": [1]}, [{"type": "text", "text": "x"}]])
                mine.note_result(uid, results[uid])
                reference.results[uid] = results[uid]
                decoder.resolve(
                    {"type": "tool.result", "tool_use_id": uid, "content": results[uid]}
                )
            roll = rng.random()  # the same objects, equal copies, or others
            if roll < 0.2:
                system, tools = rng.choice(systems), rng.choice(toolsets)
            elif roll < 0.4:
                tools = orjson.loads(orjson.dumps(tools))
            elif roll < 0.5 and system is not None:
                system = system[:1] + system[1:]  # an equal string, not the same object
            messages = [_message(rng, results) for _ in range(rng.randint(0, 3))]
            line = {"type": "llm.request", "step": step, "system": system, "tools": tools}
            line["messages"] = messages
            sent = orjson.dumps(line)
            got = mine.encode(line)
            mine.commit()
            assert orjson.dumps(got) == orjson.dumps(reference.encode(line))
            assert orjson.dumps(line) == sent  # not changed
            rebuilt = orjson.loads(orjson.dumps(got))
            decoder.resolve(rebuilt)
            assert orjson.dumps(rebuilt, option=SORTED) == orjson.dumps(line, option=SORTED)


def test_system_and_tools_equal_as_json_but_not_as_bytes_are_written_again(
    tmp_path: Path,
) -> None:
    """Tools parsed afresh with their keys in another order are not the same bytes: they are
    written again (a little larger, never wrong)."""
    path = tmp_path / "t.jsonl"
    tools = [{"name": "a", "input_schema": {"type": "object", "properties": {}}}]
    reordered = [{"input_schema": {"properties": {}, "type": "object"}, "name": "a"}]
    copy = orjson.loads(orjson.dumps(tools))
    with TraceWriter(path, "S1") as w:
        w.write(SessionStart, task="t", model="m", provider="scripted")
        for step, sent in enumerate([tools, copy, reordered, reordered]):
            req = LlmRequest(model="m", system="s", tools=sent, messages=[], max_tokens=9)
            w.append(
                LlmRequestEvent,
                {
                    "step": step,
                    "turn": step,
                    "request_hash": request_hash(req.canonical()),
                    "model": "m",
                    "system": "s",
                    "tools": sent,
                    "tool_choice": None,
                    "max_tokens": 9,
                    "params": {},
                    "messages_prefix": 0,
                    "messages": [],
                },
            )
    lines = [orjson.loads(x) for x in path.read_bytes().splitlines()[1:]]
    assert ["tools" in x for x in lines] == [True, False, True, False]
    trace = Trace.load(path)
    for ev, request in trace.iter_requests():
        assert request_hash(LlmRequest.model_validate(request.canonical()).canonical()) == (
            ev.request_hash
        )


#: Values of the nested fields that the reader's check takes (the writer asks it too).
_READS_BACK: dict[str, Any] = {"content": "x", "response": {}, "replaced": [], "usage": {}}


def test_every_kind_the_recorder_writes_takes_the_fast_path(tmp_path: Path) -> None:
    """The recorder passes the fields in the model's order: no dict is made for them."""
    made: list[type[EventBase]] = []
    with TraceWriter(tmp_path / "t.jsonl", "S1") as w:
        real = w._append
        w._append = lambda cls, *a: (made.append(cls), real(cls, *a))[1]  # type: ignore[method-assign]
        for cls in (ToolCall, ToolResult, LlmResponseEvent, PermissionDecision, ContextCompaction):
            w.append(cls, {name: _READS_BACK.get(name, 0) for name in _rest(cls)})
        w.append(ToolCall, {"step": 0, "turn": 0, "tool_use_id": "t", "name": "f"})
    assert made == [ToolCall]  # the one without its input


def test_the_default_clock_stamps_each_line_with_its_millisecond(tmp_path: Path) -> None:
    with TraceWriter(tmp_path / "t.jsonl", "S1") as w:
        w.write(SessionStart, task="t", model="m", provider="scripted")
        for step in range(50):
            w.append(
                ToolCall, {"step": step, "turn": 0, "tool_use_id": "t", "name": "f", "input": {}}
            )
    stamps = [orjson.loads(x)["ts"] for x in w.path.read_bytes().splitlines()]
    assert stamps == sorted(stamps)
    assert all(re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", ts) for ts in stamps)
    assert len(Trace.load(w.path)) == 51


def _shape_value(rng: random.Random, depth: int, width: int) -> Any:
    """A value ``depth`` levels deep along one branch, with up to ``width`` shallow siblings
    at each level (many brackets, few levels) and brackets in its strings."""
    if depth <= 0:
        return rng.choice(["[{", "x", 1, None])
    siblings: list[Any] = [rng.choice([{}, [], {"a": "[["}, [1]]) for _ in range(width)]
    inner = _shape_value(rng, depth - 1, width)
    if rng.random() < 0.5:
        return [*siblings, inner]
    return {"deep": inner, **{f"s{i}": s for i, s in enumerate(siblings)}}


def test_fuzz_the_depth_check_agrees_with_the_readers() -> None:
    """Counting brackets by taking them out, and walking the values, say what the reader's
    check says of the line: dense lines, deep lines, subclasses, brackets in strings; the
    fast path (which counts in line) refuses exactly those lines."""
    rng = random.Random(9091)
    w = TraceWriter("mem.jsonl", "S1", file=io.BytesIO())
    for _ in range(FUZZ_RUNS * 10):
        value = _shape_value(rng, rng.randint(90, 104), rng.choice([0, 0, 1, 3]))
        if rng.random() < 0.2:
            value = OrderedDict(v=value)
        data = {"step": 1, "input": value}
        line = orjson.dumps(data, option=orjson.OPT_APPEND_NEWLINE)
        deep = too_deep(line, orjson.loads(line))
        assert _nests_too_deep(line, data) == deep
        fields = {"step": 1, "turn": 0, "tool_use_id": "t", "name": "f", "input": value}
        assert (_outcome(w.append, ToolCall, fields) == "TraceWriteError") == deep


def test_a_line_with_many_brackets_but_few_levels_is_written(tmp_path: Path) -> None:
    with TraceWriter(tmp_path / "t.jsonl", "S1") as w:
        w.write(SessionStart, task="t", model="m", provider="scripted")
        rows = [{"id": i, "tags": ["a", "b"]} for i in range(300)]
        fields = {"step": 0, "turn": 0, "tool_use_id": "t", "name": "f", "input": {"rows": rows}}
        w.append(ToolCall, fields)
    assert Trace.load(tmp_path / "t.jsonl").events[1].input == {"rows": rows}


def test_a_request_is_judged_with_the_results_it_would_refer_to(tmp_path: Path) -> None:
    """A tool result nested deep enough to fit its own line, but not a request's message,
    is not referred to: the request's line holds it and is refused, as the whole request
    nests past the limit; the trace keeps what came before."""
    path = tmp_path / "t.jsonl"
    content = [{"type": "text", "text": "x", "more": _nested(MAX_DEPTH - 5)}]
    messages = [{"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "u1", "content": content}
    ]}]  # fmt: skip
    req = LlmRequest(model="m", system="s", messages=messages, max_tokens=9)
    with TraceWriter(path, "S1") as w:
        w.write(SessionStart, task="t", model="m", provider="scripted")
        w.append(ToolResult, {"step": 0, "tool_use_id": "u1", "name": "f", "content": content,
                              "is_error": False, "source": "live", "duration_ms": 0.0})  # fmt: skip
        with pytest.raises(TraceWriteError, match="nested more than"):
            w.append(
                LlmRequestEvent,
                {
                    "step": 1,
                    "turn": 0,
                    "request_hash": request_hash(req.canonical()),
                    "model": "m",
                    "system": "s",
                    "tools": [],
                    "tool_choice": None,
                    "max_tokens": 9,
                    "params": {},
                    "messages_prefix": 0,
                    "messages": messages,
                },
            )
    assert [ev.type for ev in Trace.load(path).events] == ["session.start", "tool.result"]


#: How far a clock moves between two lines: forward, and back (a clock set back).
_STEPS_NS = [0, 1, 999_999, 1_000_000, 59_999_999_999, 86_400 * 10**9, 10**15]
_STEPS_NS += [-1_000_000, -999_000_000, -61 * 10**9]


def test_the_default_clock_stamps_each_line_with_its_utc_millisecond(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Lines a millisecond, seconds, minutes or days apart, or back in time (a clock set
    back), say the time ``datetime`` says."""
    from datetime import UTC, datetime

    from regista.trace import writer as writer_module
    from regista.trace.events import second_ts

    rng = random.Random(606)
    now = 1_780_000_000_000_000_000
    times = []
    for _ in range(400):
        now += rng.choice(_STEPS_NS)
        times.append(now)
    monkeypatch.setattr(writer_module, "time_ns", iter(times).__next__)
    with TraceWriter(tmp_path / "t.jsonl", "S1") as w:
        for step in range(len(times)):
            w.append(
                ToolCall, {"step": step, "turn": 0, "tool_use_id": "t", "name": "f", "input": {}}
            )
    stamps = [orjson.loads(x)["ts"] for x in w.path.read_bytes().splitlines()]
    for ns, ts in zip(times, stamps, strict=True):
        second, milli = divmod(ns // 1_000_000, 1000)
        expected = datetime.fromtimestamp(second, UTC).strftime("%Y-%m-%dT%H:%M:%S")
        assert ts == f"{expected}.{milli:03d}Z"
        assert second_ts(second) == expected
