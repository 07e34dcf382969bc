"""The real Codex CLI (``codex exec``, from npm) recorded, replayed and forked by regista.

Codex runs headless (``codex exec --skip-git-repo-check TASK``) with a temporary home and
``CODEX_HOME``, against a fake Responses API on 127.0.0.1 (``tests/fakes/responses_server``).
regista reaches it by the ``-c`` overrides it adds after the ``codex`` word (Codex reads no
base URL from the environment; see regista/cli/codex_child.py and docs/clients.md).

One conversation is recorded once for the module, on Codex's built-in ``openai`` provider:
the fake model asks for a real shell command through Codex's ``exec_command`` function tool,
then answers ``DONE: <its output>``. Replays run in the same folder with the same home, with
no provider behind regista; the last test measures a replay from another folder.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
from fakes.responses_server import FakeResponsesServer

from conformance.matrix import Row, npm_bin, row
from regista.cli.codex_child import codex_child
from regista.server import BackgroundServer, create_app
from regista.trace.reader import Trace

TASK = "Run `echo hello-from-codex-shell` and tell me what it printed."
SHELL = "echo hello-from-codex-shell"
OUTPUT = "hello-from-codex-shell"
KEY = "sk-codex-conformance-secret-4242"
CORP_KEY = "sk-corp-gateway-secret-7373"
#: A port nothing listens on: the provider is down.
DOWN = "http://127.0.0.1:9/v1"
#: One real CLI run takes a few seconds; a hang fails the test instead of the suite.
TIMEOUT = 120


@dataclass
class Ran:
    code: int
    out: str
    err: str

    @property
    def both(self) -> str:
        return self.out + self.err


def _usage(inp: int, cached: int, out: int, reasoning: int) -> dict[str, Any]:
    return {
        "input_tokens": inp,
        "input_tokens_details": {"cached_tokens": cached},
        "output_tokens": out,
        "output_tokens_details": {"reasoning_tokens": reasoning},
        "total_tokens": inp + out,
    }


def answer(body: dict[str, Any]) -> dict[str, Any]:
    """The fake model: a shell command first; then what its output said (each answer with
    cached and reasoning tokens in its usage)."""
    items = body.get("input")
    last = items[-1] if isinstance(items, list) and items else {}
    if isinstance(last, dict) and last.get("type") == "function_call_output":
        output = str(last.get("output", ""))
        said = output.split("Output:\n", 1)[-1].strip()
        return {
            "reasoning": "It printed.",
            "text": f"DONE: {said}",
            "usage": _usage(1300, 1150, 30, 10),
        }
    args = orjson.dumps({"cmd": SHELL}).decode()
    call = {"id": "call_sh1", "name": "exec_command", "arguments": args}
    return {"reasoning": "Run it.", "tool_calls": [call], "usage": _usage(1200, 1000, 40, 25)}


def _rollouts(session: dict[str, Any]) -> set[Path]:
    return set((session["root"] / "home" / ".codex" / "sessions").rglob("rollout-*.jsonl"))


def _last_usage(rollout: Path) -> dict[str, Any]:
    """The thread's total token usage in a rollout Codex wrote (its last token_count)."""
    total: dict[str, Any] = {}
    for line in rollout.read_bytes().splitlines():
        event = orjson.loads(line)
        payload = event.get("payload") if isinstance(event, dict) else None
        if isinstance(payload, dict) and payload.get("type") == "token_count":
            info = payload.get("info")
            if isinstance(info, dict) and isinstance(info.get("total_token_usage"), dict):
                total = info["total_token_usage"]
    return total


def codex_cmd(task: str = TASK) -> list[str]:
    return [str(npm_bin("codex")), "exec", "--skip-git-repo-check", task]


def codex_env(root: Path, config: str | None = None) -> dict[str, str]:
    """A clean environment for Codex: its own HOME and CODEX_HOME (``config`` as its
    config.toml), nothing of the machine's but PATH."""
    home = root / "home"
    codex_home = home / ".codex"
    codex_home.mkdir(parents=True, exist_ok=True)
    if config is not None:
        (codex_home / "config.toml").write_text(config)
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "CODEX_HOME": str(codex_home),
        "LANG": "C.UTF-8",
        "NO_COLOR": "1",
    }


def regista(args: list[str], env: dict[str, str], cwd: Path) -> Ran:
    """``regista ARGS`` in a subprocess, in ``env`` (the child's, as a user's shell has it)."""
    proc = subprocess.run(
        [sys.executable, "-m", "regista.cli.main", *args],
        env={**env, "PYTHONPATH": os.pathsep.join(sys.path)},
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )
    return Ran(proc.returncode, proc.stdout, proc.stderr)


def _version() -> str:
    out = subprocess.run(
        [str(npm_bin("codex")), "--version"], capture_output=True, text=True, check=False
    ).stdout
    return out.split()[-1] if out.strip() else "?"


def _row() -> Row:
    return row("codex", _VERSION[0] if _VERSION else _version())


_VERSION: list[str] = []


_SERVED = re.compile(
    r"(?:replayed|recorded prefix): (\d+) of \d+ model calls served, (\d+) matched"
)


def _served(out: str) -> tuple[int, int]:
    """(served, matched) from a replay's summary line."""
    m = _SERVED.search(out)
    return (int(m.group(1)), int(m.group(2))) if m else (0, 0)


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeResponsesServer]:
    with FakeResponsesServer() as server:
        server.answer_with(answer)
        yield server


@pytest.fixture(scope="module")
def session(fake: FakeResponsesServer, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One recorded ``codex exec`` conversation on the default provider (no config.toml):
    its trace, folder, environment, what Codex printed and the requests the fake received."""
    npm_bin("codex")
    _VERSION[:] = [_version()]
    root = tmp_path_factory.mktemp("codex")
    work = root / "work"
    work.mkdir()
    env = {**codex_env(root), "OPENAI_BASE_URL": fake.url, "CODEX_API_KEY": KEY}
    before = len(fake.requests)
    rollouts = set((root / "home" / ".codex").rglob("rollout-*.jsonl"))
    ran = regista(["record", "--trace-dir", str(root / "traces"), "--", *codex_cmd()], env, work)
    traces = sorted((root / "traces").glob("*.jsonl"))
    return {
        "ran": ran,
        "traces": traces,
        "trace": traces[0] if traces else None,
        "root": root,
        "work": work,
        "env": {k: v for k, v in env.items() if k != "CODEX_API_KEY"},
        "requests": fake.requests[before:],
        "rollouts": sorted(set((root / "home" / ".codex").rglob("rollout-*.jsonl")) - rollouts),
    }


def test_record_gives_one_run_that_verifies_and_shows_the_task(session: dict[str, Any]) -> None:
    r = _row()
    r.record_ok = False  # until every check below holds
    ran: Ran = session["ran"]
    assert ran.code == 0, ran.both
    assert f"DONE: {OUTPUT}" in ran.out
    # the built-in provider's calls reached the upstream, with the key Codex logs in with
    requests = session["requests"]
    assert [q.path for q in requests] == ["/v1/responses", "/v1/responses"]
    assert all(q.headers["authorization"] == f"Bearer {KEY}" for q in requests)
    assert not (session["root"] / "home" / ".codex" / "config.toml").exists()
    assert len(session["traces"]) == 1, session["traces"]  # one run per conversation
    path: Path = session["trace"]
    assert KEY.encode() not in path.read_bytes()
    trace = Trace.load(path)
    assert [s.kind for s in trace.steps()] == ["model", "tool", "model"]
    assert trace.start.task == TASK  # not Codex's <environment_context> message
    assert trace.end is not None and trace.end.output == f"DONE: {OUTPUT}"
    env = session["env"]
    check = regista(["verify", str(path)], env, session["work"])
    assert check.code == 0, check.both
    shown = regista(["show", str(path)], env, session["work"])
    assert shown.code == 0, shown.both
    assert TASK[:30] in shown.out and "environment_context" not in shown.out
    r.record_ok = True


def test_a_strict_replay_serves_every_call_with_the_provider_down(
    session: dict[str, Any],
) -> None:
    r = _row()
    trace = Trace.load(session["trace"])
    total = sum(1 for s in trace.steps() if s.kind == "model")
    env = {**session["env"], "OPENAI_BASE_URL": DOWN}
    ran = regista(["replay", str(session["trace"]), "--", *codex_cmd()], env, session["work"])
    served, _ = _served(ran.out)
    r.strict_served, r.strict_total = served, total
    assert f"replayed: {total} of {total} model calls served, {total} matched" in ran.out, ran.both
    assert ran.code == 0, ran.both
    assert f"DONE: {OUTPUT}" in ran.out


def test_a_changed_prompt_gets_a_409_that_is_not_retried(session: dict[str, Any]) -> None:
    """Codex pointed at a replay with regista's overrides: the replay counts the requests
    Codex sent for the 409 (Codex retries a stream's failure five times unless told not)."""
    app = create_app(session["trace"].parent)
    cmd = codex_cmd("Say goodbye instead.")
    with BackgroundServer(app) as server:
        made = httpx.post(
            f"{server.url}/v1/replays", json={"run": Trace.load(session["trace"]).session_id}
        ).json()
        env = session["env"]
        child = codex_child(cmd, env)
        assert child is not None
        p = subprocess.run(
            child.command(cmd, made["openai_base_url"], replay=True),
            cwd=session["work"],
            env=env,
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
            check=False,
        )
        status = httpx.get(f"{server.url}/v1/replays/{made['id']}").json()
    r = _row()
    said = p.stdout + p.stderr
    r.conflict_requests = status["requests"]
    r.conflict_surfaced = "409" in said and status["requests"] == 1
    assert p.returncode != 0
    assert "409" in said and "diverged at step 0" in said, said
    assert status["requests"] == 1, status
    assert status["served"] == 0 and status["rejected"] == 1


def test_loose_mode_serves_in_order(session: dict[str, Any]) -> None:
    env = {**session["env"], "OPENAI_BASE_URL": DOWN}
    ran = regista(
        ["replay", str(session["trace"]), "--mode", "loose", "--", *codex_cmd("Say goodbye.")],
        env,
        session["work"],
    )
    r = _row()
    r.loose_ok = ran.code == 0 and f"DONE: {OUTPUT}" in ran.out
    assert ran.code == 0, ran.both
    assert f"DONE: {OUTPUT}" in ran.out
    assert _served(ran.out)[0] == 2, ran.out


def test_a_fork_with_an_edited_shell_result_goes_live_after_it(
    session: dict[str, Any], fake: FakeResponsesServer
) -> None:
    before = len(fake.requests)
    forks = session["root"] / "forks"
    env = {**session["env"], "OPENAI_BASE_URL": fake.url, "CODEX_API_KEY": KEY}
    ran = regista(
        ["fork", str(session["trace"]), "--at", "1", "--tool-result", "EDITED-RESULT",
         "--trace-dir", str(forks), "--", *codex_cmd()],
        env,
        session["work"],
    )  # fmt: skip
    r = _row()
    r.fork_ok = False  # until every check below holds
    assert ran.code == 0, ran.both
    # Codex ran its real shell command, but the model saw the edit
    assert "DONE: EDITED-RESULT" in ran.out, ran.both
    live = fake.requests[before:]
    assert len(live) == 1  # the call after the edit went live
    assert live[0].headers["authorization"] == f"Bearer {KEY}"
    (fork_path,) = forks.glob("*.jsonl")
    fork = Trace.load(fork_path)
    assert fork.start.forked_from is not None
    assert fork.start.forked_from["session_id"] == Trace.load(session["trace"]).session_id
    assert [s.kind for s in fork.steps()] == ["model", "tool", "model"]
    assert KEY.encode() not in fork_path.read_bytes()
    r.fork_ok = True


def test_codex_s_own_rollout_imports_and_replays_to_codex(session: dict[str, Any]) -> None:
    """The rollout Codex wrote while recorded, imported (``regista import codex``), served
    back to Codex (an imported run replays loose): every answer, with its tool call and its
    usage (cached and reasoning tokens) as Codex counted it the first time."""
    (rollout,) = session["rollouts"]  # the one Codex wrote while recorded
    env = {**session["env"], "OPENAI_BASE_URL": DOWN}
    imported = session["root"] / "imported"
    ran = regista(
        ["import", "codex", str(rollout), "--trace-dir", str(imported)], env, session["work"]
    )
    assert ran.code == 0, ran.both
    (path,) = imported.glob("*.jsonl")
    trace = Trace.load(path)
    assert trace.start.task == TASK
    assert [s.kind for s in trace.steps()] == ["model", "tool", "model"]
    before = _rollouts(session)
    ran = regista(["replay", str(path), "--", *codex_cmd()], env, session["work"])
    assert ran.code == 0, ran.both
    assert f"DONE: {OUTPUT}" in ran.out
    assert _served(ran.out)[0] == 2, ran.out
    (replayed,) = _rollouts(session) - before
    assert _last_usage(replayed) == _last_usage(rollout)


def test_strict_share_from_another_folder(session: dict[str, Any], tmp_path: Path) -> None:
    """Codex puts its folder (and the date, shell, time zone) in ``<environment_context>``:
    how much of its own recording does a strict replay serve from another folder? Measured
    and noted in the row; the masks make it all."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {**session["env"], "OPENAI_BASE_URL": DOWN}
    ran = regista(["replay", str(session["trace"]), "--", *codex_cmd()], env, elsewhere)
    served, _ = _served(ran.out)
    total = sum(1 for s in Trace.load(session["trace"]).steps() if s.kind == "model")
    _row().notes.append(f"strict from another folder: {served}/{total} served")
    assert served <= total


def test_record_reaches_the_user_s_own_provider_with_its_key(tmp_path: Path) -> None:
    """A config.toml naming its own provider, base_url and env_key: regista forwards to
    that base_url, the key in that variable flows, and the file is left as it was."""
    work = tmp_path / "work"
    work.mkdir()
    with FakeResponsesServer() as fake:
        fake.script({"text": "hello from the gateway"})
        config = (
            'model = "gpt-5.5"\n'
            'model_provider = "corp"\n'
            "[model_providers.corp]\n"
            'name = "Corp gateway"\n'
            f'base_url = "{fake.url}"\n'
            'env_key = "CORP_KEY"\n'
            'wire_api = "responses"\n'
            'query_params = { "api-version" = "2025-04-01" }\n'
            'http_headers = { "X-Team" = "blue" }\n'
        )
        env = {**codex_env(tmp_path, config), "CORP_KEY": CORP_KEY}
        before = (tmp_path / "home" / ".codex" / "config.toml").read_bytes()
        ran = regista(
            ["record", "--trace-dir", str(tmp_path / "traces"), "--", *codex_cmd("say hello")],
            env,
            work,
        )
        assert ran.code == 0, ran.both
        assert "hello from the gateway" in ran.out
        assert len(fake.requests) == 1
        request = fake.requests[0]
        assert request.path == "/v1/responses?api-version=2025-04-01"
        assert request.headers["authorization"] == f"Bearer {CORP_KEY}"
        assert request.headers["x-team"] == "blue"  # given to Codex in its environment
        assert request.body["model"] == "gpt-5.5"
    assert (tmp_path / "home" / ".codex" / "config.toml").read_bytes() == before
    (path,) = (tmp_path / "traces").glob("*.jsonl")
    assert CORP_KEY.encode() not in path.read_bytes()
    assert Trace.load(path).start.task == "say hello"
    # a replay needs no key: Codex, which wants its env_key set, gets a placeholder
    env.pop("CORP_KEY")
    ran = regista(
        ["replay", str(path), "--mode", "loose", "--", *codex_cmd("say hello")], env, work
    )
    assert ran.code == 0, ran.both
    assert "hello from the gateway" in ran.out
    assert (tmp_path / "home" / ".codex" / "config.toml").read_bytes() == before


def _without_instruction_ids(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Input items without the ids Codex derives from the thread for its developer
    messages (the instructions it renders again for the new thread)."""
    return [
        {k: v for k, v in it.items() if k != "id"} if it.get("role") == "developer" else it
        for it in items
    ]


def test_a_session_forked_back_into_codex_resumes_with_the_edit(
    fake: FakeResponsesServer, tmp_path: Path
) -> None:
    """``regista fork ROLLOUT --at 1 --tool-result … --resume-in codex`` writes a new
    rollout; ``codex exec resume ID continue`` then sends the recorded items before the
    edit unchanged, and the edited output in place of the real one."""
    npm_bin("codex")
    work = tmp_path / "work"
    work.mkdir()
    config = (
        'model = "gpt-5.5"\nmodel_provider = "local"\n[model_providers.local]\n'
        f'name = "local"\nbase_url = "{fake.url}"\nwire_api = "responses"\n'
        'env_key = "OPENAI_API_KEY"\nsupports_websockets = false\n'
    )
    env = {**codex_env(tmp_path, config), "OPENAI_API_KEY": KEY}
    first = len(fake.requests)
    ran = subprocess.run(codex_cmd(), cwd=work, env=env, capture_output=True, text=True,
                         timeout=TIMEOUT, check=False)  # fmt: skip
    assert ran.returncode == 0 and f"DONE: {OUTPUT}" in ran.stdout, ran.stderr
    recorded = [q.body for q in fake.requests[first:]]
    (rollout,) = (tmp_path / "home" / ".codex" / "sessions").rglob("rollout-*.jsonl")
    original = rollout.read_bytes()
    forked = regista(
        ["fork", str(rollout), "--at", "1", "--tool-result", "EDITED-BY-REGISTA",
         "--resume-in", "codex"], {k: v for k, v in env.items() if k != "OPENAI_API_KEY"}, work,
    )  # fmt: skip
    assert forked.code == 0, forked.both
    (said,) = [x for x in forked.out.splitlines() if x.startswith("continue: ")]
    assert said.startswith("continue: codex resume ")
    new_id = said.split()[-1]
    before = len(fake.requests)
    resumed = subprocess.run(
        [str(npm_bin("codex")), "exec", "--skip-git-repo-check", "resume", new_id, "continue"],
        cwd=work, env=env, capture_output=True, text=True, timeout=TIMEOUT, check=False,
    )  # fmt: skip
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert new_id in resumed.stderr  # the banner names the fork, not its parent
    sent = fake.requests[before].body["input"]
    then = recorded[1]["input"]  # the request after the shell call: its output last
    assert then[-1]["type"] == "function_call_output"
    # every item before it as recorded (Codex names its own instructions anew per thread)
    assert _without_instruction_ids(sent[: len(then) - 1]) == _without_instruction_ids(then[:-1])
    assert sent[len(then) - 1] == {**then[-1], "output": "EDITED-BY-REGISTA"}
    assert rollout.read_bytes() == original  # the parent is never touched
    (fork_file,) = (tmp_path / "home" / ".codex" / "sessions").rglob(f"*{new_id}.jsonl")
    fork_run = Trace.load(fork_file)
    assert fork_run.start.forked_from is not None
    assert fork_run.start.forked_from["session_id"] == Trace.load(rollout).session_id
    _row().notes.append("fork back into the CLI (--resume-in): ok")
