"""`regista watch` as a process: following new sessions, stopping cleanly, and a kill -9
in the middle of an import leaving a library whose every trace is whole."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from home import grow, make_home
from importers.cc_fixtures import CCSession, text, tool_use

from regista.store.library import Library, Root
from regista.trace.reader import Trace

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("CLAUDE_CONFIG_DIR", "CODEX_HOME")}
    env.update(HOME=str(home), REGISTA_LIBRARY=str(home / "lib"), PYTHONUNBUFFERED="1")
    return env


def _watch(home: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "regista", "watch", *args],
        env=_env(home),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _until(proc: subprocess.Popen[str], wanted: str) -> list[str]:
    """Lines of ``proc``'s output up to the first that has ``wanted``."""
    assert proc.stdout is not None
    seen = []
    for line in proc.stdout:
        seen.append(line)
        if wanted in line:
            return seen
    raise AssertionError(f"the watch ended before {wanted!r}: {seen} {proc.stderr.read()}")  # type: ignore[union-attr]


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 0)])
def test_watch_follows_new_sessions_and_stops_with_one_line(
    tmp_path: Path, sig: signal.Signals, code: int
) -> None:
    files = make_home(tmp_path)
    proc = _watch(tmp_path, "--interval", "0.1")
    try:
        _until(proc, "watching ")
        grow(files["basic"], "and the invoices")
        _until(proc, "imported 1 session(s)")
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == code
    assert err.strip().splitlines() == [f"stopped; the library is in {tmp_path / 'lib'}"]


def _big_home(home: Path, sessions: int) -> None:
    """Sessions of a few hundred KB each, so an import is under way when it is killed."""
    body = "\n".join(f"{i:>6}→ total = order.total * rate  # {i}" for i in range(3000))
    for n in range(sessions):
        s = CCSession(session_id=f"00000000-0000-4000-8000-{n:012d}")
        s.prompt(f"Task {n}")
        for k in range(3):
            s.answer(tool_use(f"toolu_{n}_{k}", "Read", file_path=f"/src/m{k}.py"))
            s.tool_result(f"toolu_{n}_{k}", body)
        s.answer(text("Done."), stop_reason="end_turn")
        s.write(home / ".claude" / "projects" / "-src" / f"{s.session_id}.jsonl")


def _visible_traces(lib: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted((lib / "claude-code").glob("*.jsonl"))}


def test_kill_9_mid_import_leaves_the_library_consistent(tmp_path: Path) -> None:
    _big_home(tmp_path, 16)
    proc = _watch(tmp_path, "--once", "-v")
    try:
        _until(proc, "→")
        _until(proc, "→")
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    lib = tmp_path / "lib"
    partial = _visible_traces(lib)
    assert 2 <= len(partial) < 16
    for name in partial:  # every trace a reader can see is whole
        trace = Trace.load(lib / "claude-code" / name)
        assert trace.events[-1].type == "session.end"
    # the next run finishes the job: the same library as one that was never killed
    done = subprocess.run(
        [sys.executable, "-m", "regista", "watch", "--once"],
        env=_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    with Library(
        tmp_path / "clean", [Root.of("claude-code", tmp_path / ".claude" / "projects")]
    ) as c:
        c.sync()
    assert _visible_traces(lib) == _visible_traces(tmp_path / "clean")
    assert len(_visible_traces(lib)) == 16
    leftovers = [p for p in lib.rglob("*.tmp")]
    assert leftovers == []
