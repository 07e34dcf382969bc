"""The real Codex CLI replays its own recording strict, and in another folder with another
``HOME``: the built-in masks cover the folder and home paths of its prompt, the fresh id of
the ``additional_tools`` item it makes on every run, and the chunk id and wall time heading a
command's output; without them not even the recording's own folder replays.

Codex reads its provider from its own configuration; ``regista replay -- codex …`` points it
at the replay (see docs/clients.md).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.matrix import npm_bin

fakes_responses = pytest.importorskip(
    "fakes.responses_server", reason="the fake Responses API is not in this checkout"
)

TASK = "Say hello."
CALL = {"id": "call_1", "name": "exec_command", "arguments": '{"cmd": "echo hello"}'}


def _regista(args: list[str], root: Path, cwd: Path, extra: dict[str, str]) -> str:
    home = root / "home"
    (home / ".codex").mkdir(parents=True, exist_ok=True)
    cwd.mkdir(parents=True, exist_ok=True)
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "CODEX_HOME": str(home / ".codex"),
        "LANG": "C.UTF-8",
        "NO_COLOR": "1",
        "PYTHONPATH": os.pathsep.join(sys.path),
        **extra,
    }
    cmd = [sys.executable, "-m", "regista", *args, "--", str(npm_bin("codex")), "exec"]
    p = subprocess.run(
        [*cmd, "--skip-git-repo-check", TASK],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    return p.stdout + p.stderr


@pytest.fixture(scope="module")
def recording(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    npm_bin("codex")
    tmp = tmp_path_factory.mktemp("codex-masks")
    with fakes_responses.FakeResponsesServer() as fake:
        fake.script({"tool_calls": [CALL]}, {"text": "hello from the fake"})
        keys = {"OPENAI_BASE_URL": fake.url, "CODEX_API_KEY": "sk-codex-masks"}
        out = _regista(["record", "--trace-dir", str(tmp / "traces")], tmp, tmp / "work", keys)
        assert len(fake.requests) == 2, out
    (trace,) = sorted((tmp / "traces").glob("*.jsonl"))
    return trace, tmp


def _line(out: str) -> str:
    (line,) = [x for x in out.splitlines() if x.startswith("replayed:")]
    return line


def test_another_folder_and_home_replays_every_call_strict(recording: tuple[Path, Path]) -> None:
    trace, tmp = recording
    other = tmp / "other"
    line = _line(_regista(["replay", str(trace), "--mode", "strict"], other, other / "w", {}))
    assert "replayed: 2 of 2 model calls served, 2 matched (2 through masks:" in line, line
    for name in ("codex-cwd", "codex-skill-root", "codex-item-id", "codex-exec-timing"):
        assert name in line, line


def test_without_masks_not_even_its_own_folder_replays(recording: tuple[Path, Path]) -> None:
    trace, tmp = recording
    args = ["replay", str(trace), "--mode", "strict", "--no-masks"]
    line = _line(_regista(args, tmp, tmp / "work", {}))
    assert "0 of 2 model calls served" in line and ".item.id: recorded 'at_" in line, line
