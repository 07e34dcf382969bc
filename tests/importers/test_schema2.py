"""Imported runs are written by the shared trace writer: schema 2, compact requests whose
hashes are the redacted canonical ones, no secrets, and the same bytes every time."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from regista.importers import convert, write_runs
from regista.trace.canonical import request_hash
from regista.trace.events import LlmRequestEvent, ToolResult
from regista.trace.reader import Trace

from .cc_fixtures import basic_session, text, tool_use
from .codex_fixtures import basic_rollout

KEY = "sk-ant-api03-" + "Zx9" * 30  # shaped like an Anthropic key


def _session_with_a_secret() -> bytes:
    s = basic_session()
    s.prompt(f"My key is {KEY}, use it for the deploy")
    s.answer(text("Reading the env file."), tool_use("toolu_S1", "Bash", command="cat .env"))
    s.tool_result("toolu_S1", f"ANTHROPIC_API_KEY={KEY}\nDEBUG=1\n")
    s.answer(text("Done."))
    return s.data()


def _check(trace: Trace) -> None:
    requests = [e for e in trace.events if isinstance(e, LlmRequestEvent)]
    assert requests
    for ev in requests:
        assert request_hash(trace.request_for(ev).canonical()) == ev.request_hash


@pytest.mark.parametrize("fmt", ["claude-code", "codex"])
def test_imported_runs_are_schema_2_with_verified_hashes(fmt: str, tmp_path: Path) -> None:
    data = _session_with_a_secret() if fmt == "claude-code" else basic_rollout().data()
    path = tmp_path / "t.jsonl"
    conv = convert(fmt, path, data)
    for run in conv.runs:
        raw = run.to_bytes()
        lines = [orjson.loads(x) for x in raw.splitlines()]
        assert {line["schema_version"] for line in lines} == {2}
        assert [line["seq"] for line in lines] == list(range(len(lines)))
        trace = Trace.from_bytes(raw, tmp_path / f"{run.session_id}.jsonl")
        _check(trace)


def test_secrets_are_redacted_and_results_not_repeated(tmp_path: Path) -> None:
    conv = convert("claude-code", tmp_path / "t.jsonl", _session_with_a_secret())
    raw = conv.main.to_bytes()
    assert KEY.encode() not in raw
    assert b"[REDACTED:" in raw
    lines = [orjson.loads(x) for x in raw.splitlines()]
    # a tool result the trace holds is referred to by the next request, not repeated
    assert any(line.get("result_refs") for line in lines if line["type"] == "llm.request")
    trace = Trace.from_bytes(raw, tmp_path / "main.jsonl")
    results = [e for e in trace.events if isinstance(e, ToolResult)]
    assert any("[REDACTED:" in str(r.content) for r in results)


def test_import_writes_the_same_bytes_twice(tmp_path: Path) -> None:
    src = tmp_path / "project" / "s.jsonl"
    src.parent.mkdir()
    src.write_bytes(_session_with_a_secret())
    first = write_runs(convert("claude-code", src), tmp_path / "a")
    second = write_runs(convert("claude-code", src), tmp_path / "b")
    assert [p.name for p in first] == [p.name for p in second]
    assert [p.read_bytes() for p in first] == [p.read_bytes() for p in second]
