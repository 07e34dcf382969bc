"""The library: `regista watch` keeps a fake home's Claude Code and Codex sessions."""

from __future__ import annotations

import os
import time
from pathlib import Path

import orjson
import pytest
from home import FLAT, NESTED, REQUEST_ONLY, grow, make_home

from regista.cli.main import main
from regista.store.library import (
    SOURCES_DIR,
    STATE_NAME,
    Library,
    LibraryBusy,
    Root,
    default_roots,
)
from regista.store.recall import recall
from regista.store.runs import list_runs
from regista.trace.reader import Trace


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    h = tmp_path / "home"
    make_home(h)
    monkeypatch.setenv("HOME", str(h))
    for var in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "REGISTA_LIBRARY", "XDG_DATA_HOME"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.chdir(tmp_path)
    return h


def _lib(home: Path) -> Path:
    return home / ".local" / "share" / "regista" / "library"


def _traces(lib: Path) -> dict[str, bytes]:
    return {
        f"{tool}/{p.name}": p.read_bytes()
        for tool in ("claude-code", "codex")
        if (lib / tool).is_dir()
        for p in sorted((lib / tool).glob("*.jsonl"))
    }


def _sync(home: Path, **kw: object) -> tuple[Library, object]:
    lib = Library(_lib(home), default_roots())
    try:
        stats = lib.sync(**kw)  # type: ignore[arg-type]
    finally:
        lib.close()
    return lib, stats


def test_watch_once_imports_every_session_with_its_subagents_linked(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["watch", "--once"]) == 0
    out = capsys.readouterr().out
    assert "4 session(s) at the sources; imported 4 (7 trace(s)" in out
    traces = _traces(_lib(home))
    assert len(traces) == 7  # 3 Claude Code sessions + 2 subagents, 1 Codex + its subagent
    runs = list_runs(_lib(home)).runs
    by_id = {r.session_id: r for r in runs}
    children = [r for r in runs if r.task == "Search the code for refund computations"]
    assert len(children) == 3  # nested, flat and Codex subagents
    for child in children:
        start = Trace.load(child.path).events[0]
        parent = start.metadata["parent"]
        assert parent["session_id"] in by_id and parent["step"] >= 0
    # a copy of every source file, subagents' included
    sources = {p.name for p in (_lib(home) / SOURCES_DIR).rglob("*.jsonl")}
    assert {f"{NESTED}.jsonl", f"{FLAT}.jsonl", "agent-a1b2c3d4.jsonl"} <= sources
    assert "agent-e5f6a7b8.jsonl" in sources and len(sources) == 7


def test_a_second_pass_imports_nothing_and_rewrites_nothing(home: Path) -> None:
    _sync(home)
    before = {p: p.stat().st_mtime_ns for p in _lib(home).rglob("*.jsonl")}
    _, stats = _sync(home)
    assert stats.imported == 0 and stats.unchanged == 4  # type: ignore[attr-defined]
    assert {p: p.stat().st_mtime_ns for p in _lib(home).rglob("*.jsonl")} == before


def test_a_grown_session_is_imported_again(home: Path) -> None:
    files = make_home(home.parent / "other")  # the same names, to find the files
    path = home / files["basic"].relative_to(home.parent / "other")
    _sync(home)
    first = {r.session_id: r.steps for r in list_runs(_lib(home)).runs}
    grow(path, "now check the invoices")
    _, stats = _sync(home)
    assert stats.imported == 1  # type: ignore[attr-defined]
    after = {r.session_id: r.steps for r in list_runs(_lib(home)).runs}
    assert after.keys() == first.keys()  # the same run, replaced
    grown = [sid for sid in after if after[sid] != first[sid]]
    assert len(grown) == 1 and after[grown[0]] == first[grown[0]] + 1  # type: ignore[operator]


def test_a_grown_subagent_file_imports_its_session_again(home: Path) -> None:
    _sync(home)
    agent = next((home / ".claude").rglob("agent-a1b2c3d4.jsonl"))
    with open(agent, "ab") as f:
        f.write(b"\n")  # a blank line: the same runs, a changed file
    lib = Library(_lib(home), default_roots())
    try:
        lines: list[str] = []
        stats = lib.sync(log=lines.append)
    finally:
        lib.close()
    assert stats.imported == 1
    assert lines[0].startswith(str(agent.parent.parent.parent / f"{NESTED}.jsonl"))


def test_the_library_survives_the_source_folder_being_emptied(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["watch", "--once"]) == 0
    before = _traces(_lib(home))
    projects = home / ".claude" / "projects"
    for p in sorted(projects.rglob("*"), reverse=True):
        p.rmdir() if p.is_dir() else p.unlink()
    assert not any(projects.iterdir())
    capsys.readouterr()
    assert main(["watch", "--once"]) == 0
    assert "3 deleted at the source (kept)" in capsys.readouterr().out
    assert _traces(_lib(home)) == before  # every trace, byte for byte
    # the sources' bytes are kept too (a hard link or a copy)
    kept = sorted((_lib(home) / SOURCES_DIR / "claude-code").rglob("*.jsonl"))
    assert len(kept) == 5 and all(p.stat().st_size > 0 for p in kept)
    hits = recall(REQUEST_ONLY, _lib(home))
    assert len(hits) == 2
    # doctor says what the library holds that the source no longer does
    assert main(["doctor", "--json"]) == 0
    report = orjson.loads(capsys.readouterr().out)
    gone = report["library"]["kept_after_source_deleted"]
    assert len(gone) == 3 and {g["tool"] for g in gone} == {"claude-code"}
    assert report["library"]["kept_source_bytes"] > 0


def test_doctor_reports_the_retention_and_sessions_about_to_be_deleted(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (home / ".claude" / "settings.json").write_bytes(b'{"cleanupPeriodDays": 7}')
    old = next((home / ".claude" / "projects").rglob(f"{FLAT}.jsonl"))
    week = time.time() - 6 * 86400
    os.utime(old, (week, week))
    assert main(["doctor"]) == 0
    out = capsys.readouterr().out
    assert "cleanupPeriodDays = 7 in ~/.claude/settings.json" in out
    assert "1 will be deleted by Claude Code within 3 days and are not in the library" in out
    assert str(old) in out
    assert "not made yet: regista watch --once makes it" in out
    main(["watch", "--once"])
    capsys.readouterr()
    assert main(["doctor"]) == 0
    out = capsys.readouterr().out
    assert "will be deleted" not in out  # the library holds it now
    assert "4 session(s) as 7 trace(s)" in out
    assert "nothing that the sources no longer have" in out


@pytest.mark.parametrize(
    ("settings", "said"),
    [
        (None, "cleanupPeriodDays is not set in ~/.claude/settings.json: the default, 30 days"),
        (b'{"cleanupPeriodDays": 0}', "Claude Code keeps no transcripts"),
        (b"{not json", "not valid JSON; Claude Code's default applies"),
        (b'{"cleanupPeriodDays": "soon"}', "cleanupPeriodDays is 'soon', not a number of days"),
        (b"[1, 2]", "cleanupPeriodDays is not set"),
    ],
)
def test_doctor_reads_any_settings_file(
    home: Path, settings: bytes | None, said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    if settings is not None:
        (home / ".claude" / "settings.json").write_bytes(settings)
    assert main(["doctor"]) == 0
    assert said in capsys.readouterr().out


def test_claude_config_dir_and_codex_home_are_honoured(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (home / ".claude").rename(tmp_path / "cc")
    (home / ".codex").rename(tmp_path / "cx")
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "cc"))
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "cx"))
    monkeypatch.setenv("REGISTA_LIBRARY", str(tmp_path / "lib"))
    assert main(["watch", "--once"]) == 0
    assert len(_traces(tmp_path / "lib")) == 7


def test_recall_finds_a_word_that_only_a_request_holds(home: Path) -> None:
    """Regression: a prompt typed after the first is only in the next model request; the
    index left requests out and found no run."""
    _sync(home)
    hits = recall(REQUEST_ONLY, _lib(home))
    assert len(hits) == 2
    assert all(any(REQUEST_ONLY in snippet for _, snippet in h.matches) for h in hits)


def test_recall_finds_a_word_past_the_start_of_a_long_tool_result(tmp_path: Path) -> None:
    """Regression: only an event's first 2,000 characters were indexed."""
    from importers.cc_fixtures import CCSession, text, tool_use

    s = CCSession()
    s.prompt("Read the log")
    s.answer(tool_use("toolu_L", "Read", file_path="/var/log/app.log"))
    s.tool_result("toolu_L", "line of the log\n" * 2000 + "the culprit is flibbertigibbet\n")
    s.answer(text("Found it."), stop_reason="end_turn")
    s.write(tmp_path / "p" / "x" / f"{s.session_id}.jsonl")
    lib = Library(tmp_path / "lib", [Root.of("claude-code", tmp_path / "p")])
    lib.sync()
    lib.close()
    hits = recall("flibbertigibbet", tmp_path / "lib")
    assert len(hits) == 1
    assert hits[0].matches and "[flibbertigibbet]" in hits[0].matches[0][1]


def test_runs_and_recall_read_the_library_by_default(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    main(["watch", "--once"])
    capsys.readouterr()
    assert main(["runs"]) == 0  # no .regista/ here: the library
    assert len(capsys.readouterr().out.splitlines()) == 8
    assert main(["recall", REQUEST_ONLY]) == 0
    assert capsys.readouterr().out.count(f"[{REQUEST_ONLY}]") == 2
    assert main(["runs", "--library", "--json"]) == 0
    assert len(orjson.loads(capsys.readouterr().out)) == 7


def test_a_session_that_keeps_growing_waits_its_turn(home: Path) -> None:
    """An import costs at most a tenth of the time: a session whose last import took 1 s is
    not imported again within 10 s."""
    _sync(home)
    lib = Library(_lib(home), default_roots())
    try:
        lib.db.execute("UPDATE sessions SET import_s = 1.0, imported_at = 1000.0")
        basic = next((home / ".claude" / "projects").rglob("4f1c*.jsonl"))
        grow(basic, "and the taxes")
        stats = lib.sync(throttle=True, now=lambda: 1005.0)
        assert (stats.imported, stats.waiting) == (0, 1)
        stats = lib.sync(throttle=True, now=lambda: 1011.0)
        assert (stats.imported, stats.waiting) == (1, 0)
    finally:
        lib.close()


def test_a_copy_is_kept_where_a_hard_link_cannot_be_made(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another file system (EXDEV): the source is copied, then extended as it grows."""

    def no_link(*_: object) -> None:
        raise OSError(18, "Invalid cross-device link")

    monkeypatch.setattr(os, "link", no_link)
    _sync(home)
    basic = next((home / ".claude" / "projects").rglob("4f1c*.jsonl"))
    copy = (
        _lib(home)
        / SOURCES_DIR
        / "claude-code"
        / "projects"
        / basic.relative_to(home / ".claude" / "projects")
    )
    assert copy.read_bytes() == basic.read_bytes()
    assert copy.stat().st_ino != basic.stat().st_ino
    grow(basic, "one more thing")
    _sync(home)
    assert copy.read_bytes() == basic.read_bytes()
    basic.unlink()
    _sync(home)
    assert copy.is_file()


def test_one_watch_per_library(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with Library(_lib(home), default_roots()), pytest.raises(LibraryBusy):
        Library(_lib(home), default_roots())
    with Library(_lib(home), default_roots()):
        assert main(["watch", "--once"]) == 2
        assert "already kept by another regista watch (pid " in capsys.readouterr().err


def test_a_session_that_cannot_be_imported_is_said_and_not_retried(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = home / ".claude" / "projects" / "-tmp" / "b2c3d4e5-0000-4000-8000-000000000000.jsonl"
    bad.parent.mkdir()
    bad.write_bytes(b"not a transcript\n")
    lines: list[str] = []
    lib = Library(_lib(home), default_roots())
    try:
        first = lib.sync(log=lines.append)
        again = lib.sync()
    finally:
        lib.close()
    assert (first.imported, first.failed) == (4, 1)
    assert f"could not import {bad}: holds no claude-code session" in lines
    assert again.imported == again.failed == 0
    assert (_lib(home) / STATE_NAME).is_file()


def test_a_codex_subagent_rollout_that_appears_later_joins_its_parent(home: Path) -> None:
    """The parent rollout is imported first, alone; its subagent's rollout, written after,
    makes the parent import again with the subagent linked (not as a run of its own)."""
    child = next((home / ".codex").rglob("rollout-*019b64e6*.jsonl"))
    data = child.read_bytes()
    child.unlink()
    _sync(home)
    assert len(list((_lib(home) / "codex").glob("*.jsonl"))) == 1
    child.write_bytes(data)
    lib = Library(_lib(home), default_roots())
    try:
        lines: list[str] = []
        stats = lib.sync(log=lines.append)
    finally:
        lib.close()
    assert stats.imported == 1 and "+ 1 subagent run(s)" in lines[0]
    assert lines[0].startswith(str(next((home / ".codex").rglob("rollout-*019b64e5*.jsonl"))))
    assert len(list((_lib(home) / "codex").glob("*.jsonl"))) == 2


def test_the_first_pass_shows_a_progress_bar_on_a_terminal(
    home: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import sys

    seen: list[tuple[int, int]] = []
    real = Library.sync

    def sync(self: Library, **kw: object) -> object:
        progress = kw.get("progress")
        assert callable(progress)  # a terminal gets the bar

        def spy(done: int, total: int, path: str) -> None:
            seen.append((done, total))
            progress(done, total, path)

        kw["progress"] = spy
        return real(self, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    monkeypatch.setattr(Library, "sync", sync)
    assert main(["watch", "--once", "-v"]) == 0
    total = sum(p.stat().st_size for p in (home / ".claude").rglob("*.jsonl")) + sum(
        p.stat().st_size for p in (home / ".codex").rglob("*.jsonl")
    )
    assert seen[0] == (0, total) and seen[-1] == (total, total)
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)
    assert "4 session(s) at the sources; imported 4" in capsys.readouterr().out


def test_a_rollout_moved_to_archived_sessions_is_not_reported_lost(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    main(["watch", "--once"])
    parent = next((home / ".codex" / "sessions").rglob("rollout-*019b64e5*.jsonl"))
    archived = home / ".codex" / "archived_sessions"
    archived.mkdir()
    parent.rename(archived / parent.name)
    assert main(["watch", "--once"]) == 0
    capsys.readouterr()
    assert main(["doctor", "--json"]) == 0
    report = orjson.loads(capsys.readouterr().out)
    assert report["library"]["kept_after_source_deleted"] == []
