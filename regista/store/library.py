"""The library: Claude Code and Codex sessions kept as regista traces as they are written.

A library is a folder (default :func:`default_library`) that holds:

- ``claude-code/<session_id>.jsonl`` and ``codex/<session_id>.jsonl``: the traces, one per
  session and one per subagent, made by the importers (:mod:`regista.importers`) exactly as
  ``regista import`` makes them; ``regista runs``, ``recall``, ``show`` and the TUI read them;
- ``.sources/<tool>/<root>/<path>``: a copy of every source file read, a hard link when the
  library is on the same file system as the source (no space taken while the source lives; the
  bytes stay when the tool deletes the file), else a copy brought up to date on each import;
- ``.regista-library.sqlite``: what was imported from which file at which size, mtime and
  inode (the state, changed in one transaction per session).

:meth:`Library.sync` walks the sources, finds the files that changed since the last look,
maps each to the session that reads it (a subagent's file to its parent session) and imports
those sessions again, whole: an import is deterministic, so a session that did not change
gives the same bytes and a grown one replaces its traces. Every write is atomic (a trace is
written beside its place and renamed; the state is one transaction per session, committed
after the traces), so a process killed at any point leaves a library whose traces are all
complete, and the next sync imports again whatever the state does not yet record.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from regista.store._sqlite import Transaction
from regista.store.homes import (
    Root,
    claude_home,
    codex_home,
    default_library,
    default_roots,
    library_or,
)
from regista.store.library_state import SessionState, open_state, read_sessions

__all__ = [
    "LOCK_NAME",
    "SOURCES_DIR",
    "STATE_NAME",
    "TOOLS",
    "Library",
    "LibraryBusy",
    "Root",
    "SessionState",
    "SyncStats",
    "claude_home",
    "codex_home",
    "default_library",
    "default_roots",
    "library_or",
]

#: The tools whose sessions a library keeps, as :func:`regista.importers.convert` names them.
TOOLS = ("claude-code", "codex")
STATE_NAME = ".regista-library.sqlite"
LOCK_NAME = ".regista-library.lock"
SOURCES_DIR = ".sources"
#: A session that keeps changing is imported again at most once per this many times the
#: duration of its last import: a growing 100 MB transcript costs at most a tenth of a core.
THROTTLE = 10.0


@dataclass
class SyncStats:
    """What one :meth:`Library.sync` did."""

    sessions: int = 0
    imported: int = 0
    unchanged: int = 0
    failed: int = 0
    waiting: int = 0
    gone: int = 0
    runs: int = 0
    bytes: int = 0
    errors: list[tuple[str, str]] = field(default_factory=list)


class LibraryBusy(Exception):
    """Another process keeps this library (it holds the lock)."""


@dataclass
class _Disk:
    root: Root
    rel: str
    size: int
    mtime_ns: int
    ino: int

    @property
    def stat(self) -> tuple[int, int, int]:
        return (self.size, self.mtime_ns, self.ino)


@dataclass
class _Dirty:
    path: str
    tool: str
    files: list[str]
    size: int


def _walk(root: Root) -> Iterator[tuple[str, _Disk]]:
    """Every file under ``root`` that an importer may read, with its stat."""
    stack = [str(root.path)]
    base = len(str(root.path)) + 1
    while stack:
        d = stack.pop()
        try:
            entries = list(os.scandir(d))
        except OSError:
            continue
        for e in entries:
            try:
                if e.is_dir(follow_symlinks=False):
                    stack.append(e.path)
                    continue
                name = e.name
                if root.tool == "codex":
                    if not (name.startswith("rollout-") and name.endswith((".jsonl", ".json"))):
                        continue
                elif not name.endswith(".jsonl"):
                    continue
                st = e.stat()
            except OSError:
                continue
            yield e.path, _Disk(root, e.path[base:], st.st_size, st.st_mtime_ns, st.st_ino)


class Library:
    """A library folder and the state of what it imported.

    Args:
        folder: The library (made if missing).
        roots: The folders of sessions it keeps.
        lock: Take the library's lock (one ``regista watch`` per library).

    Raises:
        LibraryBusy: ``lock`` and another process holds it.
    """

    def __init__(self, folder: str | Path, roots: list[Root], *, lock: bool = True) -> None:
        self.folder = Path(folder)
        self.roots = roots
        self.folder.mkdir(parents=True, exist_ok=True)
        self._lock_fd: int | None = None
        self._threads: dict[str, str] | None = None
        if lock:
            self._lock()
        self.db = open_state(self.folder / STATE_NAME)
        self._clean_temporaries()

    # -- the lock, the state ---------------------------------------------------------------

    def _lock(self) -> None:
        try:
            import fcntl
        except ImportError:  # no advisory locks here: one watcher is the user's to keep
            return
        path = self.folder / LOCK_NAME
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            other = os.pread(fd, 32, 0).decode(errors="replace").strip()
            os.close(fd)
            raise LibraryBusy(other or "?") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self._lock_fd = fd

    def close(self) -> None:
        self.db.close()
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None

    def __enter__(self) -> Library:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _clean_temporaries(self) -> None:
        """Remove what a process killed mid-write left (``.NAME.PID.tmp``; never visible to
        the readers, which skip hidden files)."""
        for d in [self.folder / t for t in TOOLS] + [self.folder / SOURCES_DIR]:
            if not d.is_dir():
                continue
            for dirpath, _, files in os.walk(d):
                for name in files:
                    if name.startswith(".") and name.endswith(".tmp"):
                        with contextlib.suppress(OSError):
                            os.unlink(os.path.join(dirpath, name))

    # -- one pass --------------------------------------------------------------------------

    def sync(
        self,
        *,
        throttle: bool = False,
        progress: Callable[[int, int, str], None] | None = None,
        log: Callable[[str], None] | None = None,
        now: Callable[[], float] = time.time,
    ) -> SyncStats:
        """Import every session whose files changed since the last look.

        Args:
            throttle: Leave a session that was imported less than :data:`THROTTLE` times
                its import's duration ago for a later pass (``regista watch``).
            progress: Called with ``(bytes done, bytes to do, session path)`` before and
                after each session.
            log: Called with one line per session imported, failed or gone.
            now: The clock (tests).
        """
        stats = SyncStats()
        self._threads = None
        disk: dict[str, _Disk] = {}
        for root in self.roots:
            if root.path.is_dir():
                disk.update(_walk(root))
        known = {
            row[0]: row[1:]
            for row in self.db.execute("SELECT path, size, mtime_ns, ino, owner, gone FROM files")
        }
        owners: dict[str, str | None] = {}
        dirty: dict[str, _Dirty] = {}
        for path, d in disk.items():
            if d.size == 0:  # just made: the tool writes its first line next
                continue
            k = known.get(path)
            if k is not None and tuple(k[:3]) == d.stat and not k[4]:
                continue
            owner = k[3] if k is not None and k[3] else self._owner_of(path, d, disk, owners)
            if owner is None or owner not in disk:
                self._record_stray(path, d)  # a file no session reads: looked at once
                continue
            item = dirty.setdefault(owner, _Dirty(owner, d.root.tool, [], 0))
            item.files.append(path)
        sessions = {
            r[0]: r[1:] for r in self.db.execute("SELECT path, imported_at, import_s FROM sessions")
        }
        for owner, item in dirty.items():
            # every file the session read last time goes along (its copy is refreshed too)
            for (p,) in self.db.execute("SELECT path FROM files WHERE owner = ?", (owner,)):
                if p in disk and p not in item.files:
                    item.files.append(p)
            if owner not in item.files:
                item.files.insert(0, owner)
            item.size = sum(disk[p].size for p in item.files if p in disk)
        mains = {p for p, k in known.items() if p in disk and k[3] == p}
        stats.sessions = len(mains | set(dirty))
        self._mark_gone(disk, known, stats, log, now())
        todo = sorted(dirty.values(), key=lambda it: it.path)
        if throttle:
            ready = []
            for it in todo:
                last = sessions.get(it.path)
                if last and last[0] and now() - last[0] < THROTTLE * (last[1] or 0):
                    stats.waiting += 1
                else:
                    ready.append(it)
            todo = ready
        total = sum(it.size for it in todo)
        done = 0
        for it in todo:
            if progress is not None:
                progress(done, total, it.path)
            self._import(it, disk, stats, log, now)
            done += it.size
            stats.bytes += it.size
        if progress is not None:
            progress(done, total, "")
        stats.unchanged = max(stats.sessions - len(todo) - stats.waiting, 0)
        return stats

    def _owner_of(
        self, path: str, d: _Disk, disk: dict[str, _Disk], owners: dict[str, str | None]
    ) -> str | None:
        """The main session file that reads ``path`` (itself for a main session file;
        ``None`` for a file no import reads)."""
        if path in owners:
            return owners[path]
        owners[path] = None  # a loop of parent threads ends here
        found: str | None
        if d.root.tool == "claude-code":
            found = _claude_owner(Path(path))
        else:
            found = self._codex_owner(path, disk, owners)
        owners[path] = found
        return found

    def _codex_owner(
        self, path: str, disk: dict[str, _Disk], owners: dict[str, str | None]
    ) -> str | None:
        from regista.importers.codex import _UUID, _first_meta, _parent_thread

        parent = _parent_thread(_first_meta(Path(path)))
        if parent is None:
            return path
        if self._threads is None:
            self._threads = {}
            for other, od in disk.items():
                m = _UUID.search(os.path.basename(other)) if od.root.tool == "codex" else None
                if m:
                    self._threads.setdefault(m.group(0), other)
        found = self._threads.get(parent)
        if found is not None and found != path:
            row = self.db.execute("SELECT owner FROM files WHERE path = ?", (found,)).fetchone()
            if row and row[0]:
                return str(row[0])
            return self._owner_of(found, disk[found], disk, owners) or path
        return path  # its parent is not here: imported on its own, as `regista import` does

    def _record_stray(self, path: str, d: _Disk) -> None:
        self.db.execute(
            "INSERT INTO files(path, tool, root, rel, size, mtime_ns, ino, owner, gone) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, NULL, 0) ON CONFLICT(path) DO UPDATE SET "
            "size = excluded.size, mtime_ns = excluded.mtime_ns, ino = excluded.ino, gone = 0",
            (path, d.root.tool, d.root.label, d.rel, d.size, d.mtime_ns, d.ino),
        )

    def _mark_gone(
        self,
        disk: dict[str, _Disk],
        known: dict[str, Any],
        stats: SyncStats,
        log: Callable[[str], None] | None,
        when: float,
    ) -> None:
        """Files the tool deleted: their traces and copies stay; the state says they are
        gone (``regista doctor`` counts them)."""
        lost = [p for p, k in known.items() if p not in disk and not k[4]]
        if not lost:
            return
        roots = [r for r in self.roots if r.path.is_dir()]
        with Transaction(self.db):
            for p in lost:
                # a folder that is not there (unmounted, not given this time) deletes nothing
                if not any(p.startswith(str(r.path) + os.sep) for r in roots):
                    continue
                self.db.execute("UPDATE files SET gone = 1, gone_at = ? WHERE path = ?", (when, p))
                cur = self.db.execute(
                    "UPDATE sessions SET gone = 1, gone_at = ? WHERE path = ? AND gone = 0",
                    (when, p),
                )
                if cur.rowcount:
                    stats.gone += 1
                    if log is not None:
                        log(f"kept {p} (deleted at the source)")

    # -- one session -----------------------------------------------------------------------

    def _import(
        self,
        it: _Dirty,
        disk: dict[str, _Disk],
        stats: SyncStats,
        log: Callable[[str], None] | None,
        now: Callable[[], float],
    ) -> None:
        from regista.importers import import_runs

        t0 = time.perf_counter()
        copies = {p: self._keep(disk[p]) for p in it.files if p in disk}
        error: str | None = None
        written: list[Path] = []
        read: set[str] = set()
        session_id = started = None
        steps: int | None = None
        try:
            _check_format(Path(it.path), it.tool)
            # a session is written as it converts (in bounded memory)
            conv, written = import_runs(it.tool, Path(it.path), self.folder / it.tool)
            steps = conv.main.steps
            start = conv.main.start
            session_id, started = conv.main.session_id, start.get("ts")
            for run in conv.runs:
                meta = run.start.get("metadata") or {}
                for src in (meta.get("path"), (meta.get("imported_from") or {}).get("path")):
                    if isinstance(src, str):
                        read.add(src)
        except Exception as exc:  # one odd session never stops the others
            error = f"{type(exc).__name__}: {exc}" if not _is_ours(exc) else str(exc)
        # files read that were not known to belong here (a new flat subagent file)
        for p in read:
            if p in disk and p not in copies:
                copies[p] = self._keep(disk[p])
        seconds = time.perf_counter() - t0
        old = self.db.execute("SELECT traces FROM sessions WHERE path = ?", (it.path,)).fetchone()
        names = [p.name for p in written]
        with Transaction(self.db):
            for p, copy in copies.items():
                d = disk[p]
                self.db.execute(
                    "INSERT INTO files(path, tool, root, rel, size, mtime_ns, ino, owner, copy, "
                    "gone) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 0) ON CONFLICT(path) DO UPDATE SET "
                    "size = excluded.size, mtime_ns = excluded.mtime_ns, ino = excluded.ino, "
                    "owner = excluded.owner, copy = excluded.copy, gone = 0, gone_at = NULL",
                    (p, d.root.tool, d.root.label, d.rel, d.size, d.mtime_ns, d.ino, it.path, copy),
                )
            if error is not None and old is not None:
                names = orjson.loads(old[0])  # the traces made before stay
            self.db.execute(
                "INSERT INTO sessions(path, tool, session_id, traces, steps, started, "
                "imported_at, import_s, error, gone) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 0) "
                "ON CONFLICT(path) DO UPDATE SET tool = excluded.tool, "
                "session_id = coalesce(excluded.session_id, session_id), "
                "traces = excluded.traces, steps = coalesce(excluded.steps, steps), "
                "started = coalesce(excluded.started, started), "
                "imported_at = excluded.imported_at, import_s = excluded.import_s, "
                "error = excluded.error, gone = 0, gone_at = NULL",
                (
                    it.path,
                    it.tool,
                    session_id,
                    orjson.dumps(names).decode(),
                    steps,
                    started,
                    now(),
                    seconds,
                    error,
                ),
            )
        if error is None and old is not None:
            self._drop_stale(it, set(orjson.loads(old[0])) - set(names))
        if error is not None:
            stats.failed += 1
            stats.errors.append((it.path, error))
            if log is not None:
                log(f"could not import {it.path}: {error}")
            return
        stats.imported += 1
        stats.runs += len(written)
        if log is not None:
            extra = f" + {len(written) - 1} subagent run(s)" if len(written) > 1 else ""
            log(f"{it.path} → {written[0]} ({steps} steps{extra})")

    def _drop_stale(self, it: _Dirty, names: set[str]) -> None:
        """Traces a session made before and no longer makes (unless another session makes
        them too)."""
        if not names:
            return
        claimed: set[str] = set()
        for (traces,) in self.db.execute("SELECT traces FROM sessions WHERE path != ?", (it.path,)):
            claimed.update(orjson.loads(traces))
        for name in names - claimed:
            with contextlib.suppress(OSError):
                os.unlink(self.folder / it.tool / name)

    def _keep(self, d: _Disk) -> str:
        """Keep a copy of a source file under ``.sources/``; its path in the library.

        A hard link when the file system allows it (it follows the file as the tool appends
        to it, takes no space while the source lives, and keeps the bytes when the tool
        deletes the file); otherwise a copy, extended when the source only grew.
        """
        rel = os.path.join(SOURCES_DIR, d.root.tool, d.root.label, d.rel)
        target = self.folder / rel
        source = d.root.path / d.rel
        try:
            st = target.stat()
        except OSError:
            st = None
        if st is not None and st.st_ino == d.ino and st.st_dev == os.stat(source).st_dev:
            return rel
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
        try:
            os.link(source, tmp)
            os.replace(tmp, target)
            return rel
        except OSError:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        try:
            if (
                st is not None
                and 0 < st.st_size <= d.size
                and _same_prefix(target, source, st.st_size)
            ):
                with open(source, "rb") as src, open(target, "ab") as dst:
                    src.seek(st.st_size)
                    shutil.copyfileobj(src, dst, 1 << 20)
                return rel
            shutil.copyfile(source, tmp)
            os.replace(tmp, target)
        except OSError:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        return rel

    # -- reading the state -----------------------------------------------------------------

    def sessions(self) -> list[SessionState]:
        return read_sessions(self.db)


_HEAD = 4 << 20


def _check_format(path: Path, tool: str) -> None:
    """Raise :class:`~regista.errors.TraceError` unless ``path`` holds a session of
    ``tool`` (as its first lines say, or any line, as ``regista import`` asks)."""
    from regista.errors import TraceError
    from regista.importers.detect import any_line_is, detect

    with open(path, "rb") as f:
        head = f.read(_HEAD)
    found = detect(head)
    if found == tool:
        return
    if found is None and any_line_is(head, tool):
        return
    raise TraceError(f"holds no {tool} session" + (f" (a {found} file)" if found else ""))


def _is_ours(exc: BaseException) -> bool:
    from regista.errors import RegistaError

    return isinstance(exc, RegistaError)


def _same_prefix(a: Path, b: Path, n: int) -> bool:
    from regista.store.recall import fingerprint

    try:
        with open(a, "rb") as fa, open(b, "rb") as fb:
            da, db_ = fa.fileno(), fb.fileno()
            return fingerprint(lambda p, k: os.pread(da, k, p), n) == fingerprint(
                lambda p, k: os.pread(db_, k, p), n
            )
    except OSError:
        return False


def _claude_owner(path: Path) -> str | None:
    """The session file that reads a Claude Code file: itself for a session, the session
    for ``<session>/subagents/agent-*.jsonl`` and for a flat ``agent-*.jsonl`` (its first
    ``sessionId``); ``None`` for anything else (workflow journals, …)."""
    parent = path.parent
    if parent.name == "subagents":
        if not path.name.startswith("agent-"):
            return None
        return str(parent.parent.parent / f"{parent.parent.name}.jsonl")
    if "subagents" in path.parts[-6:]:
        return None
    if path.name.startswith("agent-"):
        from regista.importers.claude_code import _first_session_id

        sid = _first_session_id(path)
        return str(parent / f"{sid}.jsonl") if sid else None
    return str(path)
