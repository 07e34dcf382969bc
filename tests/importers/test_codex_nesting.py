"""Codex rollouts with values nested far past the 100 levels a trace holds: every one
imports (the line skipped and named) or gives one line, never a traceback. Seeded (the
house fuzz seed, REGISTA_FUZZ_SEED)."""

from __future__ import annotations

import warnings
from pathlib import Path

import orjson
import pytest

from regista.cli.main import main
from regista.errors import RegistaError
from regista.importers import convert
from regista.trace.reader import Trace

from .codex_fixtures import basic_rollout
from .fuzzing import rng_for

T = b'{"timestamp":"2026-02-11T08:30:00.000Z",'


def _deep(depth: int, kind: str) -> bytes:
    if kind == "list":
        return b"[" * depth + b'"x"' + b"]" * depth
    return b'{"a":' * depth + b'"x"' + b"}" * depth


def _line(where: str, deep: bytes) -> bytes:
    if where == "arguments":  # a JSON string holding the deep value: parsed by the importer
        args = orjson.dumps(deep.decode())
        return (
            T + b'"type":"response_item","payload":{"type":"function_call","name":"shell",'
            b'"arguments":' + args + b',"call_id":"c9"}}'
        )
    if where == "custom":
        return (
            T + b'"type":"response_item","payload":{"type":"custom_tool_call",'
            b'"name":"apply_patch","input":' + deep + b',"call_id":"c9"}}'
        )
    if where == "content":
        return (
            T + b'"type":"response_item","payload":{"type":"message","role":"assistant",'
            b'"content":' + deep + b"}}"
        )
    if where == "output":
        return (
            T + b'"type":"response_item","payload":{"type":"function_call_output",'
            b'"call_id":"call_A","output":' + deep + b"}}"
        )
    return T + b'"type":"response_item","payload":' + deep + b"}"


def _rollout(where: str, deep: bytes, at: int) -> bytes:
    lines = [orjson.dumps(line) for line in basic_rollout().lines]
    lines.insert(min(at, len(lines)), _line(where, deep))
    return b"\n".join(lines) + b"\n"


def _document(deep: bytes) -> bytes:
    """The single-document era: ``{"session": …, "items": […]}``."""
    items = [line["payload"] for line in basic_rollout().lines[1:]]
    body = orjson.dumps({"session": {"id": "s1", "timestamp": "2026-02-11T08:27:22Z"}})
    text = b",".join(orjson.dumps(it) for it in items)
    return body[:-1] + b',"items":[' + text + b"," + deep + b"]}"


WHERES = ["arguments", "custom", "content", "output", "payload"]


@pytest.mark.parametrize("where", WHERES)
def test_nested_990_deep_imports_with_the_line_named(
    where: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The depth that printed a traceback: Python's recursion limit, not orjson's."""
    src = tmp_path / "rollout.jsonl"
    src.write_bytes(_rollout(where, _deep(990, "dict"), 3))
    code = main(["import", "codex", str(src), "--trace-dir", str(tmp_path / "out")])
    said = capsys.readouterr()
    err = said.out + said.err
    assert "Traceback" not in err and code in (0, 2), err
    for trace in (tmp_path / "out").glob("*.jsonl"):
        Trace.load(trace).steps()
    if where != "arguments":  # an argument string too deep is kept as its text
        assert f"{src}:4: skipped: a value nested more than 100 levels deep" in err, err


def test_seeded_nesting_fuzz(tmp_path: Path) -> None:
    rng = rng_for("codex-nesting")
    path = tmp_path / "r.jsonl"
    for case in range(40):
        depth = rng.choice([rng.randint(90, 130), rng.randint(240, 270), rng.randint(900, 1100)])
        deep = _deep(depth, rng.choice(["list", "dict"]))
        data = (
            _document(deep)
            if rng.random() < 0.2
            else _rollout(rng.choice(WHERES), deep, rng.randint(1, 6))
        )
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                conv = convert("codex", path, data)
        except RegistaError as exc:
            assert "\n" not in str(exc), (case, str(exc))
            continue
        except Exception as exc:  # pragma: no cover - the failure report
            raise AssertionError(
                f"case {case} (depth {depth}): {type(exc).__name__}: {exc}"
            ) from exc
        for run in conv.runs:
            Trace.from_bytes(run.to_bytes(), path).steps()
