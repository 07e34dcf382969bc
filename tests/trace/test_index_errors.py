"""The lazy index's error fact is the reader's: ``StepEntry.error`` equals ``Step.is_error``
and the index's summary counts the errors ``show`` counts, wherever a tool result writes its
``is_error`` in its line (an imported one writes it before a long ``tool_use_result``)."""

from __future__ import annotations

import random
from pathlib import Path

import orjson
import pytest
from importers.cc_fixtures import CCSession, basic_session, text, tool_use
from importers.codex_fixtures import basic_rollout, codex_0171_rollout, subagent_rollout

from regista.importers.claude_code import convert as convert_cc
from regista.importers.codex import convert as convert_codex
from regista.trace.index import TraceIndex, read_summary
from regista.trace.reader import Trace


def _same_errors(path: Path) -> int:
    """Assert the index and the reader agree on errors; return how many steps failed."""
    trace = Trace.load(path)
    index = TraceIndex(path)
    assert index.scan()
    steps = trace.steps()
    assert [(e.index, e.error) for e in index.steps] == [(s.index, s.is_error) for s in steps]
    assert index.summary().errors == trace.summary().errors
    assert read_summary(path).errors == trace.summary().errors
    return sum(s.is_error for s in steps)


def _cc_errors(seed: int) -> CCSession:
    """A Claude Code session whose failing tools return long outputs."""
    rng = random.Random(seed)
    s = CCSession()
    s.prompt("run the checks")
    for i in range(rng.randint(3, 12)):
        tid = f"toolu_{seed}_{i}"
        s.answer(tool_use(tid, "Bash", command=f"check {i}"))
        out = "x" * rng.choice((0, 10, 150, 400, 5000))
        failed = rng.random() < 0.5
        s.tool_result(
            tid, f"Exit code {int(failed)}\n{out}", is_error=failed, result={"stdout": out}
        )
    s.answer(text("done"), stop_reason="end_turn")
    return s


def _shuffled(path: Path, rng: random.Random) -> None:
    """Rewrite each tool result with its fields in a random order and its content padded, so
    ``is_error`` sits anywhere in the line, near its end or thousands of bytes before."""
    lines = []
    for raw in path.read_bytes().splitlines():
        event = orjson.loads(raw)
        if event["type"] == "tool.result":
            if isinstance(event["content"], str):
                event["content"] += "y" * rng.choice((0, 50, 200, 3000))
            envelope = {k: event.pop(k) for k in list(event)[:6]}
            rest = list(event.items())
            rng.shuffle(rest)
            event = envelope | dict(rest)
        lines.append(orjson.dumps(event))
    path.write_bytes(b"".join(line + b"\n" for line in lines))


@pytest.mark.parametrize("seed", range(12))
def test_imported_error_results_are_errors_in_the_index(tmp_path: Path, seed: int) -> None:
    source = _cc_errors(seed).write(tmp_path / "cc.jsonl")
    path = tmp_path / "run.jsonl"
    path.write_bytes(convert_cc(source).main.to_bytes())
    assert _same_errors(path) == sum(
        1
        for line in _cc_errors(seed).lines
        for block in (line.get("message") or {}).get("content") or []
        if isinstance(block, dict) and block.get("is_error") is True
    )


@pytest.mark.parametrize("seed", range(12))
def test_error_results_anywhere_in_the_line(tmp_path: Path, seed: int) -> None:
    source = _cc_errors(seed).write(tmp_path / "cc.jsonl")
    path = tmp_path / "run.jsonl"
    path.write_bytes(convert_cc(source).main.to_bytes())
    _shuffled(path, random.Random(seed))
    _same_errors(path)


def test_the_fixtures(tmp_path: Path) -> None:
    source = basic_session().write(tmp_path / "cc.jsonl")
    (tmp_path / "cc_run.jsonl").write_bytes(convert_cc(source).main.to_bytes())
    assert _same_errors(tmp_path / "cc_run.jsonl") == 1
    for i, rollout in enumerate((basic_rollout(), codex_0171_rollout(), subagent_rollout())):
        src = rollout.write(tmp_path / f"rollout-{i}.jsonl")
        out = tmp_path / f"codex_{i}.jsonl"
        out.write_bytes(convert_codex(src).main.to_bytes())
        _same_errors(out)


def test_a_long_line_read_past_its_chunk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A tool result longer than a scan chunk is read whole to find its ``is_error``."""
    import regista.trace.index as index_module

    source = _cc_errors(3).write(tmp_path / "cc.jsonl")
    path = tmp_path / "run.jsonl"
    path.write_bytes(convert_cc(source).main.to_bytes())
    monkeypatch.setattr(index_module, "_CHUNK", 256)
    assert _same_errors(path) > 0
