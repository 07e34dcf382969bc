"""Recall: the FTS5 index beside the traces, updated incrementally, shared, self-healing."""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from library import Library

from regista.cli.main import main
from regista.errors import UserError
from regista.store.recall import INDEX_NAME, LAYOUT, RecallIndex, fingerprint, recall
from regista.trace.reader import Trace

ROOT = Path(__file__).resolve().parents[2]


def contents(index: RecallIndex) -> list[Any]:
    """Everything the index holds, by file path (ids differ between builds)."""
    runs = index.db.execute(
        "SELECT id, path, session_id, outcome, ok, steps, skeleton, skipped FROM runs"
    ).fetchall()
    out = []
    for rid, path, sid, outcome, ok, steps, skeleton, skipped in runs:
        texts = sorted(
            index.db.execute("SELECT step, body FROM steps WHERE run_id = ?", (rid,)).fetchall()
        )
        body = index.db.execute("SELECT body FROM runs_fts WHERE rowid = ?", (rid,)).fetchone()
        out.append((path, sid, outcome, ok, steps, skeleton, skipped is not None, texts, body))
    return sorted(out)


def fresh_contents(folder: Path, tmp: Path) -> list[Any]:
    tmp.mkdir(parents=True, exist_ok=True)
    with RecallIndex(folder, tmp / "fresh.sqlite") as fresh:
        fresh.update()
        return contents(fresh)


async def test_recall_finds_runs_successful_first(lib: Library) -> None:
    hits = recall("database", lib.folder)
    assert [h.path for h in hits] == [lib.failed]
    hit = hits[0]
    assert not hit.ok and hit.outcome == "max_turns"
    assert hit.skeleton == ["flaky!", "flaky!"]
    assert hit.skeleton_text() == "flaky! ×2 → max_turns"
    assert any("[database]" in snippet for _, snippet in hit.matches)
    hits = recall("picnic", lib.folder)
    assert {h.path for h in hits} == {lib.original, lib.replayed, lib.forked, lib.rewound}
    assert [h.ok for h in hits] == sorted((h.ok for h in hits), reverse=True)
    orig = next(h for h in hits if h.path == lib.original)
    assert orig.skeleton == ["get_weather", "get_forecast"]
    assert -1 in [s for s, _ in orig.matches]  # the task says Paris
    # words spread over different steps still find the run; no run has them all: any word
    assert {h.path for h in recall("Thunderstorms picnic", lib.folder)} == {lib.forked}
    assert recall("Thunderstorms Lisbon", lib.folder)  # no run has both: runs with either
    assert recall("zzzyzx", lib.folder) == []


async def test_update_reads_only_what_changed(lib: Library, tmp_path: Path) -> None:
    with RecallIndex(lib.folder) as index:
        first = index.update()
        assert first.added == 7 and first.unchanged == 0
        again = index.update()
        assert (again.added, again.appended, again.removed, again.unchanged) == (0, 0, 0, 7)
        # a trace that grows: only its new lines are read
        growing = lib.folder / "growing.jsonl"
        lines = lib.original.read_bytes().splitlines(keepends=True)
        growing.write_bytes(b"".join(lines[:3]))
        assert index.update().added == 1
        with growing.open("ab") as f:
            f.write(b"".join(lines[3:]) + b'{"schema_version":1,"half')
        st = index.update()
        assert (st.added, st.appended) == (0, 1)
        with growing.open("ab") as f:
            f.write(b'-written": 1}\n')
        assert index.update().appended == 1
        # deleted, rewritten
        lib.replayed.unlink()
        lib.forked.write_bytes(lib.failed.read_bytes())
        st = index.update()
        assert st.removed == 1 and st.added == 1
        assert contents(index) == fresh_contents(lib.folder, tmp_path)


async def test_a_damaged_index_is_rebuilt(lib: Library) -> None:
    expected = [h.path for h in recall("Paris", lib.folder)]
    db = lib.folder / INDEX_NAME
    for damage in (b"not a database at all" * 100, b"SQLite format 3\x00" + os.urandom(4000)):
        db.write_bytes(damage)
        for suffix in ("-wal", "-shm"):
            Path(f"{db}{suffix}").unlink(missing_ok=True)
        with RecallIndex(lib.folder) as index:
            assert index.update().rebuilt
            assert [h.path for h in index.search("Paris")] == expected


async def test_concurrent_updaters_and_a_writer_never_double_index(
    lib: Library, tmp_path: Path
) -> None:
    """Three processes update the same index while traces are copied in and grow."""
    for i in range(20):
        shutil.copy(lib.original, lib.folder / f"copy{i}.jsonl")
    code = (
        "import sys; from regista.store.recall import RecallIndex\n"
        "for _ in range(15):\n"
        "    with RecallIndex(sys.argv[1]) as ix: ix.update(); ix.search('Paris')\n"
    )
    procs = [
        subprocess.Popen([sys.executable, "-c", code, str(lib.folder)], cwd=ROOT) for _ in range(3)
    ]
    lines = lib.failed.read_bytes().splitlines(keepends=True)
    for i in range(10):  # a writer appends meanwhile
        with (lib.folder / "live.jsonl").open("ab") as f:
            f.write(b"".join(lines[i * len(lines) // 10 : (i + 1) * len(lines) // 10]))
        shutil.copy(lib.forked, lib.folder / f"late{i}.jsonl")
    assert [p.wait(timeout=120) for p in procs] == [0, 0, 0]
    with RecallIndex(lib.folder) as index:
        index.update()
        assert contents(index) == fresh_contents(lib.folder, tmp_path)


async def test_kill_9_while_building_leaves_a_usable_index(lib: Library, tmp_path: Path) -> None:
    for i in range(400):
        shutil.copy(lib.original if i % 2 else lib.forked, lib.folder / f"c{i}.jsonl")
    code = (
        "import sys; from regista.store.recall import RecallIndex\n"
        "RecallIndex(sys.argv[1]).update()"
    )
    proc = subprocess.Popen([sys.executable, "-c", code, str(lib.folder)], cwd=ROOT)
    db = lib.folder / INDEX_NAME
    deadline = time.monotonic() + 60
    while proc.poll() is None and time.monotonic() < deadline:  # wait for a first commit
        if Path(f"{db}-wal").exists() and Path(f"{db}-wal").stat().st_size > 100_000:
            break
        time.sleep(0.01)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    with RecallIndex(lib.folder) as index:
        index.update()
        assert contents(index) == fresh_contents(lib.folder, tmp_path)


async def test_fuzz_index_over_damaged_traces(lib: Library, tmp_path: Path) -> None:
    """Seeded: whatever the traces hold, however they are rewritten or grown, update and
    search neither raise nor lose runs, and the index holds what a fresh one would.

    ``REGISTA_FUZZ_SEED`` (first seed, default 1), ``REGISTA_FUZZ_SEEDS`` (how many,
    default 16), ``REGISTA_FUZZ_CASES`` (files written per seed, default 60).
    """
    first = int(os.environ.get("REGISTA_FUZZ_SEED", "1"))
    seeds = int(os.environ.get("REGISTA_FUZZ_SEEDS", "16"))
    n = int(os.environ.get("REGISTA_FUZZ_CASES", "60"))
    sources = [p.read_bytes() for p in (lib.original, lib.forked, lib.failed)]
    for seed in range(first, first + seeds):
        rng = random.Random(seed)
        folder = tmp_path / f"fuzz{seed}"
        folder.mkdir()
        with RecallIndex(folder) as index:
            for case in range(n):
                data = bytearray(rng.choice(sources))
                for _ in range(rng.randint(1, 5)):
                    i = rng.randrange(len(data) + 1)
                    op = rng.randrange(4)
                    if op == 0:
                        data[i:i] = rng.choice([b"\n", b"\xff\xfe", b'"type":"tool.call"', b"{"])
                    elif op == 1:
                        del data[i : i + rng.randint(1, 300)]
                    elif op == 2:
                        data = data[:i]
                    else:
                        data[i:i] = b'"step":' + str(rng.randint(-5, 10**12)).encode()
                target = folder / f"f{case % 7}.jsonl"
                if rng.random() < 0.3 and target.exists():
                    with target.open("ab") as f:  # grow, as a live trace would
                        f.write(bytes(data[: rng.randint(0, 400)]))
                else:
                    target.write_bytes(bytes(data))
                index.update()
                index.search(rng.choice(["Paris", "weather flaky", '"quoted" AND OR', "NEAR(x"]))
            assert contents(index) == fresh_contents(folder, tmp_path / f"fresh{seed}"), seed


async def test_a_trace_rewritten_in_place_with_the_same_start_is_read_whole(
    lib: Library, tmp_path: Path
) -> None:
    """Same inode, same first bytes, longer: not an append of the old text."""
    trace = lib.folder / "rewritten.jsonl"
    lines = lib.original.read_bytes().splitlines(keepends=True)
    trace.write_bytes(b"".join(lines))
    with RecallIndex(lib.folder) as index:
        index.update()
        assert {h.path for h in index.search("Paris")} >= {trace}
        # the same start, then the failed run's steps: longer than what was indexed
        other = lib.failed.read_bytes().splitlines(keepends=True)[1:]
        ino = trace.stat().st_ino
        with trace.open("r+b") as f:
            f.write(lines[0] + b"".join(other) + b"".join(lines[1:3]))
            f.truncate()
        assert trace.stat().st_ino == ino and trace.stat().st_size > sum(map(len, lines))
        st = index.update()
        assert (st.added, st.appended) == (1, 0)
        assert contents(index) == fresh_contents(lib.folder, tmp_path)
        # a real append after that is still read from where the look stopped
        with trace.open("ab") as f:
            f.write(b"".join(lines[3:]))
        assert index.update().appended == 1
        assert contents(index) == fresh_contents(lib.folder, tmp_path / "again")


def test_fingerprint_of_a_long_prefix_sees_moved_bytes() -> None:
    rng = random.Random(5)
    data = rng.randbytes(5_000_000)

    def fp(b: bytes, n: int) -> bytes:
        return fingerprint(lambda pos, k: b[pos : pos + k], n)

    base = fp(data, 4_000_000)
    assert fp(data + b"more", 4_000_000) == base  # what follows the prefix is not in it
    assert fp(data, 4_000_001) != base
    for at in (0, 1_000, 2_000_000, 3_999_999):
        assert fp(data[:at] + b"x" + data[at:], 4_000_000) != base
        assert fp(data[:at] + data[at + 1 :], 4_000_000) != base
    assert fp(data[:64] + b"x" + data[65:], 100) != fp(data, 100)  # short: whole


async def test_an_index_of_an_older_layout_is_rebuilt(lib: Library) -> None:
    """An index written before the tables changed (no fingerprint columns) is rebuilt."""
    db = sqlite3.connect(lib.folder / INDEX_NAME)
    db.executescript(
        "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT);"
        "INSERT INTO meta VALUES ('layout', '3');"
        "CREATE TABLE runs(id INTEGER PRIMARY KEY, path TEXT UNIQUE NOT NULL, size INTEGER, "
        "mtime_ns INTEGER, indexed INTEGER, head BLOB, session_id TEXT, task TEXT, "
        "started TEXT, outcome TEXT, ok INTEGER, steps INTEGER, cost REAL, skeleton TEXT, "
        "body_len INTEGER, skipped TEXT);"
    )
    db.close()
    assert LAYOUT != "3"
    with RecallIndex(lib.folder) as index:
        assert index.rebuilt
        assert index.update().added == 7
        assert [h.path for h in index.search("database")] == [lib.failed]


async def test_every_word_is_searched_for(
    lib: Library, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``regista recall flaky database`` in a folder that holds a ``database`` folder: both
    words are the query (the last one was read as the traces folder)."""
    monkeypatch.chdir(lib.folder.parent)
    (lib.folder.parent / "database").mkdir()
    assert main(["recall", "flaky", "database", "--dir", str(lib.folder)]) == 0
    assert Trace.load(lib.failed).session_id in capsys.readouterr().out
    assert main(["recall", "nothing-like-this", str(lib.folder), "--dir", str(lib.folder)]) == 0
    out = capsys.readouterr().out  # a folder given as a word, as the command once took it
    assert "no runs mention" in out and f"the runs of {lib.folder}: --dir" in out
    assert main(["recall", "database", str(lib.folder)]) == 2  # and no traces folder here
    err = capsys.readouterr().err.strip()
    assert err.startswith("regista: ") and f"the runs of {lib.folder}: --dir" in err


async def test_cli(lib: Library, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["recall", "database", "--dir", str(lib.folder)]) == 0
    printed = capsys.readouterr().out
    assert "✗ " + Trace.load(lib.failed).session_id in printed
    assert "path: flaky! ×2 → max_turns" in printed
    assert main(["recall", "Paris", "--dir", str(lib.folder), "--json", "--limit", "2"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert len(rows) == 2 and rows[0]["ok"] and rows[0]["matches"]
    assert main(["recall", "nothing-like-this", "--dir", str(lib.folder)]) == 0
    assert "no runs mention" in capsys.readouterr().out
    assert main(["recall", "  ", "--dir", str(lib.folder)]) == 2
    assert main(["recall", "x", "--dir", str(lib.folder / "nope")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and all(e.startswith("regista: ") for e in err)
    with pytest.raises(UserError):
        recall("!!!", lib.folder)


@pytest.mark.parametrize("first_relative", [True, False])
async def test_a_relative_and_an_absolute_folder_share_one_index(
    lib: Library, monkeypatch: pytest.MonkeyPatch, first_relative: bool
) -> None:
    """The CLI names the folder relatively, MCP absolutely: whichever comes second re-indexes
    nothing and finds the same runs."""
    monkeypatch.chdir(lib.folder.parent)
    relative, absolute = Path(lib.folder.name), lib.folder.resolve()
    first, second = (relative, absolute) if first_relative else (absolute, relative)
    with RecallIndex(first) as index:
        stats = index.update()
        assert stats.added == 7
        found = {h.path.resolve() for h in index.search("Paris")}
    with RecallIndex(second) as index:
        stats = index.update()
        assert (stats.added, stats.appended, stats.removed, stats.unchanged) == (0, 0, 0, 7)
        assert not stats.rebuilt
        hits = index.search("Paris")
        assert {h.path.resolve() for h in hits} == found
        # a hit's path is the trace as this caller named the folder
        assert all(h.path.is_absolute() == second.is_absolute() for h in hits)
        assert all(h.path.is_file() for h in hits)


async def test_an_index_that_kept_paths_as_given_is_rebuilt_once(lib: Library) -> None:
    """An index of the layout before paths were kept relative to the folder is rebuilt
    (not an error), once."""
    with RecallIndex(lib.folder) as index:
        index.update()
        index.db.execute("UPDATE meta SET value = '5' WHERE key = 'layout'")
        index.db.execute("UPDATE runs SET path = ? || '/' || path", (str(lib.folder),))
    with RecallIndex(lib.folder) as index:
        assert index.rebuilt
        assert index.update().added == 7
    with RecallIndex(lib.folder) as index:
        assert not index.rebuilt
        assert index.update().added == 0


async def test_a_project_s_imports_share_the_index_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``.regista/traces`` named relatively or absolutely: its imports (outside the traces
    folder) are kept under one key as well."""
    from library import build_library

    lib = await build_library(tmp_path / "p" / ".regista" / "traces")
    imports = lib.folder.parent / "imports"
    imports.mkdir()
    lib.failed.rename(imports / lib.failed.name)
    monkeypatch.chdir(tmp_path / "p")
    with RecallIndex(Path(".regista/traces")) as index:
        assert index.update().added == 7
        (hit,) = index.search("database")
        assert hit.path.resolve() == (imports / lib.failed.name).resolve()
    with RecallIndex(lib.folder.resolve()) as index:
        stats = index.update()
        assert (stats.added, stats.removed, stats.unchanged) == (0, 0, 7)
        assert [h.path.resolve() for h in index.search("database")] == [hit.path.resolve()]
