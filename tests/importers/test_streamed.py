"""A Claude Code transcript converted piece by piece (how regista-tui opens one) gives the
same bytes as converting it whole, for fixtures and seeded fuzzed transcripts, and the
index that converts as it scans ends with every step."""

from __future__ import annotations

import os
import random
import warnings
from pathlib import Path

import pytest

import regista.importers.memory as memory
from regista.errors import RegistaError
from regista.importers import convert, start_conversion
from regista.importers.claude_code import Job
from regista.importers.memory import InMemoryRuns
from regista.trace.index import TraceIndex

from .cc_fixtures import CCSession, basic_session, text, tool_use
from .fuzzing import CASES, mutate
from .test_fuzz import _claude_code_seed


def _long_session(turns: int = 40) -> CCSession:
    s = basic_session()
    for n in range(turns):
        s.prompt(f"Next file, please ({n})")
        s.answer(
            text("Reading it."),
            tool_use(f"toolu_L{n:03d}", "Read", file_path=f"/home/ann/shop/m{n}.py"),
        )
        s.progress(f"toolu_L{n:03d}")
        s.tool_result(f"toolu_L{n:03d}", "x = 1\n" * (20 + n))
        if n % 9 == 0:
            s.compact(f"Summary {n}.")
    return s


def _session_with_subagent(root: Path) -> Path:
    prompt = "Search the code for refund computations"
    s = CCSession()
    s.prompt("Find where refunds are computed")
    s.answer(tool_use("toolu_T1", "Task", description="search", prompt=prompt))
    s.tool_result(
        "toolu_T1",
        [text("In refund.py.")],
        result={"status": "completed", "agentId": "a1b2c3d4", "content": [text("In refund.py.")]},
    )
    s.answer(text("It is in refund.py."))
    path = s.write(root / f"{s.session_id}.jsonl")
    c = CCSession(agent_id="a1b2c3d4", sidechain=True)
    c.prompt(prompt)
    c.answer(tool_use("toolu_C1", "Grep", pattern="refund"))
    c.tool_result("toolu_C1", "refund.py:2")
    c.answer(text("In refund.py."))
    c.write(path.parent / path.stem / "subagents" / "agent-a1b2c3d4.jsonl")
    return path


def _streamed(path: Path, data: bytes, rng: random.Random) -> list[bytes]:
    """The runs' bytes, the main run as written out a random number of lines at a time."""
    job = Job(path, data)
    encoder = memory.RunEncoder(job.main_sid)
    written = 0
    out = b""
    while not job.done:
        job.advance(rng.randint(1, 7))
        events = job.conv.runs[0].events if job.conv.runs else []
        out += b"".join(encoder.encode([e]) for e in events[written:])
        written = len(events)
    return [out] + [run.to_bytes() for run in job.conv.runs[1:]]


def _whole(path: Path, data: bytes) -> list[bytes]:
    return [run.to_bytes() for run in convert("claude-code", path, data).runs]


def test_streamed_fixture_is_byte_identical(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    for seed in (_long_session().data(), _claude_code_seed()):
        assert _streamed(path, seed, random.Random(1)) == _whole(path, seed)


def test_streamed_fuzzed_transcripts_are_byte_identical(tmp_path: Path) -> None:
    seed = _claude_code_seed()
    rng = random.Random("regista-streamed")
    path = tmp_path / "t.jsonl"
    for _ in range(CASES):
        data = mutate(rng, seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                whole = _whole(path, data)
            except RegistaError:
                continue
            assert _streamed(path, data, rng) == whole


def test_streamed_index_converts_as_it_scans(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(memory, "_LINES", 2)
    runs = InMemoryRuns()
    path = _long_session().write(tmp_path / "project" / "s.jsonl")
    before = sorted(os.listdir(path.parent))
    data = path.read_bytes()
    job = start_conversion(path, data)
    assert job is not None
    index = runs.stream(job)
    assert index.scan(2000) is False  # a first screenful: the rest is not converted yet
    assert not index.streaming.done and 0 < len(index.steps) < 20
    assert index.end is None
    while not index.scan(3000):
        pass
    whole = convert("claude-code", path, data)
    assert index.streaming.done and index.end is not None
    assert Path(index.path).read_bytes() == whole.main.to_bytes()
    assert len(index.steps) == len(_index_of(whole.main.to_bytes(), tmp_path).steps)
    assert sorted(os.listdir(path.parent)) == before  # nothing written beside it
    assert path.read_bytes() == data


def _index_of(data: bytes, where: Path) -> TraceIndex:
    p = where / "whole.jsonl"
    p.write_bytes(data)
    index = TraceIndex(p)
    index.scan()
    return index


def test_a_pending_subagent_run_is_converted_when_asked_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(memory, "_LINES", 1)
    runs = InMemoryRuns()
    path = _session_with_subagent(tmp_path / "project")
    job = start_conversion(path, path.read_bytes())
    assert job is not None
    index = runs.stream(job)
    index.scan(10)
    child_sid = job.todo[1][1]
    assert not index.streaming.done
    found = runs.path_of(child_sid, path)  # finishes the conversion first
    assert found is not None and index.streaming.done
    assert found.read_bytes() == convert_file_bytes(path)[child_sid]
    assert index.scan() is True and index.end is not None


def convert_file_bytes(path: Path) -> dict[str, bytes]:
    return {r.session_id: r.to_bytes() for r in convert("claude-code", path).runs}


def test_json_lines_keep_their_numbers_through_blank_and_crlf_lines(tmp_path: Path) -> None:
    from regista.importers._builder import ImportReport
    from regista.importers._common import read_json_lines

    data = b'{"a":1}\r\n\n   \n{"b":2}\nnot json\n[1]\n{"c":3}'
    report = ImportReport()
    got = read_json_lines(data, tmp_path / "t.jsonl", report)
    assert got == [(1, {"a": 1}), (4, {"b": 2}), (7, {"c": 3})]
    assert [(n, m.split(" (")[0]) for _, n, m in report.bad_lines] == [
        (5, "not valid JSON"),
        (6, "not a JSON object"),
    ]


def test_an_index_closed_before_the_end_gives_the_conversion_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(memory, "_LINES", 2)
    runs = InMemoryRuns()
    path = _session_with_subagent(tmp_path / "project")
    data = path.read_bytes()
    job = start_conversion(path, data)
    assert job is not None
    first = runs.stream(job)
    first.scan(10)
    first.close()  # e.g. a quick look that fails early, then the whole is read elsewhere
    assert runs.path_of(job.main_sid, path) is None and runs.path_of(job.todo[1][1], path) is None
    again = start_conversion(path, data)
    assert again is not None
    index = runs.stream(again)
    while not index.scan(50):
        pass
    assert Path(index.path).read_bytes() == convert("claude-code", path, data).main.to_bytes()
    assert runs.path_of(again.todo[1][1], path) is not None
    index.close()
    assert runs.path_of(again.main_sid, path) is not None  # a finished conversion is kept
