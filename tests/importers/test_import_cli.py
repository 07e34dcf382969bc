"""Opening transcripts directly (show, diff, export, the debugger) and ``regista import``."""

from __future__ import annotations

from pathlib import Path

import pytest
from tui.waits import settle

from regista.cli.main import main
from regista_tui.__main__ import open_index
from regista_tui.app import RegistaApp

from .cc_fixtures import basic_session


def _listing(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


@pytest.fixture
def projects(tmp_path: Path) -> Path:
    root = tmp_path / "claude" / "projects"
    basic_session().write(root / "-home-ann-projects-shop" / "4f1c2a9e.jsonl")
    other = basic_session()
    other.session_id = "9a8b7c6d-0000-4000-8000-000000000001"
    other.lines = [{**ln, "sessionId": other.session_id} for ln in other.lines]
    other.write(root / "-home-ann-projects-docs" / "9a8b7c6d.jsonl")
    return root


def test_show_diff_export_open_a_transcript_and_write_nothing(
    projects: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = _listing(projects)
    a, b = sorted(projects.rglob("*.jsonl"))
    assert main(["show", str(a)]) == 0
    out = capsys.readouterr().out
    assert "The refund test fails" in out and "Bash" in out
    assert main(["diff", str(a), str(b)]) in (0, 1)
    assert "Traceback" not in capsys.readouterr().err
    assert main(["export", "--console", str(a)]) == 0
    assert "Bash" in capsys.readouterr().out
    assert _listing(projects) == before


def test_import_is_idempotent(
    projects: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = _listing(projects)
    out_dir = tmp_path / "traces"
    assert main(["import", "claude-code", str(projects), "--trace-dir", str(out_dir)]) == 0
    first = _listing(out_dir)
    assert len(first) == 2
    assert "imported 2 session(s) as 2 trace(s)" in capsys.readouterr().out
    assert main(["import", "claude-code", str(projects), "--trace-dir", str(out_dir)]) == 0
    assert _listing(out_dir) == first
    assert _listing(projects) == before
    for name in first:
        assert main(["show", str(out_dir / name)]) == 0


def test_import_bad_paths_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["import", "claude-code", str(tmp_path / "nope")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no such file or folder" in err
    assert main(["import", "claude-code", str(tmp_path)]) == 2
    assert "no claude-code sessions" in capsys.readouterr().err


async def test_debugger_opens_a_transcript_in_memory(projects: Path) -> None:
    before = _listing(projects)
    path = sorted(projects.rglob("*.jsonl"))[0]
    lines = path.read_bytes().split(b"\n")
    lines.insert(3, b"not json")
    path.write_bytes(b"\n".join(lines))
    before = _listing(projects)
    index, notice = open_index(path)
    assert index.path == path
    assert "4: skipped: not valid JSON" in notice
    app = RegistaApp(index, notice=notice, settle_s=0)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        assert len(index.steps) == 6
        await pilot.press("j")
        await settle(pilot)
    assert _listing(projects) == before


def test_import_codex_sessions_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from .codex_fixtures import basic_rollout

    root = tmp_path / "codex" / "sessions"
    basic_rollout().write(root / "2026" / "02" / "11" / "rollout-2026-02-11T08-27-22-019b.jsonl")
    out_dir = tmp_path / "traces"
    assert main(["import", "codex", str(root), "--trace-dir", str(out_dir)]) == 0
    first = _listing(out_dir)
    assert main(["import", "codex", str(root), "--trace-dir", str(out_dir)]) == 0
    assert _listing(out_dir) == first and len(first) == 1
    capsys.readouterr()
    rollout = next(root.rglob("*.jsonl"))
    assert main(["show", str(rollout)]) == 0
    assert "apply_patch" in capsys.readouterr().out


def test_a_file_of_another_format_is_one_line_and_nothing_is_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from .codex_fixtures import basic_rollout

    rollout = basic_rollout().write(tmp_path / "codex" / "rollout-2026-02-11T08-27-22-019b.jsonl")
    transcript = basic_session().write(tmp_path / "claude" / "4f1c2a9e.jsonl")
    out_dir = tmp_path / "traces"
    cases = (("claude-code", rollout, "codex"), ("codex", transcript, "claude-code"))
    for fmt, path, found in cases:
        assert main(["import", fmt, str(transcript), str(path), "--trace-dir", str(out_dir)]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and f"{path} holds a {found} session" in err
        assert f"regista import {found} {path}" in err
        assert not out_dir.exists()  # checked before anything was written


def test_a_folder_walk_skips_files_of_another_format(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from .codex_fixtures import basic_rollout

    root = tmp_path / "projects"
    basic_session().write(root / "-home-ann-shop" / "4f1c2a9e.jsonl")
    basic_rollout().write(root / "-home-ann-shop" / "stray.jsonl")
    out_dir = tmp_path / "traces"
    assert main(["import", "claude-code", str(root), "--trace-dir", str(out_dir)]) == 0
    out = capsys.readouterr().out
    assert "skipped 1 file(s) that hold no claude-code session" in out
    assert len(list(out_dir.iterdir())) == 1


def test_a_named_file_with_no_session_is_one_line_and_a_damaged_start_still_imports(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out_dir = tmp_path / "traces"
    for name, data in (("empty.jsonl", b""), ("notes.jsonl", b"garbage\n{}\n[1, 2]\n")):
        path = tmp_path / name
        path.write_bytes(data)
        assert main(["import", "claude-code", str(path), "--trace-dir", str(out_dir)]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "holds no claude-code session: nothing to import" in err
    assert not out_dir.exists()
    damaged = tmp_path / "damaged.jsonl"
    session = basic_session().write(tmp_path / "s.jsonl").read_bytes()
    damaged.write_bytes(b"not json\n" * 30 + session)
    assert main(["import", "claude-code", str(damaged), "--trace-dir", str(out_dir)]) == 0
    out = capsys.readouterr().out
    assert "(6 steps)" in out and "damaged.jsonl:30: skipped: not valid JSON" in out


@pytest.mark.parametrize("mode", [[], ["--mode", "loose"], ["--mode", "hybrid"]])
def test_replay_of_an_imported_run_without_a_command_says_what_it_needs(
    projects: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], mode: list[str]
) -> None:
    """The harness replays runs of regista's own loop; an imported session is replayed to
    its own client (``-- CMD``) or served (``regista serve``): said, and no run written."""
    transcript = sorted(projects.rglob("*.jsonl"))[0]
    out_dir = tmp_path / "replays"
    assert main(["import", "claude-code", str(transcript), "--trace-dir", str(out_dir)]) == 0
    (imported,) = out_dir.glob("*.jsonl")
    capsys.readouterr()
    for path in (transcript, imported):
        code = main(["replay", str(path), *mode, "--trace-dir", str(out_dir / "new")])
        captured = capsys.readouterr()
        assert code == 2, captured
        err = captured.err.strip()
        assert len(err.splitlines()) == 1 and "Traceback" not in err
        assert "-- CMD" in err and "regista serve" in err and "Claude Code" in err
        assert "replayed:" not in captured.out
        assert not (out_dir / "new").exists()
