"""What the store's SQLite files (a library's state, a folder's recall index) share."""

from __future__ import annotations

import sqlite3

__all__ = ["Transaction", "shared"]


def shared(db: sqlite3.Connection) -> sqlite3.Connection:
    """``db``, set up for several processes at once: a write waits up to 30 s for another's
    lock, and readers do not block the writer (a write-ahead log)."""
    db.execute("PRAGMA busy_timeout = 30000")
    db.execute("PRAGMA journal_mode = WAL")
    db.execute("PRAGMA synchronous = NORMAL")
    return db


class Transaction:
    """``BEGIN IMMEDIATE`` … ``COMMIT`` (``ROLLBACK`` when the block raised): the write lock
    is taken before what to write is read."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def __enter__(self) -> None:
        self.db.execute("BEGIN IMMEDIATE")

    def __exit__(self, exc_type: object, *_: object) -> None:
        self.db.execute("ROLLBACK" if exc_type is not None else "COMMIT")
