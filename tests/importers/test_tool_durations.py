"""An imported tool step lasts from its call to its result (their recorded times), in
every view: ``show``, the debugger's timeline."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

import orjson
import pytest
from tui.waits import settle

from regista.cli.main import main
from regista.cli.show_pass import StepsPass, ms_text
from regista.trace.listing import Listing
from regista_tui.__main__ import open_index
from regista_tui.app import RegistaApp
from regista_tui.widgets.timeline.timeline import Timeline

from .cc_fixtures import basic_session
from .codex_fixtures import basic_rollout


def _ms(a: str, b: str) -> float:
    def t(s: str) -> datetime:
        return datetime.fromisoformat(s.replace("Z", "+00:00"))

    return (t(b) - t(a)).total_seconds() * 1000


def _claude_code_expected(lines: list[dict[str, Any]]) -> dict[str, float]:
    """tool_use_id -> from the answer that asked for it (its last line) to its result."""
    answered: dict[str, str] = {}  # message id -> its last line's time
    asked: dict[str, str] = {}  # tool_use_id -> message id
    out: dict[str, float] = {}
    for line in lines:
        message = line.get("message") or {}
        if line.get("type") == "assistant":
            answered[message["id"]] = line["timestamp"]
            for b in message["content"]:
                if b.get("type") == "tool_use":
                    asked[b["id"]] = message["id"]
        elif line.get("type") == "user" and isinstance(message.get("content"), list):
            for b in message["content"]:
                if b.get("type") == "tool_result":
                    tid = b["tool_use_id"]
                    out[tid] = _ms(answered[asked[tid]], line["timestamp"])
    return out


def _codex_expected(lines: list[dict[str, Any]]) -> dict[str, float]:
    """call_id -> the duration the output states (a positive one), else from the answer to
    the output."""
    called: dict[str, str] = {}
    last_out = ""
    out: dict[str, float] = {}
    for line in lines:
        p = line.get("payload") or {}
        if p.get("type") in ("function_call", "custom_tool_call"):
            last_out = line["timestamp"]
            called[p["call_id"]] = ""
        elif p.get("type") in ("function_call_output", "custom_tool_call_output"):
            for cid in [c for c, v in called.items() if not v]:
                called[cid] = last_out
            text = p["output"]
            # a stated 0 s (an apply_patch) is no duration measured: the step lasts from
            # the call to its output, as where none is stated (docs/readers.md)
            stated = (
                orjson.loads(text)["metadata"]["duration_seconds"]
                if '"duration_seconds"' in text
                else 0
            )
            if stated > 0:
                out[p["call_id"]] = stated * 1000
            else:
                out[p["call_id"]] = _ms(called[p["call_id"]], line["timestamp"])
    return out


def _tool_ms(path: Path) -> dict[str, float | None]:
    """tool_use_id -> the ``ms`` that ``show`` gives its step."""
    steps = StepsPass(Listing.load(path), None)
    return {r.call.tool_use_id: r.ms for r in steps.rows if r.kind == "tool" and r.call}


@pytest.mark.parametrize("fmt", ["claude-code", "codex"])
def test_an_imported_tool_step_lasts_from_its_call_to_its_result(
    tmp_path: Path, fmt: str, capsys: pytest.CaptureFixture[str]
) -> None:
    if fmt == "claude-code":
        session = basic_session()
        path = session.write(tmp_path / "4f1c2a9e.jsonl")
        expected = _claude_code_expected(session.lines)
    else:
        rollout = basic_rollout()
        path = rollout.write(tmp_path / "rollout-2026-02-11T08-27-22-019b.jsonl")
        expected = _codex_expected(rollout.lines)
    assert any(v > 0 for v in expected.values())
    out_dir = tmp_path / "traces"
    assert main(["import", fmt, str(path), "--trace-dir", str(out_dir)]) == 0
    (trace,) = out_dir.iterdir()
    got = _tool_ms(trace)
    assert got == pytest.approx(expected)
    capsys.readouterr()
    assert main(["show", "--full", str(trace)]) == 0
    shown = capsys.readouterr().out
    for ms in expected.values():
        if ms:
            assert ms_text(ms) in shown


async def test_the_timeline_shows_an_imported_tool_steps_duration(tmp_path: Path) -> None:
    session = basic_session()
    path = session.write(tmp_path / "4f1c2a9e.jsonl")
    expected = _claude_code_expected(session.lines)
    index, notice = open_index(path)
    app = RegistaApp(index, notice=notice, settle_s=0)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        await app.screen.workers.wait_for_complete()
        timeline = app.screen.query_one(Timeline)
        while index.cold:
            await settle(pilot)
        got = {}
        for pos in range(timeline.row_count()):
            step = index.step(pos)
            if step.kind == "tool":
                got[step.tool_call.tool_use_id] = timeline.row(pos).duration_ms
    assert got == pytest.approx(expected)
