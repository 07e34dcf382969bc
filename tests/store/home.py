"""A fake home with Claude Code and Codex sessions in the shapes the tools write.

- ``~/.claude/projects/-home-ann-projects-shop/``: a session with split answers, parallel
  tool calls and bookkeeping lines; a 2.1-layout session whose subagent is in
  ``<session>/subagents/agent-*.jsonl`` (with its ``.meta.json``); a 2.0-layout session whose
  subagent is a flat ``agent-*.jsonl`` beside it; a second prompt whose words are only in the
  next model request (``REQUEST_ONLY``);
- ``~/.codex/sessions/2026/02/11/``: a rollout that spawns a subagent, and the subagent's.
"""

from __future__ import annotations

import sys
from pathlib import Path

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from importers.cc_fixtures import CCSession, basic_session, text, tool_use
from importers.codex_fixtures import (
    CHILD,
    THREAD,
    rollout_name,
    spawning_rollout,
    subagent_rollout,
)

PROJECT = "-home-ann-projects-shop"
NESTED = "7a0c1e2d-3b4f-4a5e-8c6d-9e0f1a2b3c4d"
FLAT = "5b6c7d8e-9f0a-4b1c-8d2e-3f4a5b6c7d8e"
#: A word that appears only in a prompt typed after the first: only a model request holds it.
REQUEST_ONLY = "zanzibarquokka"


def _with_subagent(session_id: str, agent: str, version: str) -> tuple[CCSession, CCSession]:
    prompt = "Search the code for refund computations"
    s = CCSession(session_id=session_id, version=version)
    s.prompt("Find where refunds are computed")
    s.answer(tool_use("toolu_T1", "Task", description="search", prompt=prompt))
    s.tool_result(
        "toolu_T1",
        [text("Refunds are computed in refund.py line 2.")],
        result={"status": "completed", "prompt": prompt, "agentId": agent},
    )
    s.prompt(f"Thanks. Next, look at the {REQUEST_ONLY} module")
    s.answer(text("Done: nothing to change there."), stop_reason="end_turn")
    c = CCSession(session_id=session_id, agent_id=agent, sidechain=True, version=version)
    c.prompt(prompt)
    c.answer(tool_use("toolu_C1", "Grep", pattern="refund"))
    c.tool_result("toolu_C1", "refund.py:2")
    c.answer(text("Refunds are computed in refund.py line 2."))
    return s, c


def make_home(home: Path) -> dict[str, Path]:
    """Write the fake home under ``home``; the files by name."""
    proj = home / ".claude" / "projects" / PROJECT
    files: dict[str, Path] = {}
    files["basic"] = basic_session().write(proj / f"{basic_session().session_id}.jsonl")
    s, c = _with_subagent(NESTED, "a1b2c3d4", "2.1.39")
    files["nested"] = s.write(proj / f"{NESTED}.jsonl")
    files["nested_agent"] = c.write(proj / NESTED / "subagents" / "agent-a1b2c3d4.jsonl")
    (proj / NESTED / "subagents" / "agent-a1b2c3d4.meta.json").write_bytes(
        orjson.dumps({"agentType": "Explore", "spawnDepth": 1})
    )
    s, c = _with_subagent(FLAT, "e5f6a7b8", "2.0.30")
    files["flat"] = s.write(proj / f"{FLAT}.jsonl")
    files["flat_agent"] = c.write(proj / "agent-e5f6a7b8.jsonl")
    day = home / ".codex" / "sessions" / "2026" / "02" / "11"
    day.mkdir(parents=True)
    files["codex"] = day / rollout_name(THREAD)
    files["codex"].write_bytes(spawning_rollout().data())
    files["codex_child"] = day / rollout_name(CHILD, "2026-02-11T08-27-25")
    files["codex_child"].write_bytes(subagent_rollout().data())
    return files


def grow(path: Path, text_: str) -> None:
    """Append one more exchange to a Claude Code session (as Claude Code appends)."""
    lines = [orjson.loads(raw) for raw in path.read_bytes().splitlines() if raw.strip()]
    s = CCSession(session_id=path.stem)
    # later times, other uuids and message ids than the lines already there, chained on
    s._n = s._msg = 100 + len(lines)
    s._parent = next((o["uuid"] for o in reversed(lines) if "uuid" in o), None)
    s.prompt(text_)
    s.answer(text(f"Looked at it: {text_}"), stop_reason="end_turn")
    with open(path, "ab") as f:
        f.write(s.data())
