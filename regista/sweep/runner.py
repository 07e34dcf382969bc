"""Running a sweep: one ``regista fork`` per variant, ``jobs`` at once.

Each fork is the very command a person would type, run as a child process
(``python -m regista fork TRACE --edits edit.json --trace-dir fork-K [--agent A] [-- CMD]``,
or ``rewind --at N --model NAME`` for a model variant, of a regista Agent or of a program
after ``--``, whose live calls regista then sends with that model): a sweep has no fork
path of its own, and a fork that crashes takes nothing else down. Its output goes to
``fork-K/fork.log``.

With a verify command, each fork runs in its own copy of the working folder
(``fork-K/work``), and the command runs there once the fork has ended, with
``REGISTA_FORK_TRACE``, ``REGISTA_PARENT_TRACE`` and ``REGISTA_VARIANT`` set; exit code 0
is a pass. The sweep file is written whole after every change (:mod:`.sweepfile`).

Cancelling (Ctrl+C, or a ``cancel`` file in the sweep's folder, which the TUI writes): the
running forks get SIGINT (``regista fork`` then stops its own program and closes its
trace), forks not yet started never start, and each of them is marked ``cut_short``; the
forks that had finished are kept. The children die with the sweep even when it is killed
(``PR_SET_PDEATHSIG`` on Linux).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from pathlib import Path
from typing import Any

import orjson
from ulid import ULID

from regista.defaults import DEFAULT_SWEEP_DIR
from regista.errors import InvalidEditError, UserError
from regista.sweep.sweepfile import FILE_NAME, Fork, Sweep, find_fork_traces, now
from regista.sweep.variants import Variant

__all__ = ["CANCEL_FILE", "DEFAULT_DIR", "SweepRunner", "plan_sweep"]

#: Where sweeps go unless ``--out`` says otherwise: ``.regista/sweeps/<id>/``.
DEFAULT_DIR = DEFAULT_SWEEP_DIR
#: A file of this name in a sweep's folder cancels the sweep (the TUI's cancel key).
CANCEL_FILE = "cancel"
#: Not copied into a fork's working folder.
SKIPPED = (".git", ".regista", ".venv", "venv", "node_modules", "__pycache__", ".mypy_cache")
#: How often the sweep looks for a cancel file.
POLL_S = 0.1
#: How long a fork has to stop after SIGINT before it is killed.
GRACE_S = 10.0

OnChange = Callable[[Sweep], None]


def _die_with_parent() -> Callable[[], None] | None:
    """A ``preexec_fn`` that has the child killed when the thread that started it ends
    (Linux); ``None`` elsewhere. libc is looked up here, never in the forked child."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None

    def preexec() -> None:
        prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG

    return preexec


def plan_sweep(
    parent: str | Path,
    variants: list[Variant],
    *,
    out: str | Path | None = None,
    agent: str | None = None,
    command: list[str] | None = None,
    verify: str | None = None,
) -> Sweep:
    """Check the variants against the parent trace and make the sweep's folder and file.

    Raises:
        UserError / InvalidEditError: A variant does not fit its step.
    """
    from regista.trace.reader import Trace

    if not variants:
        raise UserError(
            "give the variants: repeat --tool-result, --answer or --model, or --variants FILE"
        )
    trace = Trace.load(parent)
    steps = trace.steps()
    for v in variants:
        if not 0 <= v.at_step < len(steps):
            raise InvalidEditError(
                f"{v.label}: step {v.at_step} does not exist: the trace has steps "
                f"0..{len(steps) - 1}"
            )
        kind = steps[v.at_step].kind
        if v.kind == "tool_result" and kind != "tool":
            raise InvalidEditError(
                f"{v.label}: step {v.at_step} is a {kind} step; a tool result needs a tool step"
            )
        if v.kind == "model_answer" and kind != "model":
            raise InvalidEditError(
                f"{v.label}: step {v.at_step} is a {kind} step; an answer needs a model step"
            )
    if command is None and agent is None and not trace.start.agent_ref:
        raise UserError(
            f"{Path(parent).name} records no agent_ref, so no fork can rebuild its agent: "
            "give --agent module:attr, or run the agent's program after -- CMD"
        )
    sweep_id = str(ULID())
    folder = Path(out) if out is not None else DEFAULT_DIR / sweep_id
    if (folder / FILE_NAME).exists():
        raise UserError(f"{folder} already holds a sweep: give another --out folder")
    folder.mkdir(parents=True, exist_ok=True)
    at_steps = {v.at_step for v in variants}
    sweep = Sweep(
        path=(folder / FILE_NAME).resolve(),
        id=sweep_id,
        parent=str(Path(parent).resolve()),
        parent_session_id=trace.session_id,
        at_step=min(at_steps),
        forks=[
            Fork(n=k, variant=v, dir=f"fork-{k}", log=f"fork-{k}/fork.log")
            for k, v in enumerate(variants, 1)
        ],
        created=now(),
        pid=os.getpid(),
        agent=agent,
        command=command,
        verify=verify,
    )
    sweep.save()
    return sweep


class SweepRunner:
    """Runs the forks of a planned sweep (see the module docs).

    Args:
        sweep: From :func:`plan_sweep`.
        jobs: Forks at once (default: the machine's cores).
        workdir: The working folder copied for each fork when there is a verify command.
        on_change: Told the sweep after each change of a fork (from worker threads).
        python: The interpreter that runs ``regista`` (default: this one).
    """

    def __init__(
        self,
        sweep: Sweep,
        *,
        jobs: int | None = None,
        workdir: str | Path = ".",
        on_change: OnChange | None = None,
        python: str = sys.executable,
    ) -> None:
        self.sweep = sweep
        self.jobs = max(1, jobs or os.cpu_count() or 1)
        self.workdir = Path(workdir).resolve()
        self.on_change = on_change
        self.python = python
        self.cancelled = threading.Event()
        self._lock = threading.Lock()
        self._procs: dict[int, subprocess.Popen[bytes]] = {}
        self._preexec = _die_with_parent()

    # -- the file ------------------------------------------------------------------------

    def _changed(self) -> None:
        with self._lock:
            self.sweep.save()
        if self.on_change is not None:
            self.on_change(self.sweep)

    # -- running -------------------------------------------------------------------------

    def run(self) -> Sweep:
        """Run every fork; returns the sweep as written. Ctrl+C cancels (see the module
        docs) and is raised again once the sweep file says so."""
        cancel_file = self.sweep.folder / CANCEL_FILE
        interrupted = False
        with ThreadPoolExecutor(self.jobs, thread_name_prefix="sweep") as pool:
            futures: set[Future[None]] = {pool.submit(self._one, fork) for fork in self.sweep.forks}
            try:
                while futures:
                    _, futures = wait(futures, timeout=POLL_S, return_when=FIRST_COMPLETED)
                    if not self.cancelled.is_set() and cancel_file.exists():
                        self.cancel()
            except KeyboardInterrupt:
                interrupted = True
                self.cancel()
                wait(futures)
        self.sweep.ended = now()
        self.sweep.cancelled = self.cancelled.is_set()
        self._changed()
        if interrupted:
            raise KeyboardInterrupt
        return self.sweep

    def cancel(self) -> None:
        """Stop the running forks and start no more (their results say ``cut_short``)."""
        self.cancelled.set()
        with self._lock:
            procs = list(self._procs.values())
        for proc in procs:
            with contextlib.suppress(OSError):
                proc.send_signal(signal.SIGINT)

    def _argv(self, fork: Fork, folder: Path) -> list[str]:
        s, v = self.sweep, fork.variant
        head = [self.python, "-m", "regista"]
        if v.kind == "model":
            assert v.model is not None
            argv = [*head, "rewind", s.parent, "--at", str(v.at_step), "--model", v.model]
        else:
            edits = folder / "edit.json"
            edits.write_bytes(orjson.dumps([v.edit_item()], option=orjson.OPT_INDENT_2))
            argv = [*head, "fork", s.parent, "--edits", str(edits)]
        argv += ["--trace-dir", str(folder)]
        if s.agent:
            argv += ["--agent", s.agent]
        if s.command is not None:
            argv += ["--", *s.command]
        return argv

    def _start(self, fork: Fork, argv: list[str], cwd: Path, log: Path, **kw: Any) -> int:
        """Run one child to its end (SIGINT, then a kill, once the sweep is cancelled)."""
        with open(log, "ab") as out:
            with self._lock:
                if self.cancelled.is_set():
                    return -signal.SIGINT
                proc = subprocess.Popen(
                    argv,
                    cwd=cwd,
                    stdin=subprocess.DEVNULL,
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    preexec_fn=self._preexec,
                    process_group=0,  # a terminal's Ctrl+C reaches the sweep, which says
                    **kw,
                )
                self._procs[fork.n] = proc
            try:
                while True:
                    try:
                        return proc.wait(timeout=POLL_S)
                    except subprocess.TimeoutExpired:
                        if self.cancelled.is_set():
                            break
                try:
                    return proc.wait(timeout=GRACE_S)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    return proc.wait()
            finally:
                with self._lock:
                    self._procs.pop(fork.n, None)

    def _one(self, fork: Fork) -> None:
        s = self.sweep
        if self.cancelled.is_set():
            fork.status = "cut_short"
            self._changed()
            return
        folder = s.folder / fork.dir
        folder.mkdir(parents=True, exist_ok=True)
        fork.status, fork.started = "running", now()
        self._changed()
        try:
            cwd = self._workdir(folder) if s.verify else self.workdir
            code = self._start(fork, self._argv(fork, folder), cwd, folder / "fork.log")
        except Exception as exc:  # the fork could not even start: said, not raised
            fork.status, fork.error, fork.ended = "failed", str(exc), now()
            self._changed()
            return
        fork.exit_code = code
        found = find_fork_traces(folder, s.parent_session_id)
        fork.traces = [str(p.relative_to(s.folder)) for p in found]
        fork.trace = fork.traces[0] if fork.traces else None
        if self.cancelled.is_set():
            fork.status = "cut_short"
        elif fork.trace is None or (code != 0 and s.command is None):
            fork.status = "failed"
            fork.error = _last_line(folder / "fork.log") or f"regista fork exited with {code}"
        else:
            fork.status = "done"
        if fork.status == "done" and s.verify:
            fork.verify = self._verify(fork, folder, cwd)
            if self.cancelled.is_set() and fork.verify.get("exit_code") is None:
                fork.status = "cut_short"
        fork.ended = now()
        self._changed()

    def _workdir(self, folder: Path) -> Path:
        """The fork's own copy of the working folder (without the sweep, VCS and caches)."""
        target = folder / "work"
        sweeps = self.sweep.folder.resolve()

        def ignore(where: str, names: list[str]) -> set[str]:
            skip = {n for n in names if n in SKIPPED}
            skip |= {n for n in names if (Path(where) / n).resolve() == sweeps}
            return skip

        if not target.exists():
            shutil.copytree(self.workdir, target, symlinks=True, ignore=ignore)
        return target

    def _verify(self, fork: Fork, folder: Path, cwd: Path) -> dict[str, Any]:
        s = self.sweep
        assert s.verify is not None and fork.trace is not None
        env = {
            **os.environ,
            "REGISTA_FORK_TRACE": str(s.resolve(fork.trace)),
            "REGISTA_PARENT_TRACE": s.parent,
            "REGISTA_VARIANT": fork.variant.label,
        }
        log = folder / "verify.log"
        t0 = time.monotonic()
        code = self._start(fork, ["/bin/sh", "-c", s.verify], cwd, log, env=env)
        cut = self.cancelled.is_set() and code < 0
        return {
            "exit_code": None if cut else code,
            "passed": code == 0,
            "log": str(log.relative_to(s.folder)),
            "seconds": round(time.monotonic() - t0, 3),
        }


def _last_line(path: Path) -> str | None:
    """The last line a fork printed (``regista: …`` says why it failed)."""
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").strip().splitlines()
    except OSError:
        return None
    return lines[-1][:300] if lines else None
