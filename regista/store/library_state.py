"""The library's state: what was imported from which file (SQLite, beside the traces)."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path

import orjson

from regista.store._sqlite import shared

__all__ = ["SessionState", "open_state", "read_sessions"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS files(
    path TEXT PRIMARY KEY, tool TEXT NOT NULL, root TEXT NOT NULL, rel TEXT NOT NULL,
    size INTEGER, mtime_ns INTEGER, ino INTEGER, owner TEXT, copy TEXT,
    gone INTEGER NOT NULL DEFAULT 0, gone_at REAL);
CREATE INDEX IF NOT EXISTS files_of_owner ON files(owner);
CREATE TABLE IF NOT EXISTS sessions(
    path TEXT PRIMARY KEY, tool TEXT NOT NULL, session_id TEXT, traces TEXT NOT NULL DEFAULT '[]',
    steps INTEGER, started TEXT, imported_at REAL, import_s REAL, error TEXT,
    gone INTEGER NOT NULL DEFAULT 0, gone_at REAL);
"""
_LAYOUT = "1"


@dataclass
class SessionState:
    """One session as the library records it (for ``regista doctor``)."""

    path: str
    tool: str
    session_id: str | None
    traces: list[str]
    steps: int | None
    started: str | None
    imported_at: float | None
    error: str | None
    gone: bool
    gone_at: float | None


def open_state(path: Path, *, readonly: bool = False) -> sqlite3.Connection:
    """The library's state database (made, or brought to this layout, unless ``readonly``)."""
    if readonly:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, isolation_level=None, timeout=30)
        db.execute("PRAGMA busy_timeout = 30000")
        return db
    db = shared(sqlite3.connect(path, isolation_level=None, timeout=30))
    db.executescript(_SCHEMA)
    db.execute("INSERT OR IGNORE INTO meta VALUES ('layout', ?)", (_LAYOUT,))
    return db


def read_sessions(db: sqlite3.Connection) -> list[SessionState]:
    """Every session a library's state records."""
    rows = db.execute(
        "SELECT path, tool, session_id, traces, steps, started, imported_at, error, gone, "
        "gone_at FROM sessions ORDER BY started"
    ).fetchall()
    return [
        SessionState(
            path=r[0],
            tool=r[1],
            session_id=r[2],
            traces=orjson.loads(r[3] or "[]"),
            steps=r[4],
            started=r[5],
            imported_at=r[6],
            error=r[7],
            gone=bool(r[8]),
            gone_at=r[9],
        )
        for r in rows
    ]
