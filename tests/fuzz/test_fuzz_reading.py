"""Seeded fuzz: corrupt traces through the reader, the debugger's index and diff_runs.

Every variant either reads, or fails with one ``RegistaError`` line; any other exception
is a bug. ``REGISTA_FUZZ_ITERATIONS`` makes a long run (see ``mutate.py``).
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mutate import Failures, Variant, base_seed, iterations, mutations

from regista import diff_runs
from regista.errors import RegistaError
from regista.trace.index import TraceIndex, read_summary
from regista.trace.reader import Trace
from regista.vocab import step_gist


def _use_trace(path: Path) -> None:
    trace = Trace.load(path)
    trace.summary()
    trace.tool_results()
    trace.request_hashes()
    trace.llm_calls()
    for step in trace.steps():
        _use_step(step)


def _use_listing(path: Path) -> None:
    trace = Trace.load(path, messages=False)  # what ``regista show`` reads
    trace.summary()
    for step in trace.steps():
        _ = (step.title, step.complete, step.is_error, step.denied, step.source, step_gist(step))


def _use_light_listing(path: Path) -> None:
    """What ``regista show`` does: a listing without the models, its steps and header."""
    import io

    from rich.console import Console

    from regista.cli.cmd_show import header, print_steps
    from regista.cli.show_pass import StepsPass
    from regista.trace.listing import Listing

    listing = Listing.load(path)
    steps = StepsPass(listing, 50)
    console = Console(file=io.StringIO(), width=100)
    console.print(header(listing, 40, steps.glance))
    print_steps(console, listing, 100, steps)
    assert steps.summary == Trace.load(path, messages=False).summary()


def _use_step(step: Any) -> None:
    _ = (step.title, step.turn, step.complete, step.is_error, step.denied, step.source)
    _ = (step.request, step.response, step.tool_call, step.result, step.compaction)


def _use_index(path: Path) -> None:
    index = TraceIndex(path)
    try:
        while not index.scan():
            pass
        index.summary()
        for pos in range(len(index.steps)):
            _use_step(index.step(pos))
            index.step_text(pos)
            index.request_event(pos)
            index.request_messages(pos)
    finally:
        index.close()
    read_summary(path)


def _variants(seed_traces: dict[str, bytes], n: int, salt: int) -> Iterator[Variant]:
    """Made one at a time: a long run holds one variant, not all of them."""
    return mutations(seed_traces, iterations(n), base_seed() + salt)


def test_reader_and_index_raise_only_regista_errors(
    seed_traces: dict[str, bytes], tmp_path: Path
) -> None:
    failures = Failures()
    for i, variant in enumerate(_variants(seed_traces, 400, 0)):
        path = tmp_path / f"v{i}.jsonl"
        path.write_bytes(variant.data)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            failures.run("Trace.load", variant, lambda p=path: _use_trace(p))
            failures.run("listing", variant, lambda p=path: _use_listing(p))
            failures.run("light listing", variant, lambda p=path: _use_light_listing(p))
            failures.run("TraceIndex", variant, lambda p=path: _use_index(p))
        path.unlink()
    assert not failures.found, failures.report()


def test_diff_runs_raises_only_regista_errors(
    seed_traces: dict[str, bytes], tmp_path: Path
) -> None:
    failures = Failures()
    for i, variant in enumerate(_variants(seed_traces, 120, 1)):
        original = tmp_path / f"o{i}.jsonl"
        original.write_bytes(seed_traces[variant.name])
        path = tmp_path / f"v{i}.jsonl"
        path.write_bytes(variant.data)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for a, b in ((original, path), (path, original)):
                d = failures.run("diff_runs", variant, lambda a=a, b=b: diff_runs(a, b))
                if d is not None:
                    failures.run("diff_runs.to_dict", variant, d.to_dict)
                    failures.run("diff_runs.describe", variant, lambda d=d: repr(d))
        original.unlink()
        path.unlink()
    assert not failures.found, failures.report()


def _outcome(load: Any) -> tuple[Any, ...]:
    """What a load gives: the events and whether a last line was dropped, or the error
    (a time stamp a line lacks is made when it is read: left out)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            trace = load()
    except RegistaError as exc:
        return ("error", type(exc).__name__, str(exc))
    return ("trace", [ev.model_dump(exclude={"ts"}) for ev in trace.events], trace.truncated)


def test_a_file_read_in_pieces_reads_as_the_same_bytes_read_whole(
    seed_traces: dict[str, bytes], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``Trace.load`` reads a file a piece at a time: lines cut across pieces, blank or
    half-written last lines and corrupt ones read as ``Trace.from_bytes`` reads them."""
    import io
    import random

    from regista.trace import lines as trace_lines

    rng = random.Random(base_seed() + 7)
    endings = [b"", b"\n", b"\n\n", b"  ", b"\n  \n", b'{"schema_ver', b"\n\n{}"]
    path = tmp_path / "t.jsonl"
    for variant in _variants(seed_traces, 150, 2):
        data = variant.data
        if rng.random() < 0.3:
            data = data.rstrip(b"\n") + rng.choice(endings)
        monkeypatch.setattr(trace_lines, "CHUNK", rng.choice([1, 2, 7, 64, 333, 4096]))
        cut = rng.randint(0, min(len(data), 500))  # what was read to tell the format

        def pieces(m: bool, data: bytes = data, cut: int = cut) -> Trace:
            events, truncated = trace_lines.parse_file(io.BytesIO(data[cut:]), data[:cut], path, m)
            return Trace(trace_lines.checked_events(events, path), path, truncated=truncated)

        for messages in (True, False):
            whole = _outcome(lambda d=data, m=messages: Trace.from_bytes(d, path, messages=m))
            assert _outcome(lambda m=messages: pieces(m)) == whole, (variant.how, trace_lines.CHUNK)


def test_every_piece_size_on_a_short_trace(
    seed_traces: dict[str, bytes], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each way of cutting a short trace into pieces, with a blank, a corrupt or a
    half-written line where a piece may end, reads as the bytes read whole."""
    import io

    from regista.trace import lines as trace_lines

    lines = seed_traces["refund_happy"].split(b"\n")[:3]
    path = tmp_path / "t.jsonl"
    for odd in (b"", b"  ", b"{", lines[2][:40]):
        for data in (
            b"\n".join([lines[0], odd, lines[1]]) + b"\n",
            b"\n".join([lines[0], lines[1], odd]) + b"\n",
            b"\n".join([lines[0], lines[1], odd]),
        ):
            whole = _outcome(lambda d=data: Trace.from_bytes(d, path))
            ends = [i + 1 for i, byte in enumerate(data) if byte == 10]  # a piece ends there
            for size in sorted({*range(1, len(data) + 2, 29), *ends, *(e + 1 for e in ends)}):
                monkeypatch.setattr(trace_lines, "CHUNK", size)
                for cut in (0, size, len(lines[0]) + 1):

                    def pieces(data: bytes = data, cut: int = cut) -> Trace:
                        file = io.BytesIO(data[cut:])
                        events, truncated = trace_lines.parse_file(file, data[:cut], path, True)
                        events = trace_lines.checked_events(events, path)
                        return Trace(events, path, truncated=truncated)

                    assert _outcome(pieces) == whole, (odd, size, cut)
