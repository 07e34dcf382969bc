"""Recall: earlier runs that dealt with the same words, from a SQLite FTS5 index.

The index (``.regista-recall.sqlite`` in the traces folder) is a cache of the traces, which
stay the only source of truth: it is rebuilt whenever it is missing, damaged or of another
layout. Each :meth:`RecallIndex.update` looks at every trace's size and mtime and reads only
what changed: a new trace whole, a growing one from where the last look stopped (traces are
append-only) once a fingerprint of the bytes already indexed still matches, any other changed
trace whole again, and forgets deleted ones. Several processes may update and query one index at
once: SQLite's WAL journal lets readers go on while one writer works, a busy timeout makes
writers wait their turn, and each file is re-checked inside the write transaction so two
updaters never index the same bytes twice.
"""

from __future__ import annotations

import hashlib
import os
import re
import sqlite3
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from regista.errors import UserError
from regista.store._sqlite import Transaction, shared
from regista.store.extract import (
    END_STEP,
    MAX_RUN_TEXT,
    WORD,
    RunDigest,
    digest_lines,
    event_text,
    request_text,
)
from regista.store.runs import DEFAULT_DIR, run_names
from regista.vocab import run_outcome

__all__ = ["INDEX_NAME", "RecallHit", "RecallIndex", "UpdateStats", "fingerprint", "recall"]

INDEX_NAME = ".regista-recall.sqlite"
#: Bump when the tables change: an index of another layout is rebuilt.
#: 6: runs are kept by their path relative to the traces folder (a caller naming the folder
#: relatively and one naming it absolutely share one index).
LAYOUT = "6"
_BATCH = 200
#: An indexed prefix up to this size is fingerprinted whole; a longer one by its first and
#: last ``_EDGE`` bytes and ``_SAMPLES`` blocks of ``_BLOCK`` bytes spread between them.
_WHOLE = 1 << 20
_EDGE = 64 * 1024
_SAMPLES = 32
_BLOCK = 4096

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS runs(
    id INTEGER PRIMARY KEY, path TEXT UNIQUE NOT NULL, size INTEGER, mtime_ns INTEGER,
    indexed INTEGER, ino INTEGER, fp BLOB, session_id TEXT, task TEXT, started TEXT, outcome TEXT,
    ok INTEGER, steps INTEGER, cost REAL, skeleton TEXT, body_len INTEGER, skipped TEXT);
CREATE VIRTUAL TABLE IF NOT EXISTS runs_fts USING fts5(body, detail=none);
CREATE TABLE IF NOT EXISTS steps(run_id INTEGER NOT NULL, step INTEGER, body TEXT);
CREATE INDEX IF NOT EXISTS steps_of_run ON steps(run_id);
"""


@dataclass
class UpdateStats:
    """What one :meth:`RecallIndex.update` did (counts of files)."""

    added: int = 0
    appended: int = 0
    removed: int = 0
    unchanged: int = 0
    skipped: int = 0
    rebuilt: bool = False


@dataclass
class RecallHit:
    """One run that matched, with where the words occur in it."""

    session_id: str
    path: Path
    task: str
    started: str
    outcome: str
    ok: bool
    steps: int | None
    cost_usd: float | None
    skeleton: list[str]
    #: ``(step, snippet)`` of the steps where the words occur (step -1: the task,
    #: -2: the output or error the run ended with).
    matches: list[tuple[int, str]] = field(default_factory=list)

    def skeleton_text(self, width: int = 100) -> str:
        """``search_orders ×3 → get_order → issue_refund! → end_turn``."""
        parts: list[str] = []
        for name in self.skeleton:
            if parts and parts[-1].split(" ×")[0] == name:
                base, _, n = parts[-1].partition(" ×")
                parts[-1] = f"{base} ×{int(n or 1) + 1}"
            else:
                parts.append(name)
        parts.append(self.outcome)
        text = " → ".join(parts)
        return text if len(text) <= width else text[: width - 1] + "…"

    def to_dict(self) -> dict[str, Any]:
        return {
            "session_id": self.session_id,
            "path": str(self.path),
            "task": self.task,
            "started": self.started,
            "outcome": self.outcome,
            "ok": self.ok,
            "steps": self.steps,
            "cost_usd": self.cost_usd,
            "skeleton": self.skeleton,
            "matches": [{"step": s, "snippet": t} for s, t in self.matches],
        }


def fingerprint(read_at: Callable[[int, int], bytes], n: int) -> bytes:
    """A digest of the first ``n`` bytes of a file, ``read_at(pos, count)`` reading them.

    Whole up to 1 MB; beyond, the first and last 64 KB and 32 blocks spread between (a
    fixed amount of reading however long the file): any edit that moves the bytes after
    it (an insertion or deletion anywhere) changes the last 64 KB.
    """
    h = hashlib.blake2b(n.to_bytes(8, "little"), digest_size=16)
    if n <= _WHOLE:
        h.update(read_at(0, n))
        return h.digest()
    h.update(read_at(0, _EDGE))
    stride = (n - 2 * _EDGE - _BLOCK) // (_SAMPLES - 1)
    for k in range(_SAMPLES):
        h.update(read_at(_EDGE + k * stride, _BLOCK))
    h.update(read_at(n - _EDGE, _EDGE))
    return h.digest()


def _walk(folder: Path) -> Iterator[tuple[str, int, int]]:
    """The runs ``regista runs`` lists for ``folder`` (:func:`regista.store.runs.run_names`:
    a project's traces folder brings its imports and its sweeps' forks), with their size and
    mtime; what is not a regular file is left out. Each is named by its key in the index
    (:func:`_key`)."""
    prefix = os.path.join(os.fspath(folder), "")
    for path in run_names(folder):
        try:
            st = os.stat(path)
        except OSError:
            continue
        if stat.S_ISREG(st.st_mode):
            yield _key(prefix, path), st.st_size, st.st_mtime_ns


def _key(prefix: str, path: str) -> str:
    """How the index names a run: its path relative to the traces folder (``prefix``, the
    folder as the walk was given it, ending in a separator), or, for one the listing reads
    elsewhere (a project's imports and sweeps' forks), its absolute path; so ``regista
    recall traces`` and MCP's ``/abs/traces`` find the same keys."""
    if path.startswith(prefix):
        return path[len(prefix) :]
    return os.path.abspath(path)


_WORD = WORD


def fts_query(words: str, *, any_word: bool = False) -> str:
    """An FTS5 query for the words: each word's parts (``ORD-1042``: ``ord``, ``1042``) must
    all be in a run; every word (or, with ``any_word``, at least one). Each part is quoted,
    so nothing is read as query syntax."""
    groups = [_WORD.findall(w.lower()) for w in words.split()]
    groups = [g for g in groups if g]
    if not groups:
        raise UserError(f"recall: no words to look for in {words!r}")
    parts = ["(" + " AND ".join(f'"{t}"' for t in g) + ")" for g in groups]
    return (" OR " if any_word else " AND ").join(parts)


class RecallIndex:
    """The recall index of one traces folder.

    Args:
        folder: The traces folder.
        db_path: Where the index lives (default ``folder/.regista-recall.sqlite``).

    Raises:
        UserError: ``folder`` is not a folder.
    """

    def __init__(self, folder: str | Path, db_path: str | Path | None = None) -> None:
        self.folder = Path(folder)
        if not self.folder.is_dir():
            what = "is a file" if self.folder.exists() else "no such folder"
            raise UserError(f"{self.folder}: {what}; give the folder that holds the traces")
        self.db_path = Path(db_path) if db_path is not None else self.folder / INDEX_NAME
        self.rebuilt = False
        self.db = self._open()

    # -- opening -------------------------------------------------------------------------

    def _connect(self) -> sqlite3.Connection:
        try:
            db = sqlite3.connect(self.db_path, timeout=30, isolation_level=None)
        except sqlite3.OperationalError:  # a read-only folder: an index for this process only
            db = sqlite3.connect(":memory:", isolation_level=None)
        shared(db)
        db.execute("PRAGMA cache_size = -65536")  # 64 MB: FTS5 merges its segments in memory
        return db

    def _open(self) -> sqlite3.Connection:
        try:
            db = self._connect()
            db.executescript(_SCHEMA)
            row = db.execute("SELECT value FROM meta WHERE key = 'layout'").fetchone()
            if row is None:
                db.execute("INSERT OR IGNORE INTO meta VALUES ('layout', ?)", (LAYOUT,))
            elif row[0] != LAYOUT:
                raise sqlite3.DatabaseError("another index layout")
            db.execute("SELECT count(*) FROM runs_fts WHERE runs_fts MATCH 'x'").fetchone()
            return db
        except sqlite3.DatabaseError:
            return self._rebuild()

    def _rebuild(self) -> sqlite3.Connection:
        """Throw the index away and start a new one (the traces are the truth)."""
        self.rebuilt = True
        for suffix in ("", "-wal", "-shm"):
            try:
                os.unlink(f"{self.db_path}{suffix}")
            except FileNotFoundError:
                pass
            except OSError:
                break
        db = self._connect()
        db.executescript(_SCHEMA)
        db.execute("INSERT OR REPLACE INTO meta VALUES ('layout', ?)", (LAYOUT,))
        return db

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> RecallIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- updating ------------------------------------------------------------------------

    def update(self) -> UpdateStats:
        """Bring the index up to date with the folder, reading only what changed."""
        try:
            return self._update()
        except sqlite3.DatabaseError:
            self.db.close()
            self.db = self._rebuild()
            stats = self._update()
            stats.rebuilt = True
            return stats

    def _update(self) -> UpdateStats:
        stats = UpdateStats(rebuilt=self.rebuilt)
        on_disk = {p: (size, mtime) for p, size, mtime in _walk(self.folder)}
        known = {
            path: (size, mtime)
            for path, size, mtime in self.db.execute("SELECT path, size, mtime_ns FROM runs")
        }
        changed = [p for p, sm in on_disk.items() if known.get(p) != sm]
        gone = [p for p in known if p not in on_disk]
        stats.unchanged = len(on_disk) - len(changed)
        for i in range(0, len(gone), _BATCH):
            with self._write():
                for path in gone[i : i + _BATCH]:
                    self._forget(path)
                    stats.removed += 1
        for i in range(0, len(changed), _BATCH):
            with self._write():
                for path in changed[i : i + _BATCH]:
                    self._index_file(path, stats)
        return stats

    def _file(self, key: str) -> Path:
        """The trace the index names ``key`` (:func:`_key`), as the folder was given."""
        return self.folder / key

    def _write(self) -> Transaction:
        return Transaction(self.db)

    def _forget(self, path: str) -> None:
        row = self.db.execute("SELECT id FROM runs WHERE path = ?", (path,)).fetchone()
        if row is None:
            return
        self._drop_text(row[0])
        self.db.execute("DELETE FROM runs WHERE id = ?", (row[0],))

    def _drop_text(self, run_id: int) -> None:
        self.db.execute("DELETE FROM runs_fts WHERE rowid = ?", (run_id,))
        self.db.execute("DELETE FROM steps WHERE run_id = ?", (run_id,))

    def _index_file(self, path: str, stats: UpdateStats) -> None:
        """Index what is new in one file (inside the write transaction).

        A file is read from where the last look stopped only if it is the same file (inode)
        and the bytes indexed then are still there (:func:`fingerprint`); otherwise whole.
        """
        try:
            with open(self._file(path), "rb") as f:
                fd = f.fileno()
                st = os.fstat(fd)
                size, mtime, ino = st.st_size, st.st_mtime_ns, st.st_ino
                row = self.db.execute(
                    "SELECT id, size, mtime_ns, indexed, ino, fp, session_id FROM runs "
                    "WHERE path = ?",
                    (path,),
                ).fetchone()
                if row is not None and (row[1], row[2]) == (size, mtime):
                    return  # another process indexed it meanwhile
                append = (
                    row is not None
                    and row[6] is not None
                    and size >= row[3]
                    and row[4] == ino
                    and row[5] == fingerprint(lambda pos, k: os.pread(fd, k, pos), row[3])
                )
                offset = row[3] if append and row is not None else 0
                data = os.pread(fd, size - offset, offset)

                def read_at(pos: int, k: int) -> bytes:
                    if pos >= offset:
                        return data[pos - offset : pos - offset + k]
                    return os.pread(fd, k, pos)

                digest: RunDigest | None = None
                error = ""
                try:
                    digest = digest_lines(data, at_start=not append)
                    fp = fingerprint(read_at, offset + digest.consumed)
                except ValueError as exc:
                    fp, error = fingerprint(read_at, size), str(exc)
        except OSError:
            self._forget(path)
            return
        if append and row is not None and digest is not None:
            self._append(row[0], digest, offset, size, mtime, ino, fp)
            stats.appended += 1
            return
        if row is not None:
            self._forget(path)
        if digest is None:
            self.db.execute(
                "INSERT INTO runs(path, size, mtime_ns, indexed, ino, fp, skipped) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                (path, size, mtime, size, ino, fp, error),
            )
            stats.skipped += 1
            return
        assert digest.start is not None
        start = digest.start
        cur = self.db.execute(
            "INSERT INTO runs(path, size, mtime_ns, indexed, ino, fp, session_id, task, "
            "started, outcome, ok, steps, cost, skeleton, body_len) "
            "VALUES (?, ?, ?, 0, ?, ?, ?, ?, ?, 'unfinished', 0, 0, NULL, '[]', 0)",
            (
                path,
                size,
                mtime,
                ino,
                fp,
                start["session_id"],
                str(start.get("task") or ""),
                str(start.get("ts") or ""),
            ),
        )
        assert cur.lastrowid is not None
        self._append(cur.lastrowid, digest, 0, size, mtime, ino, fp, new=True)
        stats.added += 1

    def _append(
        self,
        run_id: int,
        d: RunDigest,
        offset: int,
        size: int,
        mtime: int,
        ino: int,
        fp: bytes,
        *,
        new: bool = False,
    ) -> None:
        row = self.db.execute(
            "SELECT skeleton, body_len, outcome, ok, steps, cost FROM runs WHERE id = ?",
            (run_id,),
        ).fetchone()
        skeleton = orjson.loads(row[0] or "[]") + d.skeleton
        outcome, ok, steps, cost = row[2], row[3], row[4], row[5]
        if d.end is not None:
            outcome = str(d.end.get("stop_reason") or "?")
            error = d.end.get("error")
            stop = d.end.get("stop_reason")
            ended = run_outcome(
                stop if isinstance(stop, str) else None,
                error if isinstance(error, str) and error else None,
                ended=True,
            )
            ok = int(ended == "ok")
            steps = d.end.get("steps") if _sql_int(d.end.get("steps")) else steps
            c = d.end.get("cost_usd")
            cost = float(c) if isinstance(c, int | float) else None
        elif d.last_step >= 0 and _sql_int(d.last_step + 1):
            steps = max(steps or 0, d.last_step + 1)
        if d.texts:
            self.db.executemany(
                "INSERT INTO steps(run_id, step, body) VALUES (?, ?, ?)",
                # a corrupt step number past SQLite's integers is kept out of the index
                [(run_id, step, text) for step, text in d.texts if _sql_int(step)],
            )
        body_len = row[1] or 0
        if new or d.words:
            words = d.words
            if not new:
                old = self.db.execute(
                    "SELECT body FROM runs_fts WHERE rowid = ?", (run_id,)
                ).fetchone()
                known = set(old[0].split()) if old and old[0] else set()
                words = known | words
                self.db.execute("DELETE FROM runs_fts WHERE rowid = ?", (run_id,))
            body = " ".join(sorted(words))[:MAX_RUN_TEXT]
            self.db.execute("INSERT INTO runs_fts(rowid, body) VALUES (?, ?)", (run_id, body))
            body_len = len(body)
        self.db.execute(
            "UPDATE runs SET size = ?, mtime_ns = ?, indexed = ?, ino = ?, fp = ?, outcome = ?, "
            "ok = ?, steps = ?, cost = ?, skeleton = ?, body_len = ? WHERE id = ?",
            (
                size,
                mtime,
                offset + d.consumed,
                ino,
                fp,
                outcome,
                ok,
                steps,
                cost,
                orjson.dumps(skeleton[:2000]).decode(),
                body_len,
                run_id,
            ),
        )

    # -- searching -----------------------------------------------------------------------

    def search(self, words: str, limit: int = 10, max_matches: int = 5) -> list[RecallHit]:
        """Runs whose text has all the words (or, failing that, any of them); successful
        runs first, then the newest first.

        (Ranking by relevance, bm25, costs a score for every matching run: over 10,000
        runs that alone is over the 50 ms a query may take.)
        """
        rows: list[Any] = []
        for any_word in (False, True):
            query = fts_query(words, any_word=any_word)
            rows = self.db.execute(
                "SELECT r.id, r.session_id, r.path, r.task, r.started, r.outcome, r.ok, "
                "r.steps, r.cost, r.skeleton FROM runs_fts JOIN runs r ON r.id = runs_fts.rowid "
                "WHERE runs_fts MATCH ? ORDER BY r.ok DESC, r.started DESC, r.id DESC "
                "LIMIT ?",
                (query, limit),
            ).fetchall()
            if rows or len(words.split()) < 2:
                break
        tokens = _tokens(words)
        hits = []
        # Only the steps that mention a word leave SQLite (its lower() folds ASCII letters;
        # the rows are checked again below with Python's).
        some = tokens[:16]
        where = " OR ".join("instr(lower(body), ?) > 0" for _ in some) or "0"
        for rid, sid, path, task, started, outcome, ok, steps, cost, skeleton in rows:
            texts = self.db.execute(
                f"SELECT step, body FROM steps WHERE run_id = ? AND ({where}) ORDER BY rowid",
                (rid, *some),
            ).fetchall()
            matches = _matches(texts, tokens, max_matches)
            if not matches and tokens:  # the words are past a snippet's first characters
                matches = _scan_matches(self._file(path), tokens, max_matches)
            hits.append(
                RecallHit(
                    session_id=sid,
                    path=self._file(path),
                    task=task,
                    started=started,
                    outcome=outcome,
                    ok=bool(ok),
                    steps=steps,
                    cost_usd=cost,
                    skeleton=orjson.loads(skeleton or "[]"),
                    matches=matches,
                )
            )
        return hits

    def count(self) -> int:
        """Runs in the index (files that are not traces left out)."""
        row = self.db.execute("SELECT count(*) FROM runs WHERE session_id IS NOT NULL").fetchone()
        return int(row[0])


def _tokens(words: str) -> list[str]:
    return [w.lower() for w in words.split() if any(c.isalnum() for c in w)]


def _snippet(body: str, tokens: list[str], width: int = 60) -> str:
    """The text around the first word found, each word found in it in ``[ ]``."""
    pattern = re.compile("|".join(re.escape(t) for t in tokens), re.IGNORECASE)
    m = pattern.search(body)
    first = m.start() if m else 0
    lo, hi = max(0, first - width), min(len(body), first + width)
    marked = pattern.sub(lambda x: f"[{x.group(0)}]", body[lo:hi])
    return ("…" if lo > 0 else "") + marked + ("…" if hi < len(body) else "")


def _matches(texts: list[Any], tokens: list[str], limit: int) -> list[tuple[int, str]]:
    """One snippet per step that mentions a word, in the order a person reads a run: the
    task, the steps, the end; at most ``limit`` (the steps that have most words first)."""
    found: dict[int, tuple[int, str]] = {}
    for step, body in texts:
        low = str(body).lower()
        n = sum(1 for t in tokens if t in low)
        if n and (int(step) not in found or n > found[int(step)][0]):
            found[int(step)] = (n, str(body))
    best = sorted(found.items(), key=lambda kv: -kv[1][0])[:limit]
    return sorted(
        ((step, _snippet(body, tokens)) for step, (_, body) in best),
        key=lambda kv: (kv[0] == END_STEP, kv[0]),
    )


def _scan_matches(path: Path, tokens: list[str], limit: int) -> list[tuple[int, str]]:
    """The steps of one trace whose whole text has a word: read from the trace itself, for
    a run found by words that no indexed snippet (an event's first characters) holds."""
    needles = [t.encode() for t in tokens]
    texts: list[tuple[int, str]] = []
    try:
        with open(path, "rb") as f:
            for raw in f:
                low = raw.lower()
                if not any(n in low for n in needles):
                    continue
                try:
                    ev = orjson.loads(raw)
                except orjson.JSONDecodeError:
                    continue
                if not isinstance(ev, dict):
                    continue
                step = ev.get("step")
                step = step if isinstance(step, int) and not isinstance(step, bool) else -1
                if ev.get("type") == "session.end":
                    step = END_STEP
                text = event_text(ev, 0)
                if ev.get("type") == "llm.request":
                    text = "\n".join([text, request_text(ev, typed=False)])
                for t in tokens:
                    at = text.lower().find(t)
                    if at >= 0:
                        texts.append((step, text[max(0, at - 200) : at + 200]))
                        break
    except OSError:
        return []
    return _matches(texts, tokens, limit)


def recall(words: str, folder: str | Path | None = None, *, limit: int = 10) -> list[RecallHit]:
    """Update the folder's index, then find the runs that dealt with ``words``.

    Raises:
        UserError: No words, or the folder does not exist.
    """
    fts_query(words)  # no words: say so before touching the folder
    with RecallIndex(folder if folder is not None else DEFAULT_DIR) as index:
        index.update()
        try:
            return index.search(words, limit)
        except sqlite3.DatabaseError:  # damaged under our feet: rebuild once
            index.db.close()
            index.db = index._rebuild()
            index.update()
            return index.search(words, limit)


def _sql_int(value: object) -> bool:
    """Whether ``value`` is an integer SQLite can store (a corrupt trace may hold any)."""
    return isinstance(value, int) and not isinstance(value, bool) and -(2**63) <= value < 2**63
