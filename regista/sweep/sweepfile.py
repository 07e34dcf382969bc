"""The sweep file: one JSON document that links a parent trace and every fork of a sweep.

``regista sweep`` writes ``sweep.json`` in the sweep's folder when it starts, and again,
whole, each time a fork starts or ends (written beside and renamed over the old one, so a
reader, or a sweep killed mid-write, never sees half a file)::

    {
      "schema": "regista.sweep/1",
      "id": "01K…",                        # a ULID
      "parent": "/abs/path/parent.jsonl",  # never written to
      "parent_session_id": "01J…",
      "at_step": 1,
      "created": "2026-07-02T09:30:00Z",
      "ended": null | "…",                 # null: running, or killed before its end
      "cancelled": false,
      "pid": 4242,                         # the sweep's process
      "agent": null | "module:attr",
      "command": null | ["python", "agent.py"],
      "verify": null | "pytest -q",
      "forks": [
        {
          "n": 1,
          "variant": {"label": "…", "at_step": 1, "kind": "tool_result", "content": "…",
                      "is_error": false},
          "status": "pending" | "running" | "done" | "failed" | "cut_short",
          "dir": "fork-1",                 # paths are relative to the sweep file's folder
          "trace": "fork-1/01K….jsonl" | null,
          "traces": ["fork-1/01K….jsonl"],   # every conversation of the fork
          "exit_code": 0 | null,
          "error": null | "…",             # why it failed (the last line of its log)
          "verify": null | {"exit_code": 0, "passed": true, "log": "fork-1/verify.log"},
          "log": "fork-1/fork.log",
          "started": "…" | null, "ended": "…" | null
        }
      ]
    }

:func:`load_sweep` reads it back (a folder names its ``sweep.json``). A fork still
``pending`` or ``running`` in a sweep that has no ``ended`` and whose process is gone was cut
short by the sweep's end: :attr:`Fork.shown_status` says so.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

from regista.errors import TraceError
from regista.sweep.variants import Variant, parse_variants_file

__all__ = ["FILE_NAME", "SCHEMA", "STATUSES", "Fork", "Sweep", "load_sweep", "now"]

SCHEMA = "regista.sweep/1"
FILE_NAME = "sweep.json"
STATUSES = ("pending", "running", "done", "failed", "cut_short")


class SweepFileError(TraceError):
    """A sweep file that cannot be read (the message names the file and the problem)."""


def now() -> str:
    """The time, as the sweep file writes it."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@dataclass
class Fork:
    """One fork of a sweep (see the module docs for its fields)."""

    n: int
    variant: Variant
    status: str = "pending"
    dir: str = ""
    trace: str | None = None
    traces: list[str] = field(default_factory=list)
    exit_code: int | None = None
    error: str | None = None
    verify: dict[str, Any] | None = None
    log: str | None = None
    started: str | None = None
    ended: str | None = None
    #: Set by :func:`load_sweep`: the sweep's process is gone before it ended.
    orphaned: bool = field(default=False, compare=False)

    @property
    def shown_status(self) -> str:
        """``cut_short`` for a fork the sweep never finished (cancelled or killed)."""
        if self.orphaned and self.status in ("pending", "running"):
            return "cut_short"
        return self.status

    @property
    def cut_short(self) -> bool:
        return self.shown_status == "cut_short"

    @property
    def passed(self) -> bool | None:
        """The verify command's verdict (``None``: none was run)."""
        return None if self.verify is None else bool(self.verify.get("passed"))

    def to_dict(self) -> dict[str, Any]:
        return {
            "n": self.n,
            "variant": self.variant.to_dict(),
            "status": self.status,
            "dir": self.dir,
            "trace": self.trace,
            "traces": self.traces,
            "exit_code": self.exit_code,
            "error": self.error,
            "verify": self.verify,
            "log": self.log,
            "started": self.started,
            "ended": self.ended,
        }


@dataclass
class Sweep:
    """A sweep as its file holds it; :attr:`path` is the file (paths in it are relative to
    its folder)."""

    path: Path
    id: str
    parent: str
    parent_session_id: str
    at_step: int
    forks: list[Fork]
    created: str = ""
    ended: str | None = None
    cancelled: bool = False
    pid: int | None = None
    agent: str | None = None
    command: list[str] | None = None
    verify: str | None = None

    @property
    def folder(self) -> Path:
        return self.path.parent

    @property
    def running(self) -> bool:
        """No end written and its process still alive (a sweep in progress)."""
        return self.ended is None and _alive(self.pid)

    def resolve(self, relative: str | None) -> Path | None:
        """A path of the file (relative to its folder), made whole."""
        return None if relative is None else self.folder / relative

    def parent_path(self) -> Path:
        return Path(self.parent)

    def fork_trace(self, fork: Fork) -> Path | None:
        """The fork's trace: as the file says, else (a fork still running) the first trace
        in its folder that forks the parent."""
        if fork.trace is not None:
            return self.resolve(fork.trace)
        found = find_fork_traces(self.folder / fork.dir, self.parent_session_id)
        return found[0] if found else None

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema": SCHEMA,
            "id": self.id,
            "parent": self.parent,
            "parent_session_id": self.parent_session_id,
            "at_step": self.at_step,
            "created": self.created,
            "ended": self.ended,
            "cancelled": self.cancelled,
            "pid": self.pid,
            "agent": self.agent,
            "command": self.command,
            "verify": self.verify,
            "forks": [f.to_dict() for f in self.forks],
        }

    def save(self) -> None:
        """Write the file whole, beside and renamed over the old one."""
        data = orjson.dumps(self.to_dict(), option=orjson.OPT_INDENT_2)
        tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        with open(tmp, "wb") as f:
            f.write(data + b"\n")
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self.path)


def find_fork_traces(folder: Path, parent_session_id: str) -> list[Path]:
    """The traces in ``folder`` that fork ``parent_session_id``, oldest first (ULID names
    sort by time)."""
    out = []
    try:
        names = sorted(p for p in folder.glob("*.jsonl") if p.is_file())
    except OSError:
        return []
    for path in names:
        try:
            with open(path, "rb") as f:
                first = f.readline()
            start = orjson.loads(first)
        except (OSError, orjson.JSONDecodeError):
            continue
        forked = start.get("forked_from") if isinstance(start, dict) else None
        if isinstance(forked, dict) and forked.get("session_id") == parent_session_id:
            out.append(path)
    return out


def _alive(pid: int | None) -> bool:
    if pid is None:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _text(data: dict[str, Any], key: str, where: str, *, optional: bool = True) -> str | None:
    value = data.get(key)
    if value is None and optional:
        return None
    if not isinstance(value, str):
        raise SweepFileError(f"{where}: {key!r} must be text")
    return value


def _int(data: dict[str, Any], key: str, where: str, *, optional: bool = True) -> int | None:
    value = data.get(key)
    if value is None and optional:
        return None
    if not isinstance(value, int) or isinstance(value, bool):
        raise SweepFileError(f"{where}: {key!r} must be a whole number")
    return value


def _relative(data: dict[str, Any], key: str, where: str) -> str | None:
    """A path of the file: relative, and inside the sweep's folder (a file from elsewhere
    cannot point a viewer at any file on the machine)."""
    value = _text(data, key, where)
    if value is not None and (
        not value or "\0" in value or Path(value).is_absolute() or ".." in Path(value).parts
    ):
        raise SweepFileError(f"{where}: {key!r} must be a path inside the sweep's folder")
    return value


def _fork(data: Any, i: int, name: str, at_step: int) -> Fork:
    where = f"{name}: fork {i}"
    if not isinstance(data, dict):
        raise SweepFileError(f"{where}: expected an object, got {type(data).__name__}")
    variant = data.get("variant")
    if not isinstance(variant, dict):
        raise SweepFileError(f"{where}: 'variant' must be an object")
    try:
        (parsed,) = parse_variants_file(orjson.dumps([variant]), f"{where}: variant", at_step)
    except TraceError:
        raise
    except Exception as exc:  # an InvalidEditError: said as the file's problem
        raise SweepFileError(str(exc).replace(" variant: variant 0", " variant", 1)) from None
    status = data.get("status")
    if status not in STATUSES:
        raise SweepFileError(f"{where}: 'status' must be one of {', '.join(STATUSES)}")
    traces = data.get("traces") or []
    if not isinstance(traces, list):
        raise SweepFileError(f"{where}: 'traces' must be a list of paths")
    checked = [_relative({"t": t}, "t", f"{where}: traces") for t in traces]
    verify = data.get("verify")
    if verify is not None and not isinstance(verify, dict):
        raise SweepFileError(f"{where}: 'verify' must be an object")
    return Fork(
        n=_int(data, "n", where, optional=False) or 0,
        variant=parsed,
        status=str(status),
        dir=_relative(data, "dir", where) or f"fork-{i + 1}",
        trace=_relative(data, "trace", where),
        traces=[t for t in checked if t is not None],
        exit_code=_int(data, "exit_code", where),
        error=_text(data, "error", where),
        verify=verify,
        log=_relative(data, "log", where),
        started=_text(data, "started", where),
        ended=_text(data, "ended", where),
    )


def load_sweep(path: str | Path) -> Sweep:
    """Read a sweep file (or the ``sweep.json`` of a folder).

    Raises:
        SweepFileError: It is not a readable sweep file (one line naming the problem).
    """
    path = Path(path)
    if path.is_dir():
        path = path / FILE_NAME
    name = str(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise SweepFileError(f"cannot read {name}: {exc.strerror}") from None
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise SweepFileError(f"{name}: not valid JSON: {exc}") from None
    if not isinstance(data, dict) or data.get("schema") != SCHEMA:
        got = data.get("schema") if isinstance(data, dict) else None
        raise SweepFileError(
            f"{name}: not a sweep file (schema {SCHEMA!r} expected, got {got!r:.40})"
        )
    at_step = _int(data, "at_step", name, optional=False)
    assert at_step is not None
    forks = data.get("forks")
    if not isinstance(forks, list):
        raise SweepFileError(f"{name}: 'forks' must be a list")
    command = data.get("command")
    if command is not None and not (
        isinstance(command, list) and all(isinstance(w, str) for w in command)
    ):
        raise SweepFileError(f"{name}: 'command' must be a list of words")
    cancelled = data.get("cancelled", False)
    if not isinstance(cancelled, bool):
        raise SweepFileError(f"{name}: 'cancelled' must be true or false")
    sweep = Sweep(
        path=path,
        id=_text(data, "id", name, optional=False) or "",
        parent=_text(data, "parent", name, optional=False) or "",
        parent_session_id=_text(data, "parent_session_id", name, optional=False) or "",
        at_step=at_step,
        forks=[_fork(f, i, name, at_step) for i, f in enumerate(forks)],
        created=_text(data, "created", name) or "",
        ended=_text(data, "ended", name),
        cancelled=cancelled,
        pid=_int(data, "pid", name),
        agent=_text(data, "agent", name),
        command=command,
        verify=_text(data, "verify", name),
    )
    if sweep.ended is None and not _alive(sweep.pid):
        for fork in sweep.forks:
            fork.orphaned = True
    return sweep
