"""A trace given as a pipe (``<(zcat trace.jsonl.gz)``) reads as the file would, by every
reader; a device (``/dev/zero``, which never ends) is one clear error, at once."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from regista.cli.main import main
from regista.errors import TraceError
from regista.trace.index import TraceIndex
from regista.trace.reader import Trace

SAMPLES = Path(__file__).parents[2] / "sample_traces"
HAPPY = SAMPLES / "refund_happy.jsonl"
LOOP = SAMPLES / "refund_search_loop.jsonl"
ZERO = Path("/dev/zero")

Pipe = Callable[..., Path]


@pytest.fixture
def pipe(tmp_path: Path) -> Iterator[Callable[..., Path]]:
    """``pipe(data)``: a named pipe a thread writes ``data`` into (once, as a shell's
    ``<(…)`` does), and its path."""
    writers: list[threading.Thread] = []

    def make(data: bytes, name: str = "fifo") -> Path:
        path = tmp_path / name
        os.mkfifo(path)

        def write() -> None:
            with open(path, "wb") as f:
                f.write(data)

        thread = threading.Thread(target=write, daemon=True)
        thread.start()
        writers.append(thread)
        return path

    yield make
    for thread in writers:
        thread.join(timeout=5)


def test_a_piped_trace_reads_as_its_file(pipe: Pipe) -> None:
    assert Trace.load(pipe(LOOP.read_bytes(), "a")).events == Trace.load(LOOP).events
    index = TraceIndex(pipe(LOOP.read_bytes(), "b"))
    index.scan()
    whole = TraceIndex(LOOP)
    whole.scan()
    try:
        assert len(index) == len(whole) == 20
        assert [index.step_text(i) for i in range(20)] == [whole.step_text(i) for i in range(20)]
    finally:
        index.close()
        whole.close()


def test_cli_commands_read_a_pipe(pipe: Pipe, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["diff", str(HAPPY), str(LOOP)]) == 1
    from_files = capsys.readouterr().out
    a, b = pipe(HAPPY.read_bytes(), "a"), pipe(LOOP.read_bytes(), "b")
    assert main(["diff", str(a), str(b)]) == 1
    from_pipes = capsys.readouterr().out
    assert from_pipes.split("\n", 2)[2] == from_files.split("\n", 2)[2]  # the names differ
    assert main(["verify", str(pipe(LOOP.read_bytes(), "c"))]) == 0
    assert "OK: " in capsys.readouterr().out


def test_a_piped_transcript_imports(
    pipe: Pipe, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from importers.cc_fixtures import basic_session

    data = basic_session().data()
    out = tmp_path / "traces"
    assert main(["import", "claude-code", str(pipe(data)), "--trace-dir", str(out)]) == 0
    (written,) = out.glob("*.jsonl")
    source = tmp_path / "session.jsonl"
    source.write_bytes(data)
    assert main(["import", "claude-code", str(source), "--trace-dir", str(tmp_path / "b")]) == 0
    from_file = next((tmp_path / "b").glob("*.jsonl")).read_bytes()
    assert written.name.startswith(Trace.load(written).session_id[:10])
    # the same run: only the start's note of where it was imported from differs
    assert written.read_bytes().split(b"\n")[1:] == from_file.split(b"\n")[1:]


def test_the_viewer_keeps_a_pipe_it_can_read_again(pipe: Pipe) -> None:
    from regista_tui.__main__ import _spooled, open_index

    kept = _spooled(pipe(LOOP.read_bytes()))
    assert kept.read_bytes() == LOOP.read_bytes() == kept.read_bytes()  # read as often as need be
    index, notice = open_index(kept)
    index.scan()
    assert len(index) == 20 and notice == ""
    index.close()
    assert _spooled(LOOP) == LOOP


@pytest.mark.skipif(not ZERO.exists(), reason="no /dev/zero here")
def test_a_device_is_refused_at_once(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(TraceError, match="/dev/zero: is a device, not a trace file"):
        Trace.load(ZERO)
    with pytest.raises(TraceError, match="is a device"):
        TraceIndex(ZERO)
    # in processes of their own, with a time limit: a reader that tried would never end
    for argv in (
        ["-m", "regista", "show", str(ZERO)],
        ["-m", "regista", "diff", str(ZERO), str(HAPPY)],
        ["-m", "regista", "import", "claude-code", str(ZERO)],
        ["-m", "regista_tui", str(ZERO)],
    ):
        done = subprocess.run(
            [sys.executable, *argv], capture_output=True, text=True, timeout=60, check=False
        )
        assert done.returncode in (1, 2), (argv, done.stderr)  # diff: 1 is "they differ"
        assert done.stderr.strip().endswith("/dev/zero: is a device, not a trace file"), argv
        assert len(done.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize(
    ("suffix", "pack", "command"),
    [
        (".gz", "gzip", "zcat"),
        (".bz2", "bz2", "bzcat"),
        (".xz", "lzma", "xzcat"),
    ],
)
def test_a_compressed_trace_says_how_to_read_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], suffix: str, pack: str, command: str
) -> None:
    import importlib

    path = tmp_path / f"run.jsonl{suffix}"
    path.write_bytes(importlib.import_module(pack).compress(HAPPY.read_bytes()))
    said = f"{path}: is {'bzip2' if pack == 'bz2' else 'xz' if pack == 'lzma' else 'gzip'}"
    said += f"-compressed; give it through a pipe: <({command} {path})"
    with pytest.raises(TraceError) as info:
        Trace.load(path)
    assert str(info.value) == said
    with pytest.raises(TraceError, match="compressed"):
        TraceIndex(path)
    for argv in (["show", str(path)], ["diff", str(path), str(HAPPY)], ["verify", str(path)]):
        assert main(argv) in (1, 2)
        assert capsys.readouterr().err == f"regista: {said}\n"
    transcript = tmp_path / f"session.jsonl{suffix}"
    transcript.write_bytes(path.read_bytes())
    assert main(["import", "claude-code", str(transcript), "--trace-dir", str(tmp_path)]) == 2
    assert "-compressed; give it through a pipe" in capsys.readouterr().err
