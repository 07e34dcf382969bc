"""Codex subagents (``spawn_agent``) linked to the parent step that started them."""

from __future__ import annotations

from pathlib import Path

import pytest

from regista.importers import discover, write_runs
from regista.importers.codex import convert
from regista.trace.reader import Trace

from .codex_fixtures import (
    CHILD,
    THREAD,
    rollout_name,
    spawning_rollout,
    subagent_rollout,
)


def _day(root: Path, day: str = "11") -> Path:
    return root / "sessions" / "2026" / "02" / day


@pytest.mark.parametrize("event", [True, False], ids=["spawn-end-event", "output-only"])
def test_spawned_subagent_is_a_linked_run(tmp_path: Path, event: bool) -> None:
    day = _day(tmp_path)
    parent = spawning_rollout(event=event).write(day / rollout_name(THREAD))
    subagent_rollout().write(day / rollout_name(CHILD, "2026-02-11T08-27-25"))
    conv = convert(parent)
    assert [len(r.events) > 0 for r in conv.runs] == [True, True]
    main = Trace.from_bytes(conv.main.to_bytes(), parent)
    child_run = conv.runs[1]
    child = Trace.from_bytes(child_run.to_bytes(), parent)
    call = next(e for e in conv.main.events if e["type"] == "tool.call")
    assert call["name"] == "spawn_agent"
    link = {"session_id": child_run.session_id, "thread_id": CHILD}
    assert call["subagent"] == link
    assert main.tool_results()["call_S"].model_extra["subagent"] == link
    assert child_run.parent == {
        "session_id": conv.main.session_id,
        "step": call["step"],
        "tool_use_id": "call_S",
    }
    assert [s.kind for s in main.steps()][call["step"]] == "tool"
    start = child.start
    assert start.metadata["parent"] == child_run.parent
    assert start.metadata["parent_thread_id"] == THREAD
    assert start.model == "gpt-5.1-codex-mini"
    assert [s.title for s in child.steps()] == ["gpt-5.1-codex-mini", "shell", "gpt-5.1-codex-mini"]
    # The same rollout converted again: the same runs, byte for byte.
    again = convert(parent)
    assert [r.to_bytes() for r in again.runs] == [r.to_bytes() for r in conv.runs]


def test_subagent_that_started_the_next_day(tmp_path: Path) -> None:
    parent = spawning_rollout().write(_day(tmp_path) / rollout_name(THREAD))
    subagent_rollout().write(_day(tmp_path, "12") / rollout_name(CHILD, "2026-02-12T00-00-01"))
    conv = convert(parent)
    assert len(conv.runs) == 2 and conv.runs[1].parent is not None


def test_missing_subagent_rollout_is_a_note(tmp_path: Path) -> None:
    parent = spawning_rollout().write(_day(tmp_path) / rollout_name(THREAD))
    conv = convert(parent)
    assert len(conv.runs) == 1
    meta = conv.main.events[0]["metadata"]["import_report"]
    assert any(CHILD in n for n in meta["notes"])
    call = next(e for e in conv.main.events if e.get("tool_use_id") == "call_S")
    assert "subagent" not in call


def test_import_of_a_sessions_root_writes_each_run_once(tmp_path: Path) -> None:
    day = _day(tmp_path)
    spawning_rollout().write(day / rollout_name(THREAD))
    subagent_rollout().write(day / rollout_name(CHILD, "2026-02-11T08-27-25"))
    files = discover("codex", [tmp_path / "sessions"])
    assert [f.name for f in files] == [rollout_name(THREAD)]  # the child comes with its parent
    out = tmp_path / "traces"
    written = write_runs(convert(files[0]), out)
    assert len(written) == 2
    child = Trace.load(written[1])
    assert child.start.metadata["parent"]["tool_use_id"] == "call_S"
    # A subagent's rollout opened on its own still converts, naming its parent thread.
    alone = convert(day / rollout_name(CHILD, "2026-02-11T08-27-25"))
    assert len(alone.runs) == 1
    assert alone.main.events[0]["metadata"]["parent_thread_id"] == THREAD
