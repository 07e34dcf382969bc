"""Seeded fuzz: corrupt traces through the reader, the debugger's index and diff_runs.

Every variant either reads, or fails with one ``RegistaError`` line; any other exception
is a bug. ``REGISTA_FUZZ_ITERATIONS`` makes a long run (see ``mutate.py``).
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

from mutate import Failures, Variant, base_seed, iterations, mutations

from regista import diff_runs
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


def _variants(seed_traces: dict[str, bytes], n: int, salt: int) -> list[Variant]:
    return list(mutations(seed_traces, iterations(n), base_seed() + salt))


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
    assert not failures.found, failures.report()
