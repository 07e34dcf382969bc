"""The real Claude Code CLI (``claude -p``, from npm) recorded, replayed and forked by regista.

One conversation is recorded once for the module (a run of the CLI takes seconds): the
fake model asks for two real ``Bash`` calls, then answers ``DONE: <the first one's
output>``. Every replay runs in the same folder with the same ``HOME`` (Claude Code puts
both in its prompt; masks for them are another matter), with no provider behind regista.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fakes.anthropic_server import FakeAnthropicServer

from conformance.claude_code_support import (
    FIRST_OUTPUT,
    TASK,
    _tool_results,
    claude_cmd,
    claude_env,
    record_claude_session,
    regista,
    scripted_answer,
    served,
)
from conformance.matrix import npm_bin, row
from regista.server import BackgroundServer, create_app
from regista.trace.reader import Trace


def _version() -> str:
    out = subprocess.run(
        [str(npm_bin("claude")), "--version"], capture_output=True, text=True, check=False
    ).stdout
    return out.split()[0] if out.strip() else "?"


@pytest.fixture(scope="module")
def version() -> str:
    return _version()


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeAnthropicServer]:
    with FakeAnthropicServer() as server:
        server.answer_with(scripted_answer)
        yield server


@pytest.fixture(scope="module")
def session(fake: FakeAnthropicServer, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One recorded ``claude -p`` conversation: its trace, folder and home."""
    npm_bin("claude")
    root = tmp_path_factory.mktemp("claude")
    cwd, home = root / "work", root / "home"
    before = len(fake.requests)
    trace = record_claude_session(fake, root / "traces", cwd=cwd, home=home)
    return {
        "trace": trace,
        "cwd": cwd,
        "home": home,
        "root": root,
        "calls": len(fake.requests) - before,
    }


def test_record_gives_one_run_that_verifies_and_shows_the_task(
    session: dict[str, Any], version: str
) -> None:
    r = row("claude-code", version)
    path = session["trace"]
    assert len(list(path.parent.glob("*.jsonl"))) == 1  # one run per conversation
    trace = Trace.load(path)
    kinds = [s.kind for s in trace.steps()]
    assert kinds == ["model", "tool", "model", "tool", "model"], kinds
    assert trace.start.task == TASK  # not the <system-reminder> before it
    assert trace.end is not None and trace.end.output == f"DONE: {FIRST_OUTPUT}"
    assert b"sk-ant-conformance-secret" not in path.read_bytes()
    check = subprocess.run(
        [*_regista(), "verify", str(path)], capture_output=True, text=True, check=False
    )
    assert check.returncode == 0, check.stdout + check.stderr
    shown = subprocess.run(
        [*_regista(), "show", str(path)], capture_output=True, text=True, check=False
    )
    assert shown.returncode == 0 and TASK[:40] in shown.stdout
    assert "system-reminder" not in shown.stdout
    sides = [e for e in trace.events if e.type == "llm.request" and "side" in (e.model_extra or {})]
    if not sides:  # none to link: headless, with non-essential traffic off
        r.notes.append("no side calls made (title, count_tokens)")
    r.record_ok = True


def _regista() -> list[str]:
    import sys

    return [sys.executable, "-m", "regista"]


def test_a_strict_replay_serves_every_call_with_the_provider_down(
    session: dict[str, Any], version: str
) -> None:
    run = regista(
        ["replay", str(session["trace"])], cwd=session["cwd"], home=session["home"], upstream=None
    )
    r = row("claude-code", version)
    total = len([s for s in Trace.load(session["trace"]).steps() if s.kind == "model"])
    r.strict_served, r.strict_total = served(run.stdout), total
    assert run.code == 0, run.stdout + run.stderr
    assert f"DONE: {FIRST_OUTPUT}" in run.stdout
    assert f"replayed: {total} of {total} model calls served, {total} matched" in run.stdout


def test_a_changed_prompt_gets_a_409_that_is_not_retried(
    session: dict[str, Any], version: str
) -> None:
    """Claude Code pointed straight at a replay (no provider behind it): the replay's own
    count of requests says how many the CLI sent for the 409."""
    app = create_app(session["trace"].parent)
    with BackgroundServer(app) as server:
        made = httpx.post(
            f"{server.url}/v1/replays", json={"run": Trace.load(session["trace"]).session_id}
        ).json()
        env = claude_env(session["home"], None)
        env["ANTHROPIC_BASE_URL"] = made["anthropic_base_url"]
        p = subprocess.run(
            claude_cmd("Say goodbye instead."),
            cwd=session["cwd"],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        status = httpx.get(f"{server.url}/v1/replays/{made['id']}").json()
    r = row("claude-code", version)
    r.conflict_requests = status["requests"]
    r.conflict_surfaced = "409" in (p.stdout + p.stderr) and status["requests"] == 1
    assert p.returncode != 0
    assert "409" in p.stdout + p.stderr and "diverged at step 0" in p.stdout + p.stderr
    assert status["requests"] == 1, status  # x-should-retry: false is honoured
    assert status["served"] == 0


def test_the_replay_summary_counts_the_rejected_request(session: dict[str, Any]) -> None:
    run = regista(
        ["replay", str(session["trace"])],
        cwd=session["cwd"],
        home=session["home"],
        upstream=None,
        cmd=claude_cmd("Say goodbye instead."),
    )
    assert run.code != 0
    assert "replayed: 0 of 3 model calls served, 0 matched, 1 request rejected" in run.stdout


def test_loose_mode_serves_in_order(session: dict[str, Any], version: str) -> None:
    run = regista(
        ["replay", str(session["trace"]), "--mode", "loose"],
        cwd=session["cwd"],
        home=session["home"],
        upstream=None,
        cmd=claude_cmd("Say goodbye instead."),
    )
    r = row("claude-code", version)
    r.loose_ok = run.code == 0 and f"DONE: {FIRST_OUTPUT}" in run.stdout
    assert run.code == 0, run.stdout + run.stderr
    assert f"DONE: {FIRST_OUTPUT}" in run.stdout
    assert "replayed: 3 of 3 model calls served" in run.stdout


def test_a_fork_with_an_edited_bash_result_goes_live_after_it(
    session: dict[str, Any], fake: FakeAnthropicServer, version: str
) -> None:
    before = len(fake.requests)
    forks = session["root"] / "forks"
    run = regista(
        ["fork", str(session["trace"]), "--at", "1", "--tool-result", "EDITED-RESULT",
         "--trace-dir", str(forks)],
        cwd=session["cwd"],
        home=session["home"],
        upstream=fake.url,
    )  # fmt: skip
    r = row("claude-code", version)
    assert run.code == 0, run.stdout + run.stderr
    # the CLI ran its real Bash (hello-from-bash), but the model saw the edit
    assert "DONE: EDITED-RESULT" in run.stdout
    assert len(fake.requests) - before == 2  # the two calls after the edit went live
    (fork_path,) = forks.glob("*.jsonl")
    fork = Trace.load(fork_path)
    assert fork.start.forked_from is not None
    assert fork.start.forked_from["session_id"] == Trace.load(session["trace"]).session_id
    assert [s.kind for s in fork.steps()] == ["model", "tool", "model", "tool", "model"]
    r.fork_ok = True


def _bare(value: Any) -> Any:
    """A request's messages without the cache markers the CLI moves from call to call."""
    if isinstance(value, dict):
        return {k: _bare(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [_bare(v) for v in value]
    return value


def test_a_session_forked_back_into_claude_resumes_with_the_edit(
    fake: FakeAnthropicServer, tmp_path: Path, version: str
) -> None:
    """``regista fork TRANSCRIPT --at 1 --tool-result … --resume-in claude`` writes a new
    Claude Code session; ``claude --resume ID -p continue`` then sends the recorded steps
    before the edit unchanged, and the edited result in place of the real one."""
    cwd, home = tmp_path / "work", tmp_path / "home"
    cwd.mkdir()
    env = claude_env(home, fake.url)
    first = len(fake.requests)
    ran = subprocess.run(claude_cmd(), cwd=cwd, env=env, capture_output=True, text=True,
                         timeout=120, check=False)  # fmt: skip
    assert ran.returncode == 0 and f"DONE: {FIRST_OUTPUT}" in ran.stdout, ran.stderr
    recorded = [q.body for q in fake.requests[first:] if q.body.get("tools")]
    (transcript,) = (home / ".claude" / "projects").glob("*/*.jsonl")
    original = transcript.read_bytes()
    forked = subprocess.run(
        [sys.executable, "-m", "regista", "fork", str(transcript), "--at", "1",
         "--tool-result", "EDITED-BY-REGISTA", "--resume-in", "claude"],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert forked.returncode == 0, forked.stderr
    (said,) = [x for x in forked.stdout.splitlines() if x.startswith("continue: ")]
    assert said.startswith("continue: claude --resume ")  # run from the session's folder
    new_id = said.split()[-1]
    before = len(fake.requests)
    resumed = subprocess.run(
        [*claude_cmd("continue"), "--resume", new_id],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert "DONE: EDITED-BY-REGISTA" in resumed.stdout  # the model saw the edit
    sent = next(q.body for q in fake.requests[before:] if q.body.get("tools"))
    then = next(b for b in recorded if len(_tool_results(b)) == 1)  # step 2's request
    n = len(then["messages"]) - 1  # everything before the tool result, as recorded
    assert _bare(sent["messages"][:n]) == _bare(then["messages"][:n])
    result = sent["messages"][n]["content"][0]
    assert result["type"] == "tool_result" and result["content"] == "EDITED-BY-REGISTA"
    assert result["tool_use_id"] == then["messages"][n]["content"][0]["tool_use_id"]
    assert transcript.read_bytes() == original  # the parent is never touched
    # read back, the fork that ran is linked to its parent: the run tree and diff pair them
    fork_file = next(transcript.parent.glob(f"{new_id}.jsonl"))
    fork_run = Trace.load(fork_file)
    assert fork_run.start.forked_from is not None
    assert fork_run.start.forked_from["session_id"] == Trace.load(transcript).session_id
    kinds = [s.kind for s in fork_run.steps()]
    assert kinds[:2] == ["model", "tool"] and len(kinds) > 2  # the fork ran on
    row("claude-code", version).notes.append("fork back into the CLI (--resume-in): ok")
