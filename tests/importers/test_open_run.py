"""``regista.open_run`` opens every format the importers register, told once from the
content: Claude Code and Codex transcripts, OTLP JSON files, regista traces and pipes."""

from __future__ import annotations

import gzip
import os
import threading
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest
from google.protobuf import json_format
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

from regista import TraceError, open_run
from regista.cli.main import main
from regista.trace.formats import REGISTA
from regista.trace.reader import Trace

from .cc_fixtures import basic_session
from .test_otlp import _spans

SAMPLES = Path(__file__).resolve().parents[2] / "sample_traces"
HAPPY = SAMPLES / "refund_happy.jsonl"


def _otlp_file(tmp_path: Path) -> tuple[Trace, Path]:
    trace = Trace.load(HAPPY)
    path = tmp_path / "spans.json"
    path.write_bytes(orjson.dumps(json_format.MessageToDict(encode_spans(_spans(trace)))))
    return trace, path


def test_an_otlp_json_file_opens_like_a_trace(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An OTLP JSON file was refused by every command but ``import`` (its format was
    detected, then not converted): it opens now, whole or lazily."""
    trace, path = _otlp_file(tmp_path)
    opened = open_run(path)
    assert opened.format.name == "otlp" and not opened.in_place
    kinds = [s.kind for s in trace.steps()]
    assert [s.kind for s in opened.trace().steps()] == kinds
    assert [s.kind for s in Trace.load(path).steps()] == kinds
    index = opened.index()
    try:
        assert index.scan() and len(index) == len(kinds)
    finally:
        index.close()
    assert main(["show", str(path)]) == 0
    assert "get_order" in capsys.readouterr().out


@pytest.fixture
def pipe() -> Iterator[object]:
    """A function that gives a pipe to read ``data`` from (``<(cat FILE)``)."""
    threads: list[threading.Thread] = []

    def make(data: bytes) -> Path:
        read, write = os.pipe()

        def feed() -> None:
            with os.fdopen(write, "wb") as f:
                f.write(data)

        thread = threading.Thread(target=feed, daemon=True)
        thread.start()
        threads.append(thread)
        return Path(f"/proc/{os.getpid()}/fd/{read}")

    yield make
    for thread in threads:
        thread.join(timeout=5)


def test_each_kind_of_file_is_told_once_from_its_content(tmp_path: Path, pipe: object) -> None:
    cc = basic_session().write(tmp_path / "notes.txt")  # the name says nothing
    assert open_run(cc).format.name == "claude-code"
    assert open_run(HAPPY).format is REGISTA and open_run(HAPPY).in_place
    assert callable(pipe)
    piped = open_run(pipe(HAPPY.read_bytes()))
    assert piped.format is REGISTA and not piped.in_place  # its bytes were read, once
    assert piped.trace().session_id == Trace.load(HAPPY).session_id
    piped_cc = open_run(pipe(cc.read_bytes()))
    assert piped_cc.format.name == "claude-code"
    assert len(piped_cc.trace().steps()) == 6
    with pytest.raises(TraceError, match="gzip-compressed"):
        open_run(pipe(gzip.compress(HAPPY.read_bytes())))
    # what no format claims, or cannot be read, goes to regista's reader, which says why
    for path in (tmp_path / "missing.jsonl", tmp_path, tmp_path / "junk.txt"):
        if path.name == "junk.txt":
            path.write_bytes(b"hello\n")
        assert open_run(path).format is REGISTA and open_run(path).in_place
        with pytest.raises(TraceError):
            open_run(path).trace()


def test_a_first_line_whose_type_is_no_name_is_no_format(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A ``type`` that is a list or a number was looked up in the tables of known kinds,
    and ``regista show`` of such a file ended in a ``TypeError`` traceback."""
    from regista.importers import detect

    for kind in (b"[]", b"{}", b"3"):
        line = b'{"type":' + kind + b',"sessionId":"s","uuid":"u","payload":{}}\n'
        assert detect(line) is None
        path = tmp_path / "odd.jsonl"
        path.write_bytes(line)
        assert open_run(path).format is REGISTA
        assert main(["show", str(path)]) == 1
        err = capsys.readouterr().err
        assert err.startswith("regista: ") and "Traceback" not in err


def test_a_transcript_longer_than_its_head_is_never_read_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its first lines tell its format; the conversion reads the rest a block at a time."""
    import regista.importers.memory as memory
    import regista.trace.formats as formats
    from regista.importers import convert

    path = basic_session().write(tmp_path / "s.jsonl")
    then = os.path.getmtime(path) - 2 * memory.LIVE_S
    os.utime(path, (then, then))
    monkeypatch.setattr(formats, "HEAD_BYTES", 256)  # the file is longer than its head

    def whole(_: Path) -> bytes:
        raise AssertionError("read whole")

    monkeypatch.setattr(formats, "_read_whole", whole)
    monkeypatch.setattr(memory, "RUNS", memory.InMemoryRuns())
    run = open_run(path)
    assert run.format.name == "claude-code" and run.data is None and not run.in_place
    index = run.index()
    while not index.scan(100):
        pass
    assert Path(index.path).read_bytes() == convert("claude-code", path).main.to_bytes()
    index.close()
