"""regista's tokens and cost per session against ccusage's, on the Claude Code fixtures.

ccusage (``npm install ccusage@20.0.24``; ``.ci/run`` installs it into ``.ci/npm``, or name
one with ``REGISTA_CCUSAGE``) reads the fixtures from a temporary ``CLAUDE_CONFIG_DIR``,
offline (its bundled prices) and on one thread (its parallel loader dropped a call of a
small file here). Token totals must be equal; costs within 1 %.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from regista.importers import convert
from regista.trace.reader import Trace

from .cc_fixtures import CCSession, basic_session, text, tool_use
from .test_costs import OPUS_1H

CCUSAGE = "20.0.24"


def _ccusage() -> Path:
    named = os.environ.get("REGISTA_CCUSAGE")
    prefix = Path(os.environ.get("REGISTA_NPM_PREFIX") or Path(__file__).parents[2] / ".ci/npm")
    found = Path(named) if named else prefix / "node_modules" / ".bin" / "ccusage"
    if found.exists() and shutil.which("node") is not None:
        return found
    message = f"ccusage is not installed: npm install --prefix .ci/npm ccusage@{CCUSAGE}"
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        pytest.fail(message + " (CI=true: .ci/run installs it)")
    pytest.skip(message)


def _sessions() -> list[CCSession]:
    opus = CCSession(session_id="11111111-2222-4333-8444-555555555555", model="claude-opus-4-7")
    opus.prompt("Summarise the log")
    opus.answer(text("Reading it."), tool_use("toolu_9", "Read", file_path="log"), usage=OPUS_1H)
    opus.tool_result("toolu_9", "12 lines")
    opus.answer(text("Done."), usage=dict(OPUS_1H, output_tokens=250), stop_reason="end_turn")
    haiku = CCSession(session_id="22222222-3333-4444-8555-666666666666", model="claude-haiku-4-5")
    haiku.prompt("hi")
    haiku.answer(text("hello"), stop_reason="end_turn")
    compacted = CCSession(
        session_id="33333333-4444-4555-8666-777777777777", model="claude-sonnet-4-6"
    )
    compacted.prompt("Keep going")
    compacted.answer(text("one"), usage=OPUS_1H, stop_reason="end_turn")
    compacted.compact("The story so far")
    compacted.prompt("and then?")
    compacted.answer(text("two"), usage=OPUS_1H, stop_reason="end_turn")
    sessions = [basic_session(), opus, haiku, compacted]
    for s in sessions:  # the fixtures number message ids alike in every session
        for line in s.lines:
            msg = line.get("message")
            if isinstance(msg, dict) and "id" in msg:
                msg["id"] = f"{msg['id']}{s.session_id[:4]}"
                line["requestId"] = f"{line['requestId']}{s.session_id[:4]}"
    return sessions


def _trace(data: bytes) -> Trace:
    return Trace.from_bytes(data, "<import>")


def test_tokens_and_cost_agree_with_ccusage(tmp_path: Path) -> None:
    exe = _ccusage()
    version = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=60)
    assert CCUSAGE in version.stdout + version.stderr
    home = tmp_path / "home"
    project = home / ".claude" / "projects" / "-home-ann-projects-shop"
    ours = {}
    for s in _sessions():
        path = s.write(project / f"{s.session_id}.jsonl")
        if s.session_id.startswith("3333"):  # its compaction's summarising call
            c = CCSession(
                session_id=s.session_id, agent_id="acompact-e1f845", sidechain=True, model=s.model
            )
            c.prompt("Your task is to create a detailed summary of the conversation so far.")
            c.answer(text("<summary>The story so far</summary>"), usage=dict(OPUS_1H))
            for line in c.lines:
                if "message" in line and "id" in line["message"]:
                    line["message"]["id"] += "c"
                    line["requestId"] += "c"
            c.write(path.parent / path.stem / "subagents" / "agent-acompact-e1f845.jsonl")
        ours[s.session_id] = _trace(convert("claude-code", path).main.to_bytes()).summary()
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(home),
        "CLAUDE_CONFIG_DIR": str(home / ".claude"),
        "NO_COLOR": "1",
    }
    out = subprocess.run(
        [exe, "claude", "session", "--json", "--offline", "--single-thread"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    theirs = {s["sessionId"]: s for s in json.loads(out.stdout)["sessions"]}
    assert set(theirs) == set(ours)
    for sid, s in ours.items():
        t, c = s.tokens, theirs[sid]
        assert (t.input, t.output, t.cache_write, t.cache_read) == (
            c["inputTokens"],
            c["outputTokens"],
            c["cacheCreationTokens"],
            c["cacheReadTokens"],
        ), sid
        assert s.cost_usd is not None
        assert s.cost_usd == pytest.approx(c["totalCost"], rel=0.01), sid


def test_codex_tokens_and_cost_agree_with_ccusage(tmp_path: Path) -> None:
    from .codex_fixtures import basic_rollout, rollout_name

    exe = _ccusage()
    home = tmp_path / "home"
    day = home / ".codex" / "sessions" / "2026" / "02" / "11"
    path = basic_rollout().write(day / rollout_name("t1"))
    s = _trace(convert("codex", path).main.to_bytes()).summary()
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(home),
        "CODEX_HOME": str(home / ".codex"),
        "NO_COLOR": "1",
    }
    out = subprocess.run(
        [exe, "codex", "session", "--json", "--offline"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    [c] = json.loads(out.stdout)["sessions"]
    t = s.tokens
    assert (t.input, t.output, t.cache_read, t.reasoning, t.total) == (
        c["inputTokens"],
        c["outputTokens"],
        c["cacheReadTokens"],
        c["reasoningOutputTokens"],
        c["totalTokens"],
    )
    assert s.cost_usd is not None
    assert s.cost_usd == pytest.approx(c["costUSD"], rel=0.01)
