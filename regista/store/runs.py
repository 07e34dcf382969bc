"""The runs of a traces folder, read cheaply: the first and last line of each trace.

With no folder named, the runs are those of ``.regista/traces``, ``.regista/imports`` and
the forks of the sweeps in ``.regista/sweeps`` (each fork's trace is in its sweep's
``fork-K/`` folder, not among the traces: a sweep keeps its forks together).

``session.start`` (first line) says what a run was and where it came from (``replay_of``,
``forked_from``); ``session.end`` (last line, when the run finished) says how it ended,
what it cost and what its recorded prefix saved. Nothing in between is read, so listing
ten thousand runs costs two small reads per file, not ten thousand full loads.

A file that is not a regista trace (or is damaged at either end) is skipped and counted
in :attr:`RunList.skipped`, never fatal: one bad file must not hide the others.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, BinaryIO

import orjson

from regista.defaults import DEFAULT_SWEEP_DIR, DEFAULT_TRACE_DIR
from regista.errors import UserError
from regista.savings import Savings
from regista.tokens import Tokens, tokens_of
from regista.trace.grouping import KIND_OF_BYTES, STEP_IN_HEAD, TYPE_IN_HEAD
from regista.vocab import RunOutcome, run_outcome

__all__ = [
    "DEFAULT_DIR",
    "SWEEPS_DIR",
    "RunInfo",
    "RunList",
    "families_of",
    "filter_runs",
    "find_run_file",
    "has_default_runs",
    "list_runs",
    "parse_since",
    "project_of",
    "read_run",
    "run_files",
    "run_names",
    "sweep_fork_traces",
    "trace_files",
    "under_parents",
]

#: Where ``regista runs`` / ``recall`` look when no folder is given.
DEFAULT_DIR = DEFAULT_TRACE_DIR
#: Imported sessions, listed with the default folder's runs when they exist.
IMPORTS_DIR = Path(".regista/imports")
#: Sweeps, whose forks are listed with the default folder's runs.
SWEEPS_DIR = DEFAULT_SWEEP_DIR

_BLOCK = 64 * 1024
_MAX_LINE = 64 * 1024 * 1024


@dataclass
class RunInfo:
    """One run as ``regista runs`` lists it.

    Attributes:
        path: The trace file.
        session_id: The run's id.
        task: The task it was given.
        started: ``ts`` of its ``session.start`` (UTC, ISO 8601).
        outcome: ``session.end.stop_reason``, or ``unfinished``.
        steps: Steps written (from ``session.end``, or the last step seen).
        cost_usd: What it cost (``None``: unknown); for an unfinished run, its steps so far.
        tokens: Its tokens, as its end says (:mod:`regista.tokens`).
        kind: ``run``, ``replay``, ``resume``, ``fork`` or ``rewind``.
        parent_id: The run it replays, resumes or forks.
        fork_step: The step a fork / rewind branched at.
        savings: What the recorded prefix did not spend again (replays, forks …).
        parent: The parent's :class:`RunInfo` when it is in the same folder.
    """

    path: Path
    session_id: str
    task: str
    started: str
    model: str = ""
    provider: str = ""
    outcome: str = "unfinished"
    complete: bool = False
    #: The cost of an unfinished run's steps so far was read (see :func:`read_run`).
    cost_known: bool = False
    steps: int | None = None
    cost_usd: float | None = None
    tokens: Tokens = field(default_factory=Tokens)
    duration_ms: float | None = None
    error: str | None = None
    kind: str = "run"
    parent_id: str | None = None
    fork_step: int | None = None
    savings: Savings | None = None
    size: int = 0
    mtime: float = 0.0
    #: Where it was launched: an imported session's working folder, else the folder that
    #: holds the ``.regista`` its trace is in (else the trace's own folder).
    project: str = ""
    parent: RunInfo | None = field(default=None, repr=False, compare=False)

    @property
    def status(self) -> RunOutcome:
        """How the run ended (:func:`regista.vocab.run_outcome`)."""
        stop = self.outcome if self.complete and self.outcome != "?" else None
        return run_outcome(stop, self.error, ended=self.complete)

    @property
    def failed(self) -> bool:
        """Ended in an error, or stopped for another reason than done (see :attr:`status`)."""
        return self.status == "failed"

    @property
    def link(self) -> str:
        """``fork of 01J… at step 3`` / ``replay of 01J…`` / ``resumed from 01J…`` / ``""``."""
        if self.parent_id is None:
            return ""
        if self.kind in ("fork", "rewind"):
            verb = "fork" if self.kind == "fork" else "rewind"
            return f"{verb} of {self.parent_id} at step {self.fork_step}"
        if self.kind == "resume":
            return f"resumed from {self.parent_id}"
        return f"replay of {self.parent_id}"

    @property
    def cost_basis(self) -> str:
        """How :attr:`cost_usd` was made (see :func:`regista.pricing.cost_basis`)."""
        from regista.pricing import run_cost_basis

        if not self.complete and not self.cost_known:
            return "unknown: the run has not ended"
        return run_cost_basis(self.cost_usd, self.model)

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape of ``regista runs --json`` (one object per run)."""
        from regista.pricing import round_cost
        from regista.trace.reader import cost_and_tokens

        parent = self.parent
        return {
            "session_id": self.session_id,
            "path": str(self.path),
            "task": self.task,
            "started": self.started,
            "model": self.model,
            "provider": self.provider,
            "outcome": self.outcome,
            "status": self.status,
            "failed": self.failed,
            "steps": self.steps,
            **cost_and_tokens(self),
            "duration_ms": self.duration_ms,
            "error": self.error,
            "kind": self.kind,
            "link": self.link or None,
            "parent_id": self.parent_id,
            "fork_step": self.fork_step,
            "parent_outcome": parent.outcome if parent else None,
            "parent_cost_usd": round_cost(parent.cost_usd) if parent else None,
            "savings": self.savings.to_dict() if self.savings else None,
            "project": self.project,
        }


@dataclass
class RunList:
    """The runs of a folder, newest first, and the files that are not readable runs."""

    runs: list[RunInfo]
    skipped: list[tuple[Path, str]] = field(default_factory=list)

    def by_id(self, prefix: str) -> RunInfo | None:
        """The run whose id is ``prefix`` or starts with it (``None``: none, or ambiguous)."""
        hits = [r for r in self.runs if r.session_id.startswith(prefix)]
        exact = [r for r in hits if r.session_id == prefix]
        if exact:
            return exact[0]
        return hits[0] if len(hits) == 1 else None


def trace_files(folder: str | Path) -> Iterator[Path]:
    """Every ``*.jsonl`` under ``folder`` (sub-folders too), skipping hidden folders and
    symlinks that lead out of ``folder`` (:func:`regista.store.paths.inside`)."""
    return map(Path, _trace_names(os.fspath(folder)))


def _trace_names(folder: str) -> Iterator[str]:
    """:func:`trace_files` as the paths' strings: each folder's files (by name), then its
    sub-folders (by name), as ``os.walk`` goes; a symlink is checked only when the entry
    is one (the folder's listing says so without a system call)."""
    from regista.store.paths import inside

    stack = [folder]
    while stack:
        top = stack.pop()
        try:
            with os.scandir(top) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError:
            continue
        subs = []
        for e in entries:
            if e.name.startswith("."):
                continue
            try:
                is_dir = e.is_dir()
            except OSError:
                continue
            if is_dir:
                if not e.is_symlink():  # a symlinked folder is not entered
                    subs.append(e.path)
            elif e.name.endswith(".jsonl") and (not e.is_symlink() or inside(folder, e.path)):
                yield e.path
        stack.extend(reversed(subs))


def _first_line(f: BinaryIO) -> bytes:
    buf = b""
    while len(buf) < _MAX_LINE:
        block = f.read(_BLOCK)
        if not block:
            return buf
        nl = block.find(b"\n")
        if nl >= 0:
            return buf + block[:nl]
        buf += block
    return buf


def _last_line(f: BinaryIO, size: int) -> bytes:
    """The last complete (newline-ended) line of the file."""
    end = size
    buf = b""
    pos = size
    while pos > 0 and size - pos < _MAX_LINE:
        step = min(_BLOCK, pos)
        pos -= step
        f.seek(pos)
        buf = f.read(step) + buf
        if end == size:  # drop a half-written tail
            last_nl = buf.rfind(b"\n")
            if last_nl < 0:
                continue
            buf = buf[:last_nl]
            end = pos + last_nl
        nl = buf.rfind(b"\n")
        if nl >= 0:
            return buf[nl + 1 :]
        if pos == 0:
            return buf
    return buf


def _json(raw: bytes) -> dict[str, Any] | None:
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None
    return data if isinstance(data, dict) else None


#: How far back from its end an unfinished run is read for its last step's opener.
_MAX_TAIL = 8 * 1024 * 1024


def _steps_so_far(f: BinaryIO, size: int) -> int:
    """How many steps an unfinished run has begun: one more than the number of the last
    step opened (steps are numbered in the order their openers are written: a line of a
    higher number after it belongs to no step, ``regista.trace.grouping``). The last line
    alone may belong to an earlier step: parallel tool calls write every call before the
    first decision. Read back from the end until an opener (:data:`~regista.trace.
    grouping.KIND_OF_BYTES`); past :data:`_MAX_TAIL`, the highest step number seen. A number
    below 0 is no step's (a listing refuses no run for it; ``show`` says what is wrong)."""
    pos, rest, highest, first, want = size, b"", -1, True, _BLOCK // 4
    while pos > 0 and size - pos < _MAX_TAIL:
        # The opener is usually among the last lines: a small read first, larger ones after.
        step = min(want, pos)
        want *= 4
        pos -= step
        f.seek(pos)
        lines = (f.read(step) + rest).split(b"\n")
        if first:  # what follows the last newline: nothing, or a half-written line
            lines.pop()
            first = False
        # The first piece may be the end of a line that an earlier block begins.
        rest = lines.pop(0) if pos > 0 else b""
        for line in reversed(lines):
            head = line[:512]
            m = STEP_IN_HEAD.search(head)
            if m is None:
                continue
            number = int(m.group(1))
            if number < 0:
                continue
            t = TYPE_IN_HEAD.search(head)
            if t is not None and t.group(1) in KIND_OF_BYTES:
                return number + 1
            highest = max(highest, number)
    return highest + 1


def read_run(path: Path) -> RunInfo:
    """Read one run from the first and last line of its trace.

    Raises:
        ValueError: The file is not a regista trace (the message says why).
        OSError: The file cannot be read.
    """
    with open(path, "rb") as f:
        st = os.fstat(f.fileno())
        start = _json(_first_line(f))
        if start is None or start.get("type") != "session.start":
            raise ValueError("does not begin with a session.start event")
        last_raw = _last_line(f, st.st_size)
        end = _json(last_raw)
        unfinished = (
            end is None
            or end.get("type") != "session.end"
            or end.get("session_id") != start.get("session_id")
        )
        steps_so_far = _steps_so_far(f, st.st_size) if unfinished else None
    sid = start.get("session_id")
    if not isinstance(sid, str) or not isinstance(start.get("schema_version"), int):
        raise ValueError("session.start has no session_id / schema_version")
    run = RunInfo(
        path=path,
        session_id=sid,
        task=_str(start.get("task")),
        started=_str(start.get("ts")),
        model=_str(start.get("model")),
        provider=_str(start.get("provider")),
        size=st.st_size,
        mtime=st.st_mtime,
        project=_project(path, start.get("metadata")),
    )
    forked = start.get("forked_from")
    if isinstance(forked, dict) and isinstance(forked.get("session_id"), str):
        run.parent_id = forked["session_id"]
        at = forked.get("at_step")
        run.fork_step = at if isinstance(at, int) else None
        run.kind = "fork" if forked.get("edit") is not None else "rewind"
    elif isinstance(start.get("replay_of"), str):
        run.parent_id = start["replay_of"]
        run.kind = "replay"
    if end is not None and end.get("type") == "session.end" and end.get("session_id") == sid:
        run.complete = True
        run.outcome = _str(end.get("stop_reason")) or "?"
        run.steps = end.get("steps") if isinstance(end.get("steps"), int) else None
        cost = end.get("cost_usd")
        run.cost_usd = float(cost) if isinstance(cost, int | float) else None
        usage = end.get("usage")
        try:
            run.tokens = tokens_of(usage) if isinstance(usage, dict) else Tokens()
        except ValueError:  # an odd usage: the listing shows none rather than fail
            run.tokens = Tokens()
        run.error = end.get("error") if isinstance(end.get("error"), str) else None
        replay = end.get("replay")
        if isinstance(replay, dict):
            saved = Savings.from_dict(replay.get("saved"))
            run.savings = saved if saved is not None and saved.calls else None
    else:
        run.steps = steps_so_far if steps_so_far is not None else 0
        _so_far(run)
    run.duration_ms = _took(start, end, run.complete)
    return run


def _took(start: dict[str, Any], last: dict[str, Any] | None, ended: bool) -> float | None:
    """How long a run took (:func:`regista.breakdown.took_ms`) from its first line and its
    last (its ``session.end`` when ``ended``)."""
    from types import SimpleNamespace

    from regista.breakdown import took_ms

    if last is None:  # the last line is not one: a view that reads the whole run says
        return None
    first = SimpleNamespace(ts=start.get("ts"))
    tail = SimpleNamespace(ts=last.get("ts"), duration_ms=last.get("duration_ms"))
    return took_ms(first, tail if ended else None, tail)


def _so_far(run: RunInfo) -> None:
    """An unfinished run's tokens and cost so far, as ``show`` and MCP read them (a scan of
    the whole file: such a run is one running now, or one that was killed)."""
    from regista.errors import RegistaError
    from regista.trace.index import read_summary

    try:
        s = read_summary(run.path)
    except (RegistaError, ValueError, OSError):  # what is there so far cannot be read
        return
    run.tokens, run.cost_usd = s.tokens, s.cost_usd
    run.cost_known = True


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _project(path: Path, metadata: Any) -> str:
    """Where a run was launched (see :attr:`RunInfo.project`)."""
    cwd = metadata.get("cwd") if isinstance(metadata, dict) else None
    if isinstance(cwd, str) and cwd:
        return cwd
    where = path.absolute()
    for folder in where.parents:
        if folder.name == ".regista":
            return str(folder.parent)
    return str(where.parent)


def list_runs(folder: str | Path | None = None, *, paths: Iterable[Path] | None = None) -> RunList:
    """Every run of ``folder`` (the files :func:`run_files` names: with none named, those of
    ``.regista/traces``, ``.regista/imports`` and the sweeps' forks), newest first, with
    parents linked.

    Raises:
        UserError: ``folder`` does not exist or is a file.
    """
    files = list(paths) if paths is not None else list(run_files(folder))
    runs: list[RunInfo] = []
    skipped: list[tuple[Path, str]] = []
    for path in files:
        try:
            runs.append(read_run(path))
        except (ValueError, OSError) as exc:
            skipped.append((path, str(exc)))
    link_parents(runs)
    runs.sort(key=lambda r: (r.started, r.mtime), reverse=True)
    return RunList(runs, skipped)


def has_default_runs() -> bool:
    """Whether this folder has runs where :func:`list_runs` looks with no folder named."""
    return DEFAULT_DIR.is_dir() or IMPORTS_DIR.is_dir() or SWEEPS_DIR.is_dir()


def sweep_fork_traces(folder: Path) -> Iterator[Path]:
    """The traces the forks of the sweeps in ``folder`` wrote: ``<sweep>/fork-K/*.jsonl``
    (not the copies of the working folder a verified fork runs in, ``fork-K/work/``)."""
    try:
        sweeps = sorted(p for p in folder.iterdir() if p.is_dir() and not p.name.startswith("."))
    except OSError:
        return
    for sweep in sweeps:
        for fork in sorted(sweep.glob("fork-*")):
            if fork.is_dir() and not fork.is_symlink():
                yield from sorted(
                    p for p in fork.glob("*.jsonl") if p.is_file() and not p.is_symlink()
                )


def project_of(folder: str | Path) -> Path | None:
    """The ``.regista`` folder whose traces folder ``folder`` is (``None``: it is not one).

    A project's traces folder (``traces`` right inside a ``.regista`` folder), named as a
    folder, stands for the project's runs, as no folder named does: a reader given
    ``.regista/traces`` by name (``regista mcp .regista/traces``, an absolute path to it)
    lists its imports and the forks of its sweeps too."""
    where = Path(os.path.abspath(folder))
    if where.name == DEFAULT_DIR.name and where.parent.name == DEFAULT_DIR.parent.name:
        return where.parent
    return None


def run_files(folder: str | Path | None = None) -> Iterator[Path]:
    """The trace files :func:`list_runs` reads for ``folder``: with none named (or a
    project's traces folder named, :func:`project_of`), those of ``.regista/traces``,
    ``.regista/imports`` and the forks of the sweeps in ``.regista/sweeps``; else every
    trace under ``folder``. Every reader that lists a folder's runs (``runs``, recall,
    ``mcp``, the server, the debugger) reads these files.

    Raises:
        UserError: ``folder`` does not exist or is a file.
    """
    return map(Path, run_names(folder))


def run_names(folder: str | Path | None = None) -> Iterator[str]:
    """:func:`run_files` as the paths' strings (what an index keeps: no path objects made).

    Raises:
        UserError: ``folder`` does not exist or is a file (when the first is asked for).
    """
    if folder is None:
        if not has_default_runs():
            raise UserError(
                f"no traces folder here ({DEFAULT_DIR} does not exist); name one: regista runs DIR"
            )
        yield from _project_names(DEFAULT_DIR.parent)
        return
    path = Path(folder)
    if path.is_file():
        raise UserError(f"{path}: is a file; give the folder that holds the traces")
    if not path.is_dir():
        raise UserError(f"{path}: no such folder")
    yield from _trace_names(os.fspath(path))
    project = project_of(path)
    if project is not None:
        yield from _project_names(project, traces=False)


def find_run_file(folder: str | Path | None, session_id: str) -> Path | None:
    """The trace of the run ``session_id`` among the files :func:`run_files` names for
    ``folder`` (``None``: none of them): one named ``<session_id>.jsonl`` at its name, else
    the first whose ``session.start`` has that id (a renamed trace, an imported run named by
    its source, a fork written under another name; only first lines are read).

    Raises:
        UserError: ``folder`` does not exist or is a file.
    """
    name = f"{session_id}.jsonl"
    others: list[str] = []
    for path in run_names(folder):
        if os.path.basename(path) == name and os.path.isfile(path):
            return Path(path)
        others.append(path)
    for path in others:
        try:
            with open(path, "rb") as f:
                start = _json(_first_line(f))
        except OSError:
            continue
        # a trace's first line is its session.start (what :func:`read_run` reads)
        if (
            start is not None
            and start.get("type") == "session.start"
            and start.get("session_id") == session_id
        ):
            return Path(path)
    return None


def _project_names(project: Path, *, traces: bool = True) -> Iterator[str]:
    """The runs of the project whose ``.regista`` folder is ``project``."""
    names = (DEFAULT_DIR.name, IMPORTS_DIR.name) if traces else (IMPORTS_DIR.name,)
    for name in names:
        if (project / name).is_dir():
            yield from _trace_names(os.fspath(project / name))
    if (project / SWEEPS_DIR.name).is_dir():
        yield from map(os.fspath, sweep_fork_traces(project / SWEEPS_DIR.name))


def link_parents(runs: list[RunInfo]) -> None:
    """Attach each run's parent, and tell a resume (of an unfinished run) from a replay."""
    by_id = {r.session_id: r for r in runs}
    for run in runs:
        if run.parent_id is None:
            continue
        run.parent = by_id.get(run.parent_id)
        if run.kind == "replay" and run.parent is not None and not run.parent.complete:
            run.kind = "resume"


def families_of(runs: list[RunInfo]) -> tuple[list[RunInfo], dict[str, list[RunInfo]]]:
    """The runs whose parent is not among ``runs`` (each stands at the head of its family),
    and the runs under each parent id (its forks, replays and resumes), in ``runs``'s
    order: the tree ``regista runs`` and the TUI's run list show."""
    ids = {r.session_id for r in runs}
    children: dict[str, list[RunInfo]] = {}
    roots: list[RunInfo] = []
    for run in runs:
        if run.parent_id is not None and run.parent_id in ids and run.parent_id != run.session_id:
            children.setdefault(run.parent_id, []).append(run)
        else:
            roots.append(run)
    return roots, children


def under_parents(runs: list[RunInfo]) -> list[RunInfo]:
    """``runs`` (newest first) with each run's forks, replays and resumes right under it,
    newest first, and each family where its newest member is: a sweep just run shows its
    parent at the top with the sweep's forks under it. A run whose parent is not among
    ``runs`` stands on its own."""
    roots, children = families_of(runs)
    shown: set[int] = set()  # runs placed (by identity: a copied trace repeats an id)
    expanded: set[str] = set()  # ids whose children are placed (links may loop)

    def family(run: RunInfo) -> list[RunInfo]:
        shown.add(id(run))
        members = [run]
        if run.session_id not in expanded:
            expanded.add(run.session_id)
            for child in children.get(run.session_id, []):
                if id(child) not in shown:
                    members += family(child)
        return members

    families = [family(root) for root in roots]
    families.sort(key=lambda f: max((r.started, r.mtime) for r in f), reverse=True)
    out = [run for members in families for run in members]
    out += [r for r in runs if id(r) not in shown]  # only reachable through a loop of links
    return out


_RELATIVE = re.compile(r"^(\d+)\s*([smhdw])$")
_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days", "w": "weeks"}


def parse_since(value: str, now: datetime | None = None) -> str:
    """``2h`` / ``3d`` / ``2026-07-02`` / ``2026-07-02T09:00`` → an ISO UTC timestamp.

    Raises:
        UserError: Not a duration or a date.
    """
    now = now or datetime.now(UTC)
    m = _RELATIVE.match(value.strip())
    if m:
        try:
            when = now - timedelta(**{_UNITS[m.group(2)]: int(m.group(1))})
        except OverflowError:  # longer ago than the calendar goes: every run
            return _EARLIEST
    else:
        try:
            when = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        except ValueError:
            raise UserError(
                f"--since {value!r}: give a duration (30m, 2h, 3d, 1w) or a date "
                "(2026-07-02, 2026-07-02T09:00)"
            ) from None
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
    try:
        when = when.astimezone(UTC)
    except OverflowError:  # the first hours of year 1 east of UTC, or the last of 9999 west
        return _EARLIEST if when.year == 1 else "9999-12-31T23:59:59.999Z"
    return f"{when.year:04d}" + when.strftime("-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


#: ``parse_since`` of a time before the calendar's first day: every run is since it.
_EARLIEST = "0001-01-01T00:00:00.000Z"


def filter_runs(
    runs: list[RunInfo],
    *,
    failed: bool = False,
    task: str | None = None,
    forks_of: RunInfo | None = None,
    since: str | None = None,
) -> list[RunInfo]:
    """The runs that pass every filter given (``since`` from :func:`parse_since`)."""
    words = task.lower().split() if task else []
    out = []
    for r in runs:
        if failed and not r.failed:
            continue
        if words and not all(w in r.task.lower() for w in words):
            continue
        if since is not None and r.started < since:
            continue
        if forks_of is not None and not (
            r.session_id == forks_of.session_id
            or (r.parent_id == forks_of.session_id and r.kind in ("fork", "rewind"))
        ):
            continue
        out.append(r)
    return out
