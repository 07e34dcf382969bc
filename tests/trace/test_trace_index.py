"""TraceIndex: lazy line offsets per step, incremental scans, on-demand decoding."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from regista import Agent, tool
from regista.errors import TraceError, TraceFormatError
from regista.loop import FakeClock
from regista.providers import ScriptedProvider
from regista.trace.index import TraceIndex
from regista.trace.reader import Trace


@tool
def echo(text: str) -> str:
    """Echo."""
    return text * 3


def _trace(folder: Path) -> Path:
    script = [
        {"content": [{"type": "tool_use", "name": "echo", "input": {"text": "a"}}]},
        {"content": [{"type": "tool_use", "name": "echo", "input": {"text": "b"}}]},
        {"content": [{"type": "text", "text": "done"}]},
    ]
    agent = Agent(
        provider=ScriptedProvider(script),
        tools=[echo],
        trace_dir=folder,
        clock=FakeClock(),
        session_id="01INDEX",
    )
    return asyncio.run(agent.run("echo twice")).trace_path


def test_index_matches_the_reader(tmp_path: Path) -> None:
    path = _trace(tmp_path)
    index = TraceIndex(path)
    assert index.scan()
    trace = Trace.load(path)
    assert [(e.index, e.kind, e.tool) for e in index.steps] == [
        (s.index, s.kind, s.tool_call.name if s.tool_call else None) for s in trace.steps()
    ]
    assert index.start is not None and index.start.task == "echo twice"
    assert index.end is not None and index.end.stop_reason == trace.end.stop_reason  # type: ignore[union-attr]
    for pos, step in enumerate(trace.steps()):
        assert index.step(pos).events == step.events
        if step.kind == "model":
            req = trace.request_for(step.request_event)  # type: ignore[arg-type]
            assert index.request_messages(pos) == req.messages


def test_incremental_scan_and_half_written_line(tmp_path: Path) -> None:
    data = _trace(tmp_path).read_bytes()
    growing = tmp_path / "growing.jsonl"
    growing.write_bytes(data[: len(data) // 2])
    index = TraceIndex(growing)
    index.scan()
    assert index.truncated and index.end is None
    before = len(index)
    growing.write_bytes(data)
    index.scan()
    assert not index.truncated and index.end is not None
    assert len(index) >= before


def test_bad_files(tmp_path: Path) -> None:
    with pytest.raises(TraceError, match="no such trace file"):
        TraceIndex(tmp_path / "missing.jsonl")
    with pytest.raises(TraceError, match="is a directory"):
        TraceIndex(tmp_path)
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    with pytest.raises(TraceError, match="empty trace"):
        TraceIndex(empty).scan()


def test_a_corrupt_line_says_what_is_wrong_with_it(tmp_path: Path) -> None:
    lines = _trace(tmp_path).read_bytes().splitlines(keepends=True)
    for bad, said in [
        (b"garbage that is not JSON\n", r"corrupt.jsonl:3: not valid JSON"),
        (b'{"schema_version": 1, "hello": "world"}\n', r"corrupt.jsonl:3: .*"),
    ]:
        corrupt = tmp_path / "corrupt.jsonl"
        corrupt.write_bytes(b"".join([*lines[:2], bad, *lines[3:]]))
        with pytest.raises(TraceFormatError, match=said):
            TraceIndex(corrupt).scan()


def _summary_traces(folder: Path) -> list[Path]:
    from builders import rich_agent
    from files import SAMPLES, V1_TRACES, found

    from regista.errors import RegistaError

    paths = found(SAMPLES) + found(V1_TRACES)  # version 1 migrated on read
    try:
        rich = asyncio.run(rich_agent(folder, max_turns=4).run("Weather in Paris and Rome?"))
        paths.append(rich.trace_path)
    except RegistaError:
        pass
    paths.append(_trace(folder / "echo"))
    return paths


def test_the_index_summary_is_the_loaded_summary(tmp_path: Path) -> None:
    """Denials, tool errors, compactions, unfinished and cut-short traces alike."""
    import warnings

    from regista.trace.index import read_summary

    paths = _summary_traces(tmp_path)
    cut: list[Path] = []
    for path in paths:
        lines = path.read_bytes().splitlines(keepends=True)
        for keep in (1, len(lines) // 2, len(lines) - 1):
            short = tmp_path / f"cut-{len(cut)}.jsonl"
            half = lines[keep][: len(lines[keep]) // 2] if keep < len(lines) else b""
            short.write_bytes(b"".join(lines[:keep]) + half)
            cut.append(short)
    for path in paths + cut:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            loaded = Trace.load(path).summary()
        assert read_summary(path) == loaded, path


def test_the_index_summary_refuses_what_the_loader_refuses(tmp_path: Path) -> None:
    """Responses and compactions are read without the whole validation only when plain:
    an odd usage or cost gets the loader's own error."""
    import orjson

    from regista.trace.index import read_summary

    path = _trace(tmp_path)
    lines = path.read_bytes().splitlines()
    for field, value in (("input_tokens", "many"), ("cost_usd", "free")):
        events = [orjson.loads(line) for line in lines]
        response = next(ev for ev in events if ev["type"] == "llm.response")
        if field == "cost_usd":
            response["cost_usd"] = value
        else:
            response["response"]["usage"] = {field: value}
        bad = tmp_path / f"bad-{field}.jsonl"
        bad.write_bytes(b"".join(orjson.dumps(ev) + b"\n" for ev in events))
        with pytest.raises(TraceFormatError) as loaded:
            Trace.load(bad).summary()
        with pytest.raises(TraceFormatError) as summarised:
            read_summary(bad)
        assert str(summarised.value) == str(loaded.value)


@pytest.mark.parametrize("chunk", [4 * 1024 * 1024, 700, 97])
def test_the_summary_of_odd_traces_read_in_any_chunks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunk: int
) -> None:
    """Lines split across chunks, and lines longer than a chunk (read from the file)."""
    from show_odd import odd_trace

    from regista.trace import index as index_module
    from regista.trace.index import TraceIndex, read_summary

    monkeypatch.setattr(index_module, "_CHUNK", chunk)
    for i, kw in enumerate([{}, {"end": False}, {"fork": True}, {"steps": False}]):
        path = odd_trace(tmp_path / f"odd-{i}.jsonl", **kw)
        loaded = Trace.load(path).summary()
        index = TraceIndex(path)
        index.scan()
        assert read_summary(path) == index.summary() == loaded, kw
        index.close()
