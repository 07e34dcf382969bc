"""Seeded fuzz: every CLI command, run in-process on corrupt traces.

Each command either works or prints one ``regista: …`` line on stderr and exits non-zero;
an exception escaping ``main`` (which would be a traceback) is a bug. ``regista serve`` is
left out, as are ``mcp`` and ``record`` (servers and a wrapper; their routes have tests of
their own) and ``import`` (it reads other tools' files, fuzzed with their importers).
"""

from __future__ import annotations

import shutil
import warnings
from pathlib import Path

import pytest
from mutate import Failures, Variant, base_seed, iterations, mutations

from regista.cli.main import main


def _commands(path: Path, original: Path, out: Path) -> list[list[str]]:
    p, o, d = str(path), str(original), str(out)
    return [
        ["show", p],
        ["show", "--full", p],
        ["replay", p, "--trace-dir", d],
        ["replay", p, "--mode", "warn", "--trace-dir", d],
        ["diff", o, p],
        ["diff", p, o, "--json"],
        ["export", p, "--console"],
        ["export", p, "--console", "--include-content"],
        ["test", p],
        ["fork", p, "--at", "1", "--tool-result", "edited", "--loose", "--trace-dir", d],
        ["rewind", p, "--at", "1", "--trace-dir", d],
        ["resume", p, "--trace-dir", d],
        ["runs", str(path.parent)],
        ["runs", str(path.parent), "--json"],
        ["verify", p],
        ["share", p, "-o", str(out / "one.html")],
        ["share", o, p, "-o", str(out / "two.html")],
        ["recall", "order refund", "--dir", str(path.parent)],
    ]


def _check_cli(
    variant: Variant,
    argv: list[str],
    failures: Failures,
    capsys: pytest.CaptureFixture[str],
) -> None:
    code = failures.run(f"regista {argv[0]}", variant, lambda: main(argv))
    out, err = capsys.readouterr()
    if code is None:
        return
    if "Traceback" in err or "Traceback" in out:
        failures.note(f"regista {argv[0]}", variant, "printed a traceback")
    # a failing tape test and two runs that differ are results, reported on stdout
    reported = argv[0] == "test" or (argv[0] == "diff" and code == 1 and not err)
    if code != 0 and not reported:
        last = [ln for ln in err.split("\n")[:-1] if not ln.startswith("warning: ")]
        if last and "diverged at step" in last[0]:  # a divergence report: a line, then the diff
            last = last[:1]
        if len(last) != 1 or not last[0].startswith("regista: "):
            failures.note(f"regista {argv[0]}", variant, f"not one error line: {err[:300]!r}")


def test_every_command_prints_one_line_or_works(
    seed_traces: dict[str, bytes], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    failures = Failures()
    for i, variant in enumerate(mutations(seed_traces, iterations(12), base_seed() + 2)):
        folder = tmp_path / f"v{i}"
        folder.mkdir()
        original = tmp_path / f"o{i}.jsonl"
        original.write_bytes(seed_traces[variant.name])
        path = folder / "trace.jsonl"
        path.write_bytes(variant.data)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for argv in _commands(path, original, tmp_path / f"out{i}"):
                _check_cli(variant, argv, failures, capsys)
        for made in (folder, tmp_path / f"out{i}"):  # a long run's disk stays bounded
            shutil.rmtree(made, ignore_errors=True)
        original.unlink()
    assert not failures.found, failures.report()
