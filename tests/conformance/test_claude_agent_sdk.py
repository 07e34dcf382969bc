"""The Claude Agent SDK (PyPI ``claude-agent-sdk``, which drives its bundled Claude Code)
recorded, replayed and forked by regista.

The agent program is ``claude_agent_sdk_main.py``. One conversation is recorded once for
the module: the fake model asks for two real ``Bash`` calls, then answers ``DONE: <the
first one's output>``. Every replay runs in the same folder with the same ``HOME``, with no
provider behind regista.
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
    claude_env,
    regista,
    scripted_answer,
    served,
)
from conformance.matrix import pkg_version, row
from regista.server import BackgroundServer, create_app
from regista.trace.reader import Trace

CLIENT = "claude-agent-sdk"
MAIN = Path(__file__).with_name("claude_agent_sdk_main.py")


def sdk_cmd(task: str = TASK) -> list[str]:
    return [sys.executable, str(MAIN), task]


@pytest.fixture(scope="module")
def version() -> str:
    return pkg_version("claude-agent-sdk")


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeAnthropicServer]:
    with FakeAnthropicServer() as server:
        server.answer_with(scripted_answer)
        yield server


@pytest.fixture(scope="module")
def session(fake: FakeAnthropicServer, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One recorded conversation of the SDK: its trace, folder and home."""
    pkg_version("claude-agent-sdk")
    root = tmp_path_factory.mktemp("claude-agent-sdk")
    cwd, home = root / "work", root / "home"
    before = len(fake.requests)
    run = regista(
        ["record", "--trace-dir", str(root / "traces")],
        cwd=cwd,
        home=home,
        upstream=fake.url,
        cmd=sdk_cmd(),
    )
    assert run.code == 0, run.stdout + run.stderr
    (trace,) = run.traces
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
    r = row(CLIENT, version)
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
    return [sys.executable, "-m", "regista"]


def test_a_strict_replay_serves_every_call_with_the_provider_down(
    session: dict[str, Any], version: str
) -> None:
    run = regista(
        ["replay", str(session["trace"])],
        cwd=session["cwd"],
        home=session["home"],
        upstream=None,
        cmd=sdk_cmd(),
    )
    r = row(CLIENT, version)
    total = len([s for s in Trace.load(session["trace"]).steps() if s.kind == "model"])
    r.strict_served, r.strict_total = served(run.stdout), total
    assert run.code == 0, run.stdout + run.stderr
    assert f"DONE: {FIRST_OUTPUT}" in run.stdout
    assert f"replayed: {total} of {total} model calls served, {total} matched" in run.stdout


def test_a_changed_prompt_gets_a_409_that_is_not_retried(
    session: dict[str, Any], version: str
) -> None:
    """The SDK pointed straight at a replay (no provider behind it): the replay's own
    count of requests says how many it sent for the 409."""
    app = create_app(session["trace"].parent)
    with BackgroundServer(app) as server:
        made = httpx.post(
            f"{server.url}/v1/replays", json={"run": Trace.load(session["trace"]).session_id}
        ).json()
        env = claude_env(session["home"], None)
        env["ANTHROPIC_BASE_URL"] = made["anthropic_base_url"]
        p = subprocess.run(
            sdk_cmd("Say goodbye instead."),
            cwd=session["cwd"],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        status = httpx.get(f"{server.url}/v1/replays/{made['id']}").json()
    r = row(CLIENT, version)
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
        cmd=sdk_cmd("Say goodbye instead."),
    )
    assert run.code != 0
    assert "replayed: 0 of 3 model calls served, 0 matched, 1 request rejected" in run.stdout


def test_loose_mode_serves_in_order(session: dict[str, Any], version: str) -> None:
    run = regista(
        ["replay", str(session["trace"]), "--mode", "loose"],
        cwd=session["cwd"],
        home=session["home"],
        upstream=None,
        cmd=sdk_cmd("Say goodbye instead."),
    )
    r = row(CLIENT, version)
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
        cmd=sdk_cmd(),
    )  # fmt: skip
    r = row(CLIENT, version)
    assert run.code == 0, run.stdout + run.stderr
    # the bundled CLI ran its real Bash (hello-from-bash), but the model saw the edit
    assert "DONE: EDITED-RESULT" in run.stdout
    assert len(fake.requests) - before == 2  # the two calls after the edit went live
    (fork_path,) = forks.glob("*.jsonl")
    fork = Trace.load(fork_path)
    assert fork.start.forked_from is not None
    assert fork.start.forked_from["session_id"] == Trace.load(session["trace"]).session_id
    assert [s.kind for s in fork.steps()] == ["model", "tool", "model", "tool", "model"]
    r.fork_ok = True
