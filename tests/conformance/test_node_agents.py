"""Node agents on the real ``@anthropic-ai/sdk`` and ``openai`` npm packages, recorded,
tape-tested from vitest and jest, and forked in signal mode through the TypeScript client.

The agents are the repository's example (``examples/node-agent``): a weather agent on each
SDK. Each is recorded with ``regista record -- node …`` against the fake providers on
127.0.0.1 (``tests/fakes/launch.py`` answers); vitest and jest then replay both recordings
strictly (``tapeTest`` from ``clients/typescript``), a changed prompt must fail both with the
message ``regista test`` prints, and ``fork.js`` forks each run at its tool step in signal
mode, going live against the fake, the fork linked to its parent in ``regista runs``.

Needs node, the client's build and the example's packages (``npm ci``, as ``.ci/run``
does): skipped with the reason when missing, failed under ``CI=true``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from fakes.anthropic_server import FakeAnthropicServer
from fakes.launch import anthropic_answer, openai_answer
from fakes.openai_server import FakeOpenAIServer

from conformance.matrix import Row, need, row
from regista.server import BackgroundServer, create_app
from regista.trace.reader import Trace

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "node-agent"
CLIENT = ROOT / "clients" / "typescript"
KEY = "sk-node-agent-secret-5151"
KINDS = ("anthropic", "openai")
PACKAGES = {"anthropic": "@anthropic-ai/sdk", "openai": "openai"}
CHANGED = "What's the weather in Lyon?"


def _node_project() -> None:
    """Skip (fail under CI=true) unless node, the client's build and the example's
    packages are there."""
    if shutil.which("node") is None:
        need("node", "install Node.js (Debian: nodejs), then run .ci/run")
    if not (CLIENT / "dist" / "index.js").exists():
        need("the TypeScript client's build", "cd clients/typescript && npm ci && npm run build")
    for tool in ("vitest", "jest"):
        if not (EXAMPLE / "node_modules" / ".bin" / tool).exists():
            need(tool, "cd examples/node-agent && npm ci (.ci/run does)")


def _version(package: str) -> str:
    manifest = EXAMPLE / "node_modules" / package / "package.json"
    return str(json.loads(manifest.read_text())["version"])


def _row(kind: str) -> Row:
    return row(f"{PACKAGES[kind]} (Node)", _version(PACKAGES[kind]))


def _env(**more: str) -> dict[str, str]:
    regista = Path(sys.executable).with_name("regista")
    env = {k: v for k, v in os.environ.items() if not k.endswith(("_BASE_URL", "_API_KEY"))}
    env.pop("WEATHER_PROMPT", None)
    return {**env, "REGISTA_BIN": str(regista), "NO_COLOR": "1", "FORCE_COLOR": "0", **more}


def _run(cmd: list[str], **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        cmd, cwd=EXAMPLE, env=_env(**env), capture_output=True, text=True, timeout=180
    )


def _regista(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return _run([sys.executable, "-m", "regista", *args], **env)


@dataclass
class Recorded:
    store: Path
    tapes: Path
    runs: dict[str, str]
    fakes: dict[str, str]


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Recorded]:
    _node_project()
    store = tmp_path_factory.mktemp("node-store")
    tapes = tmp_path_factory.mktemp("node-tapes")
    with (
        FakeAnthropicServer().answer_with(anthropic_answer) as a,
        FakeOpenAIServer().answer_with(openai_answer) as o,
    ):
        runs = {}
        for kind, url in (("anthropic", a.url), ("openai", o.url)):
            before = set(store.glob("*.jsonl"))
            done = _regista(
                "record",
                "--trace-dir",
                str(store),
                "--",
                "node",
                f"{kind}-agent.js",
                **{f"{kind.upper()}_BASE_URL": url, f"{kind.upper()}_API_KEY": KEY},
            )
            assert done.returncode == 0, done.stdout + done.stderr
            assert "The weather: sunny in Paris, 21°C" in done.stdout
            (path,) = set(store.glob("*.jsonl")) - before
            shutil.copyfile(path, tapes / f"{kind}.jsonl")
            runs[kind] = path.stem
        yield Recorded(store, tapes, runs, {"anthropic": a.url, "openai": o.url})


@pytest.mark.parametrize("kind", KINDS)
def test_recorded(recorded: Recorded, kind: str) -> None:
    r = _row(kind)
    r.record_ok = False
    path = recorded.store / f"{recorded.runs[kind]}.jsonl"
    trace = Trace.load(path)
    assert [s.kind for s in trace.steps()] == ["model", "tool", "model"]
    assert KEY not in path.read_text()
    r.record_ok = True


@pytest.mark.parametrize("runner", ["vitest", "jest"])
def test_tape_tests_pass_from_the_runner(recorded: Recorded, runner: str) -> None:
    cmd = [str(EXAMPLE / "node_modules" / ".bin" / runner)] + (
        ["run"] if runner == "vitest" else []
    )
    done = _run(cmd, REGISTA_TAPES=str(recorded.tapes))
    said = done.stdout + done.stderr
    assert done.returncode == 0, said
    assert "3 passed" in said, said
    for kind in KINDS:
        calls = sum(s.kind == "model" for s in Trace.load(recorded.tapes / f"{kind}.jsonl").steps())
        r = _row(kind)
        r.strict_served, r.strict_total = calls, calls


def test_a_changed_prompt_fails_both_runners_naming_the_step_and_the_field(
    recorded: Recorded,
) -> None:
    messages = {}
    for kind in KINDS:
        tape = recorded.tapes / f"{kind}.jsonl"
        done = _regista("test", str(tape), "--", "node", f"{kind}-agent.js", WEATHER_PROMPT=CHANGED)
        assert done.returncode == 1, done.stdout + done.stderr
        (line,) = [x.strip() for x in done.stdout.splitlines() if "diverged at step" in x]
        assert line == (
            f"{kind}.jsonl: diverged at step 0 (model call): messages[0].content[0].text: "
            f'recorded "What\'s the weather in Paris?" != live "{CHANGED}"'
        )
        messages[kind] = line
    for runner in ("vitest", "jest"):
        cmd = [str(EXAMPLE / "node_modules" / ".bin" / runner)]
        cmd += ["run"] if runner == "vitest" else []
        done = _run(cmd, REGISTA_TAPES=str(recorded.tapes), WEATHER_PROMPT=CHANGED)
        said = done.stdout + done.stderr
        assert done.returncode != 0, said
        for kind, message in messages.items():
            # the same message as regista test's, word for word
            assert f"TapeMismatch: {message}" in said, (runner, said)
            _row(kind).conflict_surfaced = True


def test_regista_test_junit_plays_the_golden_runs(recorded: Recorded, tmp_path: Path) -> None:
    for kind in KINDS:
        report = tmp_path / f"{kind}.xml"
        tape = str(recorded.tapes / f"{kind}.jsonl")
        done = _regista("test", tape, "--junit", str(report), "--", "node", f"{kind}-agent.js")
        assert done.returncode == 0, done.stdout + done.stderr
        assert "1 passed, 0 failed" in done.stdout
        suite = ET.parse(report).getroot().find("testsuite")
        assert suite is not None and suite.get("failures") == "0" and suite.get("tests") == "1"


@pytest.mark.parametrize("kind", KINDS)
def test_a_signal_fork_goes_live_linked_to_its_parent(recorded: Recorded, kind: str) -> None:
    r = _row(kind)
    r.fork_ok = False
    run = recorded.runs[kind]
    app = create_app(recorded.store, upstreams=dict(recorded.fakes))
    with BackgroundServer(app) as server:
        done = _run(["node", "fork.js", server.url, run, kind], **{f"{kind.upper()}_API_KEY": KEY})
    assert done.returncode == 0, done.stdout + done.stderr
    said = json.loads(done.stdout.strip().splitlines()[-1])
    # the agent's tool says "sunny": the live model saw the edit in its place
    assert said["answer"] == "The weather: rainy in Paris, 12°C"
    assert said["live"] is True
    fork = said["fork"]
    assert fork["forked_from"] == run and fork["outcome"] == "end_turn" and fork["steps"] == 3
    listed = _regista("runs", "--json", str(recorded.store))
    assert listed.returncode == 0, listed.stderr
    runs = {x["session_id"]: x for x in json.loads(listed.stdout)}
    assert runs[fork["id"]]["parent_id"] == run
    written = (recorded.store / f"{fork['id']}.jsonl").read_text()
    assert KEY not in written
    r.fork_ok = True
