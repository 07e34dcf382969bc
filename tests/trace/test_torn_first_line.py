"""A trace whose first (and only) line is half-written is reported as torn, as every
other half-written line is: by the reader, the CLI and the debugger."""

from __future__ import annotations

from pathlib import Path

import pytest

from regista.cli.main import main
from regista.errors import TraceFormatError
from regista.trace.index import TraceIndex
from regista.trace.reader import Trace

FIRST = (
    b'{"schema_version":2,"session_id":"01KWH0WWM0T44ZZMNH9JAZYMJF","seq":0,'
    b'"ts":"2026-07-02T09:00:00.250Z","type":"session.start","task":"Find the ord'
)


@pytest.fixture()
def torn(tmp_path: Path) -> Path:
    path = tmp_path / "torn.jsonl"
    path.write_bytes(FIRST)
    return path


def test_the_reader_says_torn(torn: Path) -> None:
    with pytest.raises(TraceFormatError, match=r"torn\.jsonl:1: a half-written \(torn\) first"):
        Trace.load(torn)


def test_the_cli_says_torn(torn: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for argv in (["show", str(torn)], ["verify", str(torn)]):
        assert main(argv) != 0
        err = capsys.readouterr().err
        assert "half-written (torn) first line" in err and "not valid JSON" not in err, err
        assert err.count("\n") == 1


def test_the_index_says_torn(torn: Path) -> None:
    with pytest.raises(TraceFormatError, match="half-written"):
        TraceIndex(torn).scan()


def test_the_tui_says_torn(torn: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from regista_tui.__main__ import main as tui_main

    assert tui_main([str(torn)]) == 1
    err = capsys.readouterr().err
    assert "half-written (torn) first line" in err, err
    assert err.count("\n") == 1


def test_a_whole_bad_first_line_is_still_not_json(tmp_path: Path) -> None:
    """A first line that ends with its newline was written whole: corrupt, not torn."""
    path = tmp_path / "bad.jsonl"
    path.write_bytes(FIRST + b"\n")
    with pytest.raises(TraceFormatError, match="not valid JSON"):
        Trace.load(path)
