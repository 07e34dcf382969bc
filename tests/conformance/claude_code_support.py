"""Driving the real Claude Code CLI (``claude -p``) through regista against the fake provider.

:func:`claude_env` is the environment a headless run needs (a temporary ``HOME``, no
telemetry, no traffic but the model calls, the bypass permission mode allowed as root);
:func:`regista` runs ``regista ARGS… -- claude -p TASK …`` in a folder and returns what it
did; :func:`record_claude_session` records one conversation into a folder and returns its
trace. The fake answers with :func:`scripted_answer`: a conversation of three model calls
and two real ``Bash`` tool calls, decided from the request alone (so a fork that goes
live gets the same answers), whose final text quotes the first tool result::

    with FakeAnthropicServer() as fake:
        fake.answer_with(scripted_answer)
        trace = record_claude_session(fake, tmp / "traces", cwd=tmp / "work", home=tmp / "home")
"""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fakes.anthropic_server import FakeAnthropicServer

from conformance.matrix import npm_bin

__all__ = [
    "FIRST_OUTPUT",
    "TASK",
    "ClaudeRun",
    "claude_cmd",
    "claude_env",
    "record_claude_session",
    "regista",
    "scripted_answer",
]

#: The task every recorded session is given.
TASK = "Say hello with the Bash tool, then report what it printed."
#: What the first Bash call prints (and the final answer quotes).
FIRST_OUTPUT = "hello-from-bash"
FIRST_COMMAND = f"echo {FIRST_OUTPUT}"
SECOND_COMMAND = "echo second-call"
#: A fake API key: forwarded by the proxy, never written.
API_KEY = "sk-ant-conformance-secret"


def _tool_results(body: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for m in body.get("messages") or []:
        content = m.get("content") if isinstance(m, dict) else None
        if m.get("role") == "user" and isinstance(content, list):
            out += [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"]
    return out


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(b.get("text", "")) for b in content if isinstance(b, dict))
    return ""


def scripted_answer(body: dict[str, Any]) -> dict[str, Any]:
    """The fake model: Bash ``echo hello-from-bash``, then Bash ``echo second-call``, then
    ``DONE: <what the first call returned>``; a call without tools (a side call) gets a
    short JSON text."""
    if not body.get("tools"):
        return {"content": [{"type": "text", "text": '{"title": "Say hello"}'}]}
    results = _tool_results(body)
    if not results:
        return {
            "content": [
                {"type": "thinking", "thinking": "Run echo.", "signature": "sig-fake-0"},
                {"type": "text", "text": "Running it."},
                {
                    "type": "tool_use",
                    "id": "toolu_conf_1",
                    "name": "Bash",
                    "input": {"command": FIRST_COMMAND, "description": "Say hello"},
                },
            ]
        }
    if len(results) == 1:
        return {
            "content": [
                {
                    "type": "tool_use",
                    "id": "toolu_conf_2",
                    "name": "Bash",
                    "input": {"command": SECOND_COMMAND, "description": "Once more"},
                }
            ]
        }
    first = _text_of(results[0].get("content")).strip()
    return {"content": [{"type": "text", "text": f"DONE: {first}"}]}


def claude_cmd(task: str = TASK, *extra: str) -> list[str]:
    """``claude -p TASK --permission-mode bypassPermissions`` (the CLI of the matrix)."""
    return [str(npm_bin("claude")), "-p", task, "--permission-mode", "bypassPermissions", *extra]


def claude_env(home: Path, upstream: str | None) -> dict[str, str]:
    """The environment of a headless run: the process's own without Anthropic settings,
    a temporary ``HOME``, no telemetry nor other traffic, and ``upstream`` as the base URL
    regista forwards to (``None``: none, a replay needs no provider)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "CLAUDE"))}
    home.mkdir(parents=True, exist_ok=True)
    env.update(
        HOME=str(home),
        IS_SANDBOX="1",
        DISABLE_TELEMETRY="1",
        DISABLE_AUTOUPDATER="1",
        DISABLE_ERROR_REPORTING="1",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
        ANTHROPIC_API_KEY=API_KEY,
        PYTHONUNBUFFERED="1",
    )
    if upstream is not None:
        env["ANTHROPIC_BASE_URL"] = upstream
    return env


@dataclass
class ClaudeRun:
    """What one ``regista … -- claude`` run did."""

    code: int
    stdout: str
    stderr: str

    @property
    def traces(self) -> list[Path]:
        """The traces regista printed (``trace: PATH`` / ``fork: … PATH`` lines)."""
        return [Path(line.split(": ", 1)[1]) for line in self.stdout.splitlines() if
                line.startswith("trace: ")]  # fmt: skip


def regista(
    args: list[str],
    *,
    cwd: Path,
    home: Path,
    upstream: str | None,
    cmd: list[str] | None = None,
    timeout: float = 120,
) -> ClaudeRun:
    """Run ``regista ARGS -- CMD`` (default CMD: :func:`claude_cmd`) in ``cwd``."""
    cwd.mkdir(parents=True, exist_ok=True)
    full = [sys.executable, "-m", "regista", *args, "--", *(cmd or claude_cmd())]
    p = subprocess.run(
        full,
        cwd=cwd,
        env=claude_env(home, upstream),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    return ClaudeRun(p.returncode, p.stdout, p.stderr)


def served(out: str) -> int:
    """How many model calls the ``replayed: N of M …`` line of a replay says it served."""
    for line in out.splitlines():
        if line.startswith("replayed: "):
            return int(line.split()[1])
    return 0


def record_claude_session(
    fake: FakeAnthropicServer,
    trace_dir: Path,
    *,
    cwd: Path,
    home: Path,
    task: str = TASK,
) -> Path:
    """Record one ``claude -p`` conversation (answered by ``fake``, which should answer
    with :func:`scripted_answer`) into ``trace_dir``, run in ``cwd`` with ``home`` as its
    ``HOME``; the conversation's trace (side-call traces, if any, are left beside it)."""
    run = regista(
        ["record", "--trace-dir", str(trace_dir)],
        cwd=cwd,
        home=home,
        upstream=fake.url,
        cmd=claude_cmd(task),
    )
    if run.code != 0:
        raise AssertionError(f"regista record -- claude failed ({run.code}):\n{run.stderr}")
    from regista.trace.reader import Trace

    mains = [p for p in run.traces if not _is_side(Trace.load(p).start.metadata)]
    if len(mains) != 1:
        raise AssertionError(f"expected one conversation, got {run.traces}:\n{run.stdout}")
    return mains[0]


def _is_side(metadata: dict[str, Any]) -> bool:
    return isinstance(metadata, dict) and "side_calls_of" in metadata
