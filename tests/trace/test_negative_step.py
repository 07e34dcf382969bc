"""A step number below 0 is refused by every reader, with the reference's words.

Steps are numbered from 0; no writer makes a negative one. The debugger's index found step
numbers with ``\\d+`` and took ``"step":-1`` for an event of no step, while ``Trace`` made a
step -1 of it: the two said different things of the same file."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from regista.diff.runfile import RunFile
from regista.errors import TraceFormatError
from regista.trace.index import TraceIndex, read_summary
from regista.trace.listing import Listing
from regista.trace.reader import Trace

SAMPLE = Path(__file__).parents[2] / "sample_traces" / "refund_happy.jsonl"


def _with_step(tmp_path: Path, lineno: int, step: int) -> Path:
    """The sample with line ``lineno`` (1-based) of step 1 given number ``step``."""
    return _step_replaced(tmp_path, lineno, b'"step":%d,' % step)


def _step_replaced(tmp_path: Path, lineno: int, how: bytes) -> Path:
    """The sample with line ``lineno``'s (1-based) ``"step":N,`` replaced by ``how``."""
    lines = SAMPLE.read_bytes().split(b"\n")
    lines[lineno - 1], found = re.subn(rb'"step":\d+,', how, lines[lineno - 1], count=1)
    assert found
    path = tmp_path / "t.jsonl"
    path.write_bytes(b"\n".join(lines))
    return path


def _index_error(path: Path) -> str:
    index = TraceIndex(path)
    try:
        with pytest.raises(TraceFormatError) as err:
            while not index.scan():
                pass
            index.summary()
    finally:
        index.close()
    return str(err.value)


def _every_reader_says(path: Path, said: str) -> None:
    """Every reader refuses ``path`` with the reference's words ``said``."""
    for messages in (True, False):
        with pytest.raises(TraceFormatError) as again:
            Trace.load(path, messages=messages)
        assert str(again.value) == said
    with pytest.raises(TraceFormatError) as listed:
        Listing.load(path)
    assert str(listed.value) == said
    assert _index_error(path) == said
    with pytest.raises(TraceFormatError) as summed:
        read_summary(path)
    assert str(summed.value) == said
    with pytest.raises(TraceFormatError) as diffed, RunFile(path) as run:
        run.read(final=True)
    assert str(diffed.value) == said


@pytest.mark.parametrize("lineno", [4, 5, 6])  # a tool step's call, decision and result
def test_a_negative_step_is_refused_by_every_reader(tmp_path: Path, lineno: int) -> None:
    path = _with_step(tmp_path, lineno, -1)
    with pytest.raises(TraceFormatError) as err:
        Trace.load(path)
    said = str(err.value)
    assert f":{lineno}:" in said and "step: must not be negative" in said
    # the two-run view's reader took the line for an event of no step (its step lost it)
    _every_reader_says(path, said)


def test_step_zero_and_up_read_as_before(tmp_path: Path) -> None:
    path = _with_step(tmp_path, 4, 1)
    trace = Trace.load(path)
    index = TraceIndex(path)
    try:
        assert index.scan()
        assert [e.index for e in index.steps] == [s.index for s in trace.steps()]
    finally:
        index.close()


@pytest.mark.parametrize("how", [b"", b'"step":null,'])
# a request, a response, a call, a decision, a result
@pytest.mark.parametrize("lineno", [2, 3, 4, 5, 6])
def test_an_event_without_its_step_is_refused_by_every_reader(
    tmp_path: Path, lineno: int, how: bytes
) -> None:
    """Only an ``error`` may belong to no step: any other event without its number is
    refused, by every reader in the reference's words (the debugger's index took it for an
    event of no step, and its header counted what the reference refuses)."""
    path = _step_replaced(tmp_path, lineno, how)
    with pytest.raises(TraceFormatError) as err:
        Trace.load(path)
    said = str(err.value)
    assert f":{lineno}:" in said and "step" in said
    _every_reader_says(path, said)
