"""What ``regista doctor`` finds: the tools' retention and what the library keeps.

Claude Code deletes a session transcript whose last change is older than
``cleanupPeriodDays`` (``~/.claude/settings.json``; 30 when unset) each time it starts. The
report says that setting, which sessions are close to it and not yet in the library, and what
the library holds that the sources no longer do. Nothing is written: the library's state is
opened read-only.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from regista.store.homes import Root
from regista.store.library import LOCK_NAME, STATE_NAME
from regista.store.library_state import SessionState, open_state, read_sessions

__all__ = ["DEFAULT_CLEANUP_DAYS", "Report", "Retention", "examine", "retention"]

#: Claude Code's ``cleanupPeriodDays`` when its settings do not set it.
DEFAULT_CLEANUP_DAYS = 30
#: A session this close (in days) to Claude Code's clean-up is "about to be deleted".
SOON_DAYS = 3
_DAY = 86400.0


@dataclass
class Retention:
    """Claude Code's retention setting.

    Attributes:
        settings: The settings file read.
        days: ``cleanupPeriodDays`` (``None``: the value is not a number).
        explicit: The file sets it (else the default applies).
        problem: Why the file could not be read, if it could not.
        raw: The value as written.
    """

    settings: Path
    days: int | None = DEFAULT_CLEANUP_DAYS
    explicit: bool = False
    problem: str | None = None
    raw: Any = None

    def describe(self) -> str:
        where = str(self.settings).replace(os.environ.get("HOME", "\0"), "~", 1)
        if self.problem is not None:
            return (
                f"{where}: {self.problem}; Claude Code's default applies: sessions unchanged "
                f"for {DEFAULT_CLEANUP_DAYS} days are deleted when it starts"
            )
        if self.days is None:
            return f"{where}: cleanupPeriodDays is {self.raw!r}, not a number of days"
        if not self.explicit:
            return (
                f"cleanupPeriodDays is not set in {where}: the default, {DEFAULT_CLEANUP_DAYS} "
                "days; Claude Code deletes sessions unchanged that long when it starts"
            )
        if self.days == 0:
            return (
                f"cleanupPeriodDays = 0 in {where}: Claude Code keeps no transcripts "
                "(they are not written, or deleted at once); nothing reaches the library"
            )
        return (
            f"cleanupPeriodDays = {self.days} in {where}: Claude Code deletes sessions "
            f"unchanged for {self.days} days when it starts"
        )


def retention(claude_home: Path) -> Retention:
    """``cleanupPeriodDays`` of ``claude_home/settings.json``."""
    settings = claude_home / "settings.json"
    r = Retention(settings)
    try:
        data = orjson.loads(settings.read_bytes())
    except FileNotFoundError:
        return r
    except OSError as exc:
        r.problem = f"cannot be read ({exc.strerror})"
        return r
    except orjson.JSONDecodeError:
        r.problem = "not valid JSON"
        return r
    if not isinstance(data, dict) or "cleanupPeriodDays" not in data:
        return r
    r.explicit = True
    r.raw = value = data["cleanupPeriodDays"]
    r.days = (
        value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None
    )
    return r


@dataclass
class SourceFolder:
    root: Root
    exists: bool
    sessions: int = 0
    bytes: int = 0
    #: Session files the clean-up will delete within :data:`SOON_DAYS` that the library
    #: does not hold as they are now.
    at_risk: list[Path] = field(default_factory=list)
    not_kept: int = 0


@dataclass
class Report:
    retention: Retention
    sources: list[SourceFolder]
    library: Path
    library_exists: bool
    watching: int | None = None  # the pid of the regista watch that keeps it
    sessions: list[SessionState] = field(default_factory=list)
    traces: int = 0
    trace_bytes: int = 0
    kept_bytes: int = 0  # bytes of source copies whose source is gone
    last_import: float | None = None

    @property
    def gone(self) -> list[SessionState]:
        """Sessions whose source is gone (one that moved, as Codex moves a rollout to
        ``archived_sessions``, is still at the source under its new path)."""
        live = {s.session_id for s in self.sessions if not s.gone and s.session_id}
        return [s for s in self.sessions if s.gone and s.session_id not in live]

    @property
    def failed(self) -> list[SessionState]:
        return [s for s in self.sessions if s.error and not s.traces]

    def to_dict(self) -> dict[str, Any]:
        r = self.retention
        return {
            "claude_code_retention": {
                "settings": str(r.settings),
                "cleanup_period_days": r.days,
                "set": r.explicit,
                "problem": r.problem,
            },
            "sources": [
                {
                    "tool": s.root.tool,
                    "path": str(s.root.path),
                    "exists": s.exists,
                    "sessions": s.sessions,
                    "bytes": s.bytes,
                    "not_in_library": s.not_kept,
                    "deleted_soon_not_in_library": [str(p) for p in s.at_risk],
                }
                for s in self.sources
            ],
            "library": {
                "path": str(self.library),
                "exists": self.library_exists,
                "watch_pid": self.watching,
                "sessions": len(self.sessions),
                "traces": self.traces,
                "trace_bytes": self.trace_bytes,
                "last_import": self.last_import,
                "kept_after_source_deleted": [
                    {
                        "path": s.path,
                        "tool": s.tool,
                        "session_id": s.session_id,
                        "started": s.started,
                        "traces": s.traces,
                        "deleted_at": s.gone_at,
                    }
                    for s in self.gone
                ],
                "kept_source_bytes": self.kept_bytes,
                "could_not_import": [{"path": s.path, "error": s.error} for s in self.failed],
            },
        }


def examine(
    library: Path, roots: list[Root], claude_home: Path, *, now: float | None = None
) -> Report:
    """Look at the sources and the library (nothing is written)."""
    now = time.time() if now is None else now
    report = Report(retention(claude_home), [], library, library.is_dir())
    state = library / STATE_NAME
    db: sqlite3.Connection | None = None
    kept: dict[str, tuple[int, int]] = {}
    if state.is_file():
        try:
            db = open_state(state, readonly=True)
            report.sessions = read_sessions(db)
            kept = {
                p: (size, mtime)
                for p, size, mtime in db.execute(
                    "SELECT path, size, mtime_ns FROM files WHERE owner = path"
                )
            }
            gone_copies = db.execute(
                "SELECT copy FROM files WHERE gone = 1 AND copy IS NOT NULL"
            ).fetchall()
            for (copy,) in gone_copies:
                with contextlib.suppress(OSError):
                    report.kept_bytes += (library / copy).stat().st_size
        except sqlite3.DatabaseError:
            report.sessions = []
        finally:
            if db is not None:
                db.close()
    stamps = [s.imported_at for s in report.sessions if s.imported_at]
    report.last_import = max(stamps) if stamps else None
    for s in report.sessions:
        for name in s.traces:
            with contextlib.suppress(OSError):
                report.trace_bytes += (library / s.tool / name).stat().st_size
                report.traces += 1
    report.watching = _watcher(library)
    days = report.retention.days
    for root in roots:
        src = SourceFolder(root, root.path.is_dir())
        report.sources.append(src)
        if not src.exists:
            continue
        from regista.importers import discover

        try:
            files = discover(root.tool, [root.path])
        except (FileNotFoundError, OSError):
            continue
        for f in files:
            try:
                st = f.stat()
            except OSError:
                continue
            src.sessions += 1
            src.bytes += st.st_size
            held = kept.get(str(f)) == (st.st_size, st.st_mtime_ns)
            if not held:
                src.not_kept += 1
            old = days is not None and now - st.st_mtime > (days - SOON_DAYS) * _DAY
            if root.tool == "claude-code" and days and not held and old:
                src.at_risk.append(f)
    return report


def _watcher(library: Path) -> int | None:
    """The pid of the ``regista watch`` that holds the library's lock, if one does."""
    try:
        import fcntl
    except ImportError:
        return None
    try:
        fd = os.open(library / LOCK_NAME, os.O_RDONLY)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError:
        text = os.pread(fd, 32, 0).decode(errors="replace").strip()
        return int(text) if text.isdigit() else -1
    else:
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)
