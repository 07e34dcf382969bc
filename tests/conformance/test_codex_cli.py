"""The real Codex CLI (``codex exec``) recorded, replayed and forked through regista.

Codex runs headless (``codex exec --skip-git-repo-check TASK``) with a temporary home and
``CODEX_HOME``, against a fake Responses API on 127.0.0.1 (``tests/fakes/responses_server``).
regista reaches it by the ``-c`` overrides it adds after the ``codex`` word (Codex reads no
base URL from the environment; see regista/cli/codex_child.py and docs/clients.md).
"""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from fakes.responses_server import FakeResponsesServer

from conformance.matrix import npm_bin

KEY = "sk-codex-conformance-secret-4242"
CORP_KEY = "sk-corp-gateway-secret-7373"
#: One real CLI run: Codex's own start-up is about a second; a run here takes a few.
TIMEOUT = 120


@dataclass
class Ran:
    code: int
    out: str
    err: str


def _codex() -> str:
    return str(npm_bin("codex"))


def _home(root: Path, config: str | None = None) -> dict[str, str]:
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
    """``regista ARGS`` in a subprocess (the environment is the child's, as a user's shell)."""
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


def _traces(folder: Path) -> list[Path]:
    return sorted(folder.glob("*.jsonl")) if folder.exists() else []


def test_record_reaches_the_default_provider_with_codex_s_own_key(tmp_path: Path) -> None:
    """No config.toml: the built-in ``openai`` provider. Its calls reach the upstream
    OPENAI_BASE_URL names, through regista, with the key Codex logs in with."""
    codex = _codex()
    work = tmp_path / "work"
    work.mkdir()
    with FakeResponsesServer() as fake:
        fake.script({"text": "hello from the fake"})
        env = {**_home(tmp_path), "OPENAI_BASE_URL": fake.url, "CODEX_API_KEY": KEY}
        ran = regista(
            [
                "record",
                "--trace-dir",
                str(tmp_path / "traces"),
                "--",
                codex,
                "exec",
                "--skip-git-repo-check",
                "say hello",
            ],
            env,
            work,
        )
        assert ran.code == 0, ran.err
        assert "hello from the fake" in ran.out
        assert len(fake.requests) == 1
        request = fake.requests[0]
        assert request.path == "/v1/responses"
        assert request.headers["authorization"] == f"Bearer {KEY}"
        assert not (tmp_path / "home" / ".codex" / "config.toml").exists()
    for path in _traces(tmp_path / "traces"):
        assert KEY.encode() not in path.read_bytes()


def test_record_reaches_the_user_s_own_provider_with_its_key(tmp_path: Path) -> None:
    """A config.toml naming its own provider, base_url and env_key: regista forwards to
    that base_url, the key in that variable flows, and the file is left as it was."""
    codex = _codex()
    work = tmp_path / "work"
    work.mkdir()
    with FakeResponsesServer() as fake:
        fake.script({"text": "hello from the gateway"})
        config = (
            'model = "gpt-5.5"\n'
            'model_provider = "corp"\n'
            "check_for_update_on_startup = false\n"
            "[model_providers.corp]\n"
            'name = "Corp gateway"\n'
            f'base_url = "{fake.url}"\n'
            'env_key = "CORP_KEY"\n'
            'wire_api = "responses"\n'
            'query_params = { "api-version" = "2025-04-01" }\n'
        )
        env = {**_home(tmp_path, config), "CORP_KEY": CORP_KEY}
        before = (tmp_path / "home" / ".codex" / "config.toml").read_bytes()
        ran = regista(
            [
                "record",
                "--trace-dir",
                str(tmp_path / "traces"),
                "--",
                codex,
                "exec",
                "--skip-git-repo-check",
                "say hello",
            ],
            env,
            work,
        )
        assert ran.code == 0, ran.err
        assert "hello from the gateway" in ran.out
        assert len(fake.requests) == 1
        request = fake.requests[0]
        assert request.path == "/v1/responses?api-version=2025-04-01"
        assert request.headers["authorization"] == f"Bearer {CORP_KEY}"
        assert request.body["model"] == "gpt-5.5"
    assert (tmp_path / "home" / ".codex" / "config.toml").read_bytes() == before
    for path in _traces(tmp_path / "traces"):
        assert CORP_KEY.encode() not in path.read_bytes()
