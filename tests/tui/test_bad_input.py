"""Bad input: one clear line on stderr and a non-zero exit, or the rest shown with a notice."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from shown import text_of
from waits import settle

from regista_tui.__main__ import main, open_index
from regista_tui.app import RegistaApp


def _fails(argv: list[str], capsys: pytest.CaptureFixture[str], code: int = 1) -> str:
    """Exit 1 for a trace that cannot be read, 2 for a path that names nothing (as
    `regista`)."""
    assert main(argv) == code
    err = capsys.readouterr().err
    assert err.startswith("regista-tui: ")
    assert "Traceback" not in err
    assert err.count("\n") == 1
    return err


def test_missing_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert "no such trace file" in _fails([str(tmp_path / "nope.jsonl")], capsys, code=2)


def test_directory_to_compare(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """One folder is the run list (test_runs_screen); a folder given to compare is refused."""
    assert "is a directory" in _fails([str(tmp_path), str(tmp_path)], capsys)
    # A folder of traces (e.g. .regista/traces): the message names the newest one.
    old, new = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    old.write_text("{}\n")
    new.write_text("{}\n")
    os.utime(old, (1_000_000, 1_000_000))
    message = _fails([str(tmp_path), str(new)], capsys)
    assert f"is a directory, not a trace file (its newest trace is {new})" in message


def test_empty_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_bytes(b"")
    assert "empty trace" in _fails([str(path)], capsys)


def test_not_a_trace(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "junk.jsonl"
    path.write_bytes(b"hello world\nmore junk\n")
    assert "junk.jsonl:1" in _fails([str(path)], capsys)


def test_newer_schema(trace_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "future.jsonl"
    path.write_bytes(trace_path.read_bytes().replace(b'"schema_version":2', b'"schema_version":9'))
    assert "schema version 9" in _fails([str(path)], capsys)


def test_second_trace_of_a_comparison_is_checked(
    trace_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = [str(trace_path), str(tmp_path / "x.jsonl")]
    assert "no such trace file" in _fails(missing, capsys, code=2)


def test_three_traces(trace_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(trace_path)] * 3) == 2
    assert "one trace" in capsys.readouterr().err


async def test_truncated_last_line_opens_the_rest(trace_path: Path, tmp_path: Path) -> None:
    data = trace_path.read_bytes()
    path = tmp_path / "crashed.jsonl"
    path.write_bytes(data[: len(data) - 40])  # the session.end line is half-written
    index, notice = open_index(path)
    app = RegistaApp(index, notice=notice)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert len(index) == 8
        await pilot.press("end")
        header = str(app.screen.query_one("#header").render())
        assert header.count("half-written") == 1, header  # said once


async def test_corrupt_middle_line_is_shown_in_place(trace_path: Path, tmp_path: Path) -> None:
    lines = trace_path.read_bytes().splitlines(keepends=True)
    lines[4] = lines[4][:60] + b"#broken#" + lines[4][68:]
    path = tmp_path / "corrupt.jsonl"
    path.write_bytes(b"".join(lines))
    index, _ = open_index(path)
    app = RegistaApp(index)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("j")
        await settle(pilot)
        assert app.is_running


async def test_a_trace_with_no_steps_yet(trace_path: Path, tmp_path: Path) -> None:
    """A session that has only started: the browser opens, every key is harmless."""
    path = tmp_path / "starting.jsonl"
    path.write_bytes(trace_path.read_bytes().splitlines(keepends=True)[0])
    index, notice = open_index(path)
    assert len(index) == 0
    app = RegistaApp(index, notice=notice, settle_s=0)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert "No steps" in text_of(app, "#step-body")
        for key in ["j", "k", "end", "home", "pagedown", "x", "X", "s", "t", "b", "B"]:
            await pilot.press(key)
        for key in ["c", "C", "D", "v", "m", "n", "N", "e", "r"]:
            await pilot.press(key)
        await pilot.press("colon", "3", "enter")
        assert "There is no step 3 (no steps yet)." in text_of(app, "#status")
        await pilot.press("slash", "a", "enter")
        await settle(pilot)
        assert app.is_running
        # The first steps are written: the browser shows the first one.
        path.write_bytes(trace_path.read_bytes())
        index.scan(1 << 20)
        app.screen._grown()  # type: ignore[attr-defined]
        await pilot.press("v", "v")  # back to the step tab
        assert "Refund order A-404 please." in text_of(app, "#step-body")
