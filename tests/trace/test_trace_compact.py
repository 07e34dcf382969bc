"""Compact requests (schema 2): what is left out of a line, and that every request is
rebuilt exactly (its hash proves it), by the loader and by the index alike."""

from __future__ import annotations

import contextlib
import os
import random
from pathlib import Path
from typing import Any

import orjson
import pytest
from files import SAMPLES, V1_TRACES, found

from regista import replay
from regista.errors import RegistaError, TraceFormatError, TraceWriteError
from regista.trace.canonical import request_hash
from regista.trace.compact import REFERABLE_DEPTH, RequestDecoder
from regista.trace.events import (
    SCHEMA_VERSION,
    EventAdapter,
    LlmRequestEvent,
    SessionStart,
    ToolResult,
)
from regista.trace.index import TraceIndex
from regista.trace.migrations import migrate
from regista.trace.reader import Trace
from regista.trace.validate import deeper
from regista.trace.writer import TraceWriter
from regista.types import LlmRequest

V1 = V1_TRACES
FUZZ_RUNS = int(os.environ.get("REGISTA_FUZZ_RUNS", "40"))


def _traces() -> list[Path]:
    return found(SAMPLES) + found(V1)


def _plainly_read(path: Path) -> list[Any]:
    """The events of ``path`` read the plain way: each whole line completed, migrated
    and validated on its own (no part of one event taken from another)."""
    decoder = RequestDecoder()
    events = []
    for line in path.read_bytes().splitlines():
        data = orjson.loads(line)
        if data["schema_version"] != SCHEMA_VERSION:
            data = migrate(data)
        decoder.resolve(data)
        events.append(EventAdapter.validate_python(data))
    return events


def _check_every_request(path: Path) -> int:
    """Rebuild every request of ``path`` both ways and recompute its hash from scratch."""
    trace = Trace.load(path)
    plain = _plainly_read(path)
    assert [ev.model_dump() for ev in trace.events] == [ev.model_dump() for ev in plain]
    assert [ev.model_fields_set for ev in trace.events] == [ev.model_fields_set for ev in plain]
    rebuilt = list(trace.iter_requests())
    for ev, request in rebuilt:
        full = LlmRequest.model_validate(request.canonical())
        assert request_hash(full.canonical()) == ev.request_hash, f"{path.name} step {ev.step}"
        assert trace.request_for(ev).canonical() == request.canonical()
    index = TraceIndex(path)
    index.scan()
    by_step = {ev.step: ev for ev, _ in rebuilt}
    for pos, entry in enumerate(index.steps):
        if entry.kind != "model":
            continue
        ev = index.request_event(pos)
        assert ev is not None
        assert ev.model_dump() == by_step[entry.index].model_dump()
        messages = index.request_messages(pos)
        assert messages == trace.request_for(by_step[entry.index]).messages
    index.close()
    return len(rebuilt)


@pytest.mark.parametrize("path", _traces(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_request_is_rebuilt_exactly(path: Path) -> None:
    assert _check_every_request(path) > 0


def test_the_samples_leave_out_what_the_trace_already_holds() -> None:
    for path in found(SAMPLES):
        lines = [orjson.loads(x) for x in path.read_bytes().splitlines()]
        requests = [x for x in lines if x["type"] == "llm.request"]
        assert all(x["schema_version"] == SCHEMA_VERSION for x in lines)
        assert "system" in requests[0] and "tools" in requests[0]
        with_context = [x for x in requests if "system" in x]
        assert len(with_context) < len(requests) / 2, path.name  # the compaction's own
        assert any(x.get("result_refs") for x in requests), path.name
        for x in requests:
            for m in x["messages"]:
                for b in m["content"] if isinstance(m["content"], list) else []:
                    if b["type"] == "tool_result" and b["tool_use_id"] in x.get("result_refs", []):
                        assert "content" not in b


def test_a_version_1_trace_reads_as_it_did(tmp_path: Path) -> None:
    """The committed version-1 traces load, migrate, and replay to the same hash chain."""
    for path in found(V1):
        assert b'"schema_version":1,' in path.read_bytes()[:40]
        old = Trace.load(path)
        new = Trace.load(SAMPLES / path.name)  # the same session, written as version 2
        # A migrated request says its hash is over the plain canonical JSON (version 1's).
        # Turns are counted as the person typed them since these were written (they counted
        # model answers): the counts read as written.
        turns = {"turn", "turns"}
        assert [e.model_dump(exclude={"request_hash_form", *turns}) for e in old.events] == [
            e.model_dump(exclude=turns) for e in new.events
        ]
        requests = [e for e in old.events if isinstance(e, LlmRequestEvent)]
        assert {(e.model_extra or {}).get("request_hash_form") for e in requests} == {"plain"}


async def test_a_version_1_trace_replays_strictly(tmp_path: Path, sample_db: Path) -> None:
    path = V1 / "refund_search_loop.jsonl"
    result = await replay(path, trace_dir=tmp_path)
    assert result.diverged_at is None
    replayed = Trace.load(result.trace_path)
    assert replayed.request_hashes() == Trace.load(path).request_hashes()
    assert result.trace_path.stat().st_size < path.stat().st_size * 0.7


# -- the writer's choices, event by event -------------------------------------------------


def _request(w: TraceWriter, step: int, prev: list[Any], messages: list[Any], **kw: Any) -> None:
    req = LlmRequest(
        model="m",
        system=kw.get("system"),
        messages=messages,
        tools=kw.get("tools", []),
        max_tokens=100,
    )
    prefix = 0
    while prefix < min(len(prev), len(messages)) and prev[prefix] == messages[prefix]:
        prefix += 1
    w.write(
        LlmRequestEvent,
        step=step,
        turn=step,
        request_hash=req.hash,
        model=req.model,
        system=req.system,
        tools=req.tools,
        tool_choice=None,
        max_tokens=100,
        params={},
        messages_prefix=prefix,
        messages=messages[prefix:],
    )


def _result_message(uid: str, content: Any, **extra: Any) -> dict[str, Any]:
    return {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": uid, "content": content, **extra}],
    }


def _lines(path: Path) -> list[dict[str, Any]]:
    return [orjson.loads(x) for x in path.read_bytes().splitlines()]


def test_system_and_tools_are_written_when_they_change(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    tool = {"name": "f", "description": "d", "input_schema": {"type": "object"}}
    msgs: list[Any] = [{"role": "user", "content": "hi"}]
    plan = [("A", [tool]), ("A", [tool]), ("B", [tool]), ("B", [tool]), ("B", []), (None, [])]
    with TraceWriter(path, "S") as w:
        w.write(SessionStart, task="t", model="m", provider="scripted")
        prev: list[Any] = []
        for i, (system, tools) in enumerate(plan):
            cur = [*msgs, *({"role": "user", "content": str(j)} for j in range(i))]
            _request(w, i, prev, cur, system=system, tools=tools)
            prev = cur
    written = [x for x in _lines(path) if x["type"] == "llm.request"]
    assert ["system" in x for x in written] == [True, False, True, False, True, True]
    assert ["tools" in x for x in written] == [True, False, True, False, True, True]
    assert _check_every_request(path) == len(plan)
    rebuilt = [r for _, r in Trace.load(path).iter_requests()]
    assert [(r.system, len(r.tools)) for r in rebuilt] == [(s, len(t)) for s, t in plan]


def test_a_tool_result_is_referred_to_only_when_it_is_the_same(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    blocks = [{"type": "text", "text": "x", "n": 1}]
    cases = [
        ("same", "out", "out", {}),
        ("differs", "out", "other", {}),
        ("error", "bad", "bad", {"is_error": True}),
        ("blocks", blocks, [dict(blocks[0])], {}),
        (
            "json-types",
            [{"type": "text", "text": "t", "n": 1}],
            [{"type": "text", "text": "t", "n": True}],
            {},
        ),
        (
            "float",
            [{"type": "text", "text": "t", "n": 1}],
            [{"type": "text", "text": "t", "n": 1.0}],
            {},
        ),
    ]
    with TraceWriter(path, "S") as w:
        w.write(SessionStart, task="t", model="m", provider="scripted")
        prev: list[Any] = []
        cur: list[Any] = [{"role": "user", "content": "go"}]
        for i, (uid, recorded, sent, extra) in enumerate(cases):
            w.write(ToolResult, step=i, tool_use_id=uid, name="f", content=recorded)
            cur = [*cur, _result_message(uid, sent, **extra)]
            _request(w, i, prev, cur)
            prev = cur
    refs = [x.get("result_refs", []) for x in _lines(path) if x["type"] == "llm.request"]
    assert refs == [["same"], [], ["error"], ["blocks"], [], []]
    assert _check_every_request(path) == len(cases)


def test_a_block_without_content_keeps_its_id_inline(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    with TraceWriter(path, "S") as w:
        w.write(SessionStart, task="t", model="m", provider="scripted")
        w.write(ToolResult, step=0, tool_use_id="u", name="f", content="out")
        bare = {"type": "tool_result", "tool_use_id": "u"}
        messages = [{"role": "user", "content": [bare, *_result_message("u", "out")["content"]]}]
        _request(w, 1, [], messages)
    (request,) = [x for x in _lines(path) if x["type"] == "llm.request"]
    assert "result_refs" not in request
    _check_every_request(path)


def _nested(levels: int) -> list[Any]:
    """Tool result content that nests ``levels`` levels deep (the list itself is one)."""
    inner: Any = "leaf"
    for _ in range(levels - 2):
        inner = {"k": inner}
    return [{"type": "text", "text": "t", "k": inner}] if levels > 1 else []


@pytest.mark.parametrize("levels", [REFERABLE_DEPTH - 1, REFERABLE_DEPTH, REFERABLE_DEPTH + 1])
def test_a_result_too_deep_for_a_request_is_not_referred_to(tmp_path: Path, levels: int) -> None:
    """Put back in a request, a result's content sits five levels down: one that would make
    the request nest past the limit is written whole, and refused as the request is."""
    content = _nested(levels)
    assert deeper(content, levels) is False and deeper(content, levels - 1) is True
    path = tmp_path / "t.jsonl"
    with TraceWriter(path, "S") as w:
        w.write(SessionStart, task="t", model="m", provider="scripted")
        w.write(ToolResult, step=0, tool_use_id="u", name="f", content=content)
        messages = [{"role": "user", "content": "go"}, _result_message("u", content)]
        if levels > REFERABLE_DEPTH:
            with pytest.raises(TraceWriteError, match="nested more than"):
                _request(w, 1, [], messages)
            return
        _request(w, 1, [], messages)
    (request,) = [x for x in _lines(path) if x["type"] == "llm.request"]
    assert request["result_refs"] == ["u"]
    assert _check_every_request(path) == 1


# -- bad compact lines ----------------------------------------------------------------------


def _compact_trace(tmp_path: Path) -> Path:
    path = tmp_path / "t.jsonl"
    with TraceWriter(path, "S") as w:
        w.write(SessionStart, task="t", model="m", provider="scripted")
        w.write(ToolResult, step=0, tool_use_id="u1", name="f", content="one")
        m1 = [{"role": "user", "content": "go"}, _result_message("u1", "one")]
        _request(w, 1, [], m1, system="S")
        w.write(ToolResult, step=2, tool_use_id="u2", name="f", content="two")
        m2 = [*m1, _result_message("u2", "two")]
        _request(w, 3, m1, m2, system="S")
    return path


def _rewrite(path: Path, lineno: int, change: Any) -> None:
    lines = path.read_bytes().splitlines()
    data = orjson.loads(lines[lineno - 1])
    change(data)
    lines[lineno - 1] = orjson.dumps(data)
    path.write_bytes(b"\n".join(lines) + b"\n")


@pytest.mark.parametrize(
    ("line", "change", "message"),
    [
        (3, lambda d: d.pop("system"), r":3: invalid 'llm.request' event: no system, and no"),
        (5, lambda d: d.update(result_refs=["nope"]), r":5: .*'nope', which no earlier"),
        (5, lambda d: d.update(result_refs="u2"), r":5: .*list of tool_use_ids"),
        (3, lambda d: d.update(result_refs=["u2"]), r":3: .*'u2', which no earlier"),
        # a result too deep to be put back in a request (made by hand: never written so)
        (
            4,
            lambda d: d.update(content=_nested(REFERABLE_DEPTH + 1)),
            r":5: .*'u2', whose content would nest more than 100 levels deep",
        ),
    ],
)
def test_a_bad_reference_names_its_line(
    tmp_path: Path, line: int, change: Any, message: str
) -> None:
    path = _compact_trace(tmp_path)
    assert _check_every_request(path) == 2
    _rewrite(path, line, change)
    with pytest.raises(TraceFormatError, match=message):
        Trace.load(path)
    index = TraceIndex(path)
    index.scan()
    with pytest.raises(TraceFormatError, match=message):
        for pos in range(len(index)):
            index.step(pos)


# -- seeded fuzz ---------------------------------------------------------------------------


def _random_session(rng: random.Random, path: Path) -> None:
    systems = ["You help.", "You refund.", None, "x" * 50]
    toolsets: list[list[dict[str, Any]]] = [
        [],
        [{"name": "a", "input_schema": {"type": "object"}}],
        [{"name": "b", "description": "é", "input_schema": {"type": "object", "n": 1}}],
    ]
    contents: list[Any] = [
        "r",
        "",
        "long " * 40,
        [{"type": "text", "text": "t"}],
        [{"type": "text", "text": "", "n": True}],
    ]
    with TraceWriter(path, "S") as w:
        w.write(SessionStart, task="t", model="m", provider="scripted")
        prev: list[Any] = []
        cur: list[Any] = [{"role": "user", "content": "go"}]
        system, tools = rng.choice(systems), rng.choice(toolsets)
        for step in range(rng.randint(1, 25)):
            if rng.random() < 0.2:
                system = rng.choice(systems)
            if rng.random() < 0.2:
                tools = rng.choice(toolsets)
            if rng.random() < 0.1:  # a compaction rewrote the history
                cur = [{"role": "user", "content": f"summary {step}"}, *cur[-2:]]
            blocks = []
            for _ in range(rng.randint(0, 3)):
                uid = f"u{rng.randint(0, 6)}"  # ids may repeat
                recorded = rng.choice(contents)
                w.write(ToolResult, step=step, tool_use_id=uid, name="f", content=recorded)
                sent = recorded if rng.random() < 0.8 else rng.choice(contents)
                block: dict[str, Any] = {"type": "tool_result", "tool_use_id": uid}
                if rng.random() < 0.95:
                    block["content"] = sent
                blocks.append(block)
            if blocks:
                cur = [*cur, {"role": "user", "content": blocks}]
            cur = [*cur, {"role": "assistant", "content": [{"type": "text", "text": str(step)}]}]
            _request(w, step, prev, cur, system=system, tools=tools)
            prev = cur


def test_fuzz_random_sessions_rebuild_exactly(tmp_path: Path) -> None:
    rng = random.Random(1111)
    for run in range(FUZZ_RUNS):
        path = tmp_path / f"{run}.jsonl"
        _random_session(rng, path)
        _check_every_request(path)


def test_fuzz_damaged_compact_lines_are_one_clear_error(tmp_path: Path) -> None:
    rng = random.Random(2222)
    keys = ["system", "tools", "result_refs", "messages", "messages_prefix"]
    for run in range(FUZZ_RUNS):
        path = tmp_path / f"{run}.jsonl"
        _random_session(rng, path)
        lines = path.read_bytes().splitlines()
        requests = [i for i, x in enumerate(lines) if b'"llm.request"' in x]
        i = rng.choice(requests)
        data = orjson.loads(lines[i])
        key = rng.choice(keys)
        data[key] = rng.choice([None, [], ["u1"], ["zz"], "u1", 3, {"a": 1}, [{"x": 1}]])
        if rng.random() < 0.3:
            data.pop(key)
        lines[i] = orjson.dumps(data)
        path.write_bytes(b"\n".join(lines) + b"\n")
        if key == "tools" and data.get(key, []) != []:  # wrong tool schemas: always refused
            with pytest.raises(TraceFormatError, match=f":{i + 1}: invalid 'llm.request'"):
                Trace.load(path)
        with contextlib.suppress(RegistaError):
            Trace.load(path).llm_calls()
        index = TraceIndex(path)
        index.scan()
        try:
            for pos in range(len(index)):
                index.step(pos)
        except RegistaError:
            pass
        index.close()


def _import_like_session(rng: random.Random, path: Path, kept: int | None) -> None:
    """A session whose requests each add a few messages (an import's), some of them
    repeating a result sent before (a resumed transcript repeats lines), as the very
    object recorded or as an equal copy; written keeping ``kept`` referred results."""
    contents: list[Any] = [
        "r",
        "long " * 40,
        [{"type": "text", "text": "t", "n": 1}],
        [{"type": "text", "text": "t", "n": True}],
        [{"type": "text", "text": "t", "n": 1.0}],
        [{"type": "text", "text": "t", "b": [1, 2], "a": None}],
    ]
    recorded: dict[str, Any] = {}
    with TraceWriter(path, "S", clock=lambda: "2026-01-01T00:00:00.000Z", referred_kept=kept) as w:
        w.write(SessionStart, task="t", model="m", provider="scripted")
        prev: list[Any] = []
        cur: list[Any] = [{"role": "user", "content": "go"}]
        for step in range(rng.randint(1, 30)):
            blocks = []
            for _ in range(rng.randint(0, 3)):
                uid = f"u{rng.randint(0, 40)}"
                if uid in recorded and rng.random() < 0.5:  # sent again, not recorded again
                    sent = recorded[uid]
                    if rng.random() < 0.5:
                        sent = orjson.loads(orjson.dumps(sent))
                    elif rng.random() < 0.2:
                        sent = rng.choice(contents)
                else:
                    recorded[uid] = sent = rng.choice(contents)
                    w.write(ToolResult, step=step, tool_use_id=uid, name="f", content=sent)
                blocks.append({"type": "tool_result", "tool_use_id": uid, "content": sent})
            if blocks:
                cur = [*cur, {"role": "user", "content": blocks}]
            cur = [*cur, {"role": "assistant", "content": [{"type": "text", "text": str(step)}]}]
            _request(w, step, prev, cur)
            prev = cur


def test_fuzz_what_is_written_does_not_depend_on_how_many_results_are_kept(
    tmp_path: Path,
) -> None:
    """An import keeps only the last results its requests referred to; an older one is
    known by a digest of its JSON. With one kept, a result repeated later (a resumed
    transcript) was written whole, with 64 referred to: the bytes depended on the cache."""
    rng = random.Random(2727)
    repeated = 0
    for run in range(FUZZ_RUNS):
        seed = rng.random()
        written = {}
        for kept in (1, 2, 64, None):
            path = tmp_path / f"{run}-{kept}.jsonl"
            _import_like_session(random.Random(seed), path, kept)
            written[kept] = path.read_bytes()
        assert written[1] == written[2] == written[64] == written[None], f"run {run}"
        _check_every_request(tmp_path / f"{run}-1.jsonl")
        refs = [
            uid
            for x in _lines(tmp_path / f"{run}-1.jsonl")
            if x["type"] == "llm.request"
            for uid in x.get("result_refs", [])
        ]
        repeated += len(refs) - len(set(refs))
    assert repeated > FUZZ_RUNS, "few results referred to twice: the fuzz tests little"
