"""The library on a realistic home: `regista watch --once`, then the recall index over it.

Makes a fake ``~/.claude/projects`` of ``--sessions`` realistic transcripts
(``bench/realistic_cc.py``: random ids, long tool results, progress lines; a prompt every
thirty tool calls, so most prompts are only in model requests), then measures, each row
against a floor measured interleaved with it (floor, row, floor, row, …; medians of
``--repeat``; CPU seconds):

- ``watch --once``: a new library made from the home, in MB/s of transcripts; floor: reading
  every transcript and ``orjson.loads`` of every line.
- ``recall index``: the first build of the recall index over the library; floor: SQLite
  FTS5 over the same text (the same traces read and decoded, the same texts taken from each
  event, each inserted whole as one row of a default ``fts5(body)`` table). Reported as a
  ratio of times and a ratio of sizes on disk.
- ``request-only words``: words of prompts that only model requests hold: in how many runs
  ``grep`` finds each, and in how many ``recall`` does.

    .venv/bin/python bench/bench_library.py [--sessions 20] [--mb 5] [--repeat 3]
"""

from __future__ import annotations

import argparse
import gc
import os
import re
import resource
import shutil
import sqlite3
import statistics
import sys
import tempfile
from pathlib import Path

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))

from realistic_cc import write_transcript

OUT = Path("/tmp/regista-bench")


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def make_home(sessions: int, mb: float) -> Path:
    home = OUT / f"library-home-{sessions}x{mb:g}"
    proj = home / ".claude" / "projects" / "-home-ann-src-shop"
    for n in range(sessions):
        write_transcript(proj / f"{n:08d}-0000-4000-8000-000000000000.jsonl", mb, seed=100 + n)
    return home


def floor_read(files: list[Path]) -> None:
    for f in files:
        for line in f.read_bytes().split(b"\n"):
            if line:
                orjson.loads(line)


def watch_once(home: Path, lib: Path) -> None:
    from regista.store.library import Library, Root

    shutil.rmtree(lib, ignore_errors=True)
    with Library(lib, [Root.of("claude-code", home / ".claude" / "projects")]) as library:
        library.sync()


def recall_build(lib: Path) -> None:
    from regista.store.recall import INDEX_NAME, RecallIndex

    for suffix in ("", "-wal", "-shm"):
        Path(f"{lib / INDEX_NAME}{suffix}").unlink(missing_ok=True)
    with RecallIndex(lib) as index:
        index.update()


def _texts(ev: dict[str, object]) -> list[str]:
    """The texts the recall index takes from one event, whole."""
    from regista.store.extract import _blocks_text, _dump, event_text, request_text

    out = [event_text(ev, 0)]
    if ev.get("type") == "llm.request":
        out.append(request_text(ev, typed=False))
        system = ev.get("system")
        if system:
            out.append(system if isinstance(system, str) else _blocks_text(system))
        if ev.get("tools"):
            out.append(_dump(ev["tools"]))
    return [t for t in out if t]


def fts5_build(lib: Path, db_path: Path) -> int:
    """The same texts in a default FTS5 table, one row per event; the characters indexed."""
    db_path.unlink(missing_ok=True)
    db = sqlite3.connect(db_path, isolation_level=None)
    db.execute("PRAGMA journal_mode = WAL")
    db.execute("PRAGMA synchronous = NORMAL")
    db.execute("CREATE VIRTUAL TABLE t USING fts5(body)")
    chars = 0
    db.execute("BEGIN")
    for tool in ("claude-code", "codex"):
        for f in sorted((lib / tool).glob("*.jsonl")) if (lib / tool).is_dir() else []:
            rows = []
            for line in f.read_bytes().split(b"\n"):
                if not line:
                    continue
                ev = orjson.loads(line)
                text = "\n".join(_texts(ev))
                if text:
                    chars += len(text)
                    rows.append((text,))
            db.executemany("INSERT INTO t(body) VALUES (?)", rows)
    db.execute("COMMIT")
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()
    return chars


def _size(path: Path) -> int:
    return sum(os.path.getsize(f"{path}{s}") for s in ("", "-wal") if os.path.exists(f"{path}{s}"))


def interleaved(row, base, repeat: int) -> tuple[float, float]:  # type: ignore[no-untyped-def]
    rows, floors = [], []
    for _ in range(repeat):
        gc.collect()
        t = _cpu()
        base()
        floors.append(_cpu() - t)
        gc.collect()
        t = _cpu()
        row()
        rows.append(_cpu() - t)
    return statistics.median(rows), statistics.median(floors)


_WORD = re.compile(r"[a-z]{6,}")


def request_only_words(home: Path, limit: int = 12) -> list[str]:
    """Words of prompts typed after the first that no other line of the session holds."""
    words: dict[str, int] = {}
    for f in sorted((home / ".claude" / "projects").rglob("*.jsonl")):
        prompts: list[str] = []
        rest: list[bytes] = []
        first = True
        for line in f.read_bytes().split(b"\n"):
            obj = orjson.loads(line) if line else None
            message = obj.get("message") if isinstance(obj, dict) else None
            content = message.get("content") if isinstance(message, dict) else None
            if obj and obj.get("type") == "user" and isinstance(content, str):
                if not first:  # the first prompt is the task: it was always indexed
                    prompts.append(content)
                first = False
            else:
                rest.append(line)
        other = b"\n".join(rest)
        for w in set(_WORD.findall(" ".join(prompts))):
            if w.encode() not in other:
                words[w] = words.get(w, 0) + 1
    return sorted(words, key=lambda w: (-words[w], w))[:limit]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sessions", type=int, default=20)
    ap.add_argument("--mb", type=float, default=5)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    home = make_home(args.sessions, args.mb)
    files = sorted((home / ".claude" / "projects").rglob("*.jsonl"))
    mb = sum(f.stat().st_size for f in files) / 1e6
    print(f"home: {home} ({len(files)} sessions, {mb:.0f} MB)")
    work = Path(tempfile.mkdtemp(dir=OUT))
    lib = work / "lib"
    try:
        t, f = interleaved(lambda: watch_once(home, lib), lambda: floor_read(files), args.repeat)
        print(
            f"watch --once   {t:7.2f} s {mb / t:5.0f} MB/s   floor {f:6.2f} s   ratio {t / f:5.2f}x"
        )
        fts = work / "fts5.sqlite"
        chars = 0

        def base() -> None:
            nonlocal chars
            chars = fts5_build(lib, fts)

        t, f = interleaved(lambda: recall_build(lib), base, args.repeat)
        from regista.store.recall import INDEX_NAME, RecallIndex

        ours = _size(lib / INDEX_NAME)
        theirs = _size(fts)
        traces = sum(p.stat().st_size for p in lib.rglob("*.jsonl") if ".sources" not in p.parts)
        print(
            f"recall index   {t:7.2f} s  vs FTS5 {f:6.2f} s   time ratio {t / f:5.2f}x   "
            f"size {ours / 1e6:6.1f} MB vs {theirs / 1e6:6.1f} MB: ratio {ours / theirs:5.2f}x"
        )
        print(
            f"               text indexed: {chars / 1e6:.1f} M characters of "
            f"{traces / 1e6:.0f} MB of traces"
        )
        words = request_only_words(home)
        with RecallIndex(lib) as index:
            index.update()
            found = []
            for w in words:
                grep = sum(
                    1 for p in lib.glob("claude-code/*.jsonl") if w.encode() in p.read_bytes()
                )
                hits = len(index.search(w, limit=1000))
                found.append((w, grep, hits))
        print("request-only words (runs found by grep / by recall):")
        print("  " + ", ".join(f"{w} {g}/{h}" for w, g, h in found))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
