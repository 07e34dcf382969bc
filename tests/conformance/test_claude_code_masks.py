"""The real Claude Code CLI replays its own recording strict in another folder, with another
``HOME``, on another day: the built-in masks cover the working folder, the memory folder
and the date it puts in its prompt, and nothing else; without them the first call is a 409.
A program on the Claude Agent SDK, which starts the same CLI, replays strict in another
folder too.

The other day is real: ``faketime`` moves the CLI's clock (Debian's ``faketime``, which
``.ci/run`` installs); without it that half is skipped and says so.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest
from fakes.anthropic_server import FakeAnthropicServer

from conformance.claude_code_support import (
    TASK,
    claude_cmd,
    record_claude_session,
    regista,
    scripted_answer,
)
from conformance.matrix import need, npm_bin, pkg_version

#: A day that is not today, for the CLI's clock.
OTHER_DAY = "2031-02-03 12:00:00"


@pytest.fixture(scope="module")
def recording(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    npm_bin("claude")
    tmp = tmp_path_factory.mktemp("cc-masks")
    with FakeAnthropicServer() as fake:
        fake.answer_with(scripted_answer)
        trace = record_claude_session(fake, tmp / "traces", cwd=tmp / "work", home=tmp / "home")
    return trace, tmp


def _faketime() -> list[str]:
    if shutil.which("faketime") is None:
        need("faketime", "apt-get install faketime (.ci/run does)")
    return ["faketime", OTHER_DAY]


def _replay(
    trace: Path, where: Path, *extra: str, clock: list[str] | None = None
) -> tuple[int, str]:
    run = regista(
        ["replay", str(trace), "--mode", "strict", *extra],
        cwd=where / "elsewhere",
        home=where / "home-elsewhere",
        upstream=None,  # nothing to reach: every call comes from the recording
        cmd=[*(clock or []), *claude_cmd()],
    )
    (line,) = [x for x in run.stdout.splitlines() if x.startswith("replayed:")]
    return run.code, line


def test_another_folder_and_home_replays_every_call_strict(recording: tuple[Path, Path]) -> None:
    trace, tmp = recording
    code, line = _replay(trace, tmp)
    assert code == 0, line
    assert "replayed: 3 of 3 model calls served, 3 matched (3 through masks:" in line, line
    assert "cc-cwd" in line and "cc-memory-dir" in line


def test_another_day_replays_every_call_strict(recording: tuple[Path, Path]) -> None:
    trace, tmp = recording
    code, line = _replay(trace, tmp, clock=_faketime())
    assert code == 0, line
    assert "3 of 3 model calls served, 3 matched" in line and "cc-date" in line, line


def test_without_masks_another_folder_is_a_409_at_the_first_call(
    recording: tuple[Path, Path],
) -> None:
    trace, tmp = recording
    code, line = _replay(trace, tmp, "--no-masks")
    assert code != 0
    assert "0 of 3 model calls served" in line and "first divergence at step 0: system" in line


def test_the_agent_sdk_replays_strict_in_another_folder(tmp_path: Path) -> None:
    """A program on the Claude Agent SDK gives Claude Code its own system prompt, and Claude
    Code then sends its environment block and the date in a message: masked there too."""
    pkg_version("claude-agent-sdk")
    program = Path(__file__).with_name("claude_agent_sdk_main.py")
    cmd = [sys.executable, str(program), TASK]
    with FakeAnthropicServer() as fake:
        fake.answer_with(scripted_answer)
        run = regista(
            ["record", "--trace-dir", str(tmp_path / "traces")],
            cwd=tmp_path / "work",
            home=tmp_path / "home",
            upstream=fake.url,
            cmd=cmd,
        )
    assert run.code == 0, run.stderr
    (trace,) = run.traces
    replayed = regista(
        ["replay", str(trace), "--mode", "strict"],
        cwd=tmp_path / "elsewhere",
        home=tmp_path / "home-elsewhere",
        upstream=None,
        cmd=cmd,
    )
    (line,) = [x for x in replayed.stdout.splitlines() if x.startswith("replayed:")]
    assert replayed.code == 0, line
    assert "3 of 3 model calls served, 3 matched (3 through masks: cc-cwd)" in line, line
