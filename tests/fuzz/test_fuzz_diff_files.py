"""Fuzz: a diff of two files equals the diff of the two loaded traces, or fails cleanly."""

from __future__ import annotations

import warnings
from pathlib import Path

from files import SAMPLES as SAMPLE_TRACES
from files import found
from mutate import base_seed, iterations, mutations

from regista.diff import diff_runs
from regista.diff.runs import RunDiff
from regista.errors import RegistaError
from regista.trace.reader import Trace

SAMPLES = found(SAMPLE_TRACES)


def rows(d: RunDiff) -> list[tuple[int | None, int | None, str]]:
    return [(p.a_step, p.b_step, p.kind) for p in d.pairs]


def test_mutated_traces_diff_as_when_loaded_or_fail_cleanly(tmp_path: Path) -> None:
    """Seeded corruptions of the samples: when the loaded traces diff, the files diff the
    same way; the files never raise anything but a RegistaError."""
    seeds = {p.stem: p.read_bytes() for p in SAMPLES}
    for i, variant in enumerate(mutations(seeds, iterations(80), base_seed() + 4141)):
        original = tmp_path / f"{i}-a.jsonl"
        original.write_bytes(seeds[variant.name])
        mutated = tmp_path / f"{i}-b.jsonl"
        mutated.write_bytes(variant.data)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                loaded = diff_runs(Trace.load(original), Trace.load(mutated))
            except RegistaError:
                loaded = None
            try:
                files = diff_runs(original, mutated)
            except RegistaError:
                assert loaded is None, variant.how
                files = None
        if loaded is not None:
            assert files is not None and rows(files) == rows(loaded), variant.how
        original.unlink()
        mutated.unlink()
