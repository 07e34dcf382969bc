"""The share of calls a real coding-agent CLI gets served strict when it replays its own
recording: as recorded, on another day, in another folder; with and without masks.

Claude Code (``claude -p``) and Codex (``codex exec``) are recorded once each against a fake
provider on 127.0.0.1 (in folder ``work``, with their own ``HOME``), then replayed strict:

- as recorded: the same folder and ``HOME``;
- another day: Claude Code under ``faketime`` (its clock moved); Codex is a static binary
  that ``faketime`` cannot move, and the CLI the Agent SDK starts fails under it, so for
  those the dates of a copy of the recording are moved instead (request hashes
  recomputed, as ``regista redact`` does);
- another folder: another working folder and another ``HOME``.

    python bench/bench_masks.py [claude|agent-sdk|codex ...]

``agent-sdk`` is a program on the Claude Agent SDK (``tests/conformance/
claude_agent_sdk_main.py``), which drives Claude Code: the same masks apply.

Needs the CLIs of the conformance matrix (``.ci/run`` installs them into ``.ci/npm``) and
``faketime``.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import orjson

import regista

#: The checkout whose regista runs (its tests hold the fakes and the CLI helpers).
ROOT = Path(regista.__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

OTHER_DAY = "2031-02-03 12:00:00"


def served(stdout: str) -> tuple[int, int]:
    line = next((x for x in stdout.splitlines() if x.startswith("replayed:")), "")
    m = re.search(r"replayed: (\d+) of (\d+) model calls served, (\d+) matched", line)
    if m is None:
        raise SystemExit(f"no replay line in:\n{stdout}")
    return int(m.group(3)), int(m.group(2))


def shift_dates(src: Path, dst: Path, old: str, new: str) -> None:
    """A copy of ``src`` with the date ``old`` written ``new`` everywhere, its request
    hashes recomputed so that it reads (another day, simulated)."""
    from regista.trace.events import LlmRequestEvent
    from regista.trace.reader import Trace

    lines = src.read_bytes().replace(old.encode(), new.encode()).split(b"\n")
    trace = Trace.from_bytes(b"\n".join(lines), src)
    for ev in trace.events:
        if isinstance(ev, LlmRequestEvent):
            real = trace.request_for(ev).hash
            if real != ev.request_hash:
                obj = orjson.loads(lines[ev.seq])
                obj["request_hash"] = real
                lines[ev.seq] = orjson.dumps(obj)
    dst.write_bytes(b"\n".join(lines))


def table(client: str, replay: Callable[[str, list[str]], tuple[int, int]]) -> list[str]:
    out = []
    for case in ("as recorded", "another day", "another folder"):
        before = replay(case, ["--no-masks"])
        after = replay(case, [])
        out.append(f"{client:<12} {case:<15} {before[0]}/{before[1]:<10} {after[0]}/{after[1]}")
    return out


def claude(tmp: Path, sdk: bool = False) -> list[str]:
    """Claude Code's CLI, or (``sdk``) a program on the Claude Agent SDK, which drives it."""
    from conformance.claude_code_support import (
        TASK,
        claude_cmd,
        record_claude_session,
        regista,
        scripted_answer,
    )
    from fakes.anthropic_server import FakeAnthropicServer

    program = ROOT / "tests" / "conformance" / "claude_agent_sdk_main.py"

    def cmd() -> list[str]:
        return [sys.executable, str(program), TASK] if sdk else claude_cmd()

    with FakeAnthropicServer() as fake:
        fake.answer_with(scripted_answer)
        if sdk:
            run = regista(
                ["record", "--trace-dir", str(tmp / "traces")],
                cwd=tmp / "work",
                home=tmp / "home",
                upstream=fake.url,
                cmd=cmd(),
            )
            (trace,) = run.traces
        else:
            trace = record_claude_session(fake, tmp / "traces", cwd=tmp / "work", home=tmp / "home")

    moved = trace
    if sdk:  # the CLI the SDK starts fails under faketime: the dates are moved instead
        m = re.search(rb"Today's date is (\d{4}-\d{2}-\d{2})", trace.read_bytes())
        assert m is not None, "no date in the recording"
        moved = tmp / "day" / trace.name
        moved.parent.mkdir()
        shift_dates(trace, moved, m.group(1).decode(), "2026-01-02")

    def replay(case: str, extra: list[str]) -> tuple[int, int]:
        here = case == "another folder"
        day = case == "another day"
        clock = ["faketime", OTHER_DAY] if day and not sdk else []
        run = regista(
            ["replay", str(moved if day else trace), "--mode", "strict", *extra],
            cwd=tmp / ("elsewhere" if here else "work"),
            home=tmp / ("home2" if here else "home"),
            upstream=None,
            cmd=[*clock, *cmd()],
        )
        return served(run.stdout)

    return table("Agent SDK" if sdk else "Claude Code", replay)


def codex(tmp: Path) -> list[str]:
    from conformance.matrix import npm_bin
    from fakes.responses_server import FakeResponsesServer

    cli = str(npm_bin("codex"))
    task = "Say hello."

    def env(home: Path, extra: dict[str, str]) -> dict[str, str]:
        (home / ".codex").mkdir(parents=True, exist_ok=True)
        return {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(home),
            "CODEX_HOME": str(home / ".codex"),
            "LANG": "C.UTF-8",
            "NO_COLOR": "1",
            "PYTHONPATH": os.pathsep.join(sys.path),
            **extra,
        }

    def regista(args: list[str], home: Path, cwd: Path, extra: dict[str, str]) -> str:
        cwd.mkdir(parents=True, exist_ok=True)
        cmd = [sys.executable, "-m", "regista", *args, "--", cli, "exec"]
        p = subprocess.run(
            [*cmd, "--skip-git-repo-check", task],
            env=env(home, extra),
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=180,
            check=False,
        )
        return p.stdout + p.stderr

    with FakeResponsesServer() as fake:
        call = {"id": "call_1", "name": "exec_command", "arguments": '{"cmd": "echo hello"}'}
        fake.script({"tool_calls": [call]}, {"text": "hello from the fake"})
        keys = {"OPENAI_BASE_URL": fake.url, "CODEX_API_KEY": "sk-bench"}
        regista(["record", "--trace-dir", str(tmp / "cx")], tmp / "home", tmp / "work", keys)
    (trace,) = sorted((tmp / "cx").glob("*.jsonl"))
    m = re.search(rb"<current_date>(\d{4}-\d{2}-\d{2})</current_date>", trace.read_bytes())
    assert m is not None, "no <current_date> in Codex's recording"
    moved = tmp / "cx-day" / trace.name
    moved.parent.mkdir()
    shift_dates(trace, moved, m.group(1).decode(), "2026-01-02")

    def replay(case: str, extra: list[str]) -> tuple[int, int]:
        here = case == "another folder"
        path = moved if case == "another day" else trace
        out = regista(
            ["replay", str(path), "--mode", "strict", *extra],
            tmp / ("home2" if here else "home"),
            tmp / ("elsewhere" if here else "work"),
            {},
        )
        return served(out)

    return table("Codex", replay)


def main() -> None:
    which = sys.argv[1:] or ["claude", "codex"]
    lines = [f"{'client':<12} {'replayed':<15} {'no masks':<12} masks"]
    with tempfile.TemporaryDirectory() as tmp:
        for name in which:
            folder = Path(tmp) / name
            run = {"claude": claude, "codex": codex, "agent-sdk": lambda t: claude(t, sdk=True)}
            lines += run[name](folder)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
