"""Variants the fuzz suite once found failing, kept as fixed regression cases."""

from __future__ import annotations

from pathlib import Path

import pytest
from mutate import mutations

from regista.cli.main import main

#: (seed, index, command): a recall index given a step number past SQLite's integers; a
#: request delta whose tool_result's tool_use_id is an object; a fork whose recording no longer
#: matches before its edit (a tool's schema changed in the first request), reported as a
#: divergence: a line, then the differences; a model call's duration_ms of 2**63 that put
#: its span's start before year 1 (found by the long run of docs/faults.md).
FOUND = [
    (7, 77, "recall"),
    (31, 712, "show"),
    (32, 368, "diff"),
    (90212, 1706, "fork"),
    (9, 849, "export"),
]


@pytest.mark.parametrize(("seed", "index", "command"), FOUND)
def test_once_failing_variant(
    seed_traces: dict[str, bytes],
    tmp_path: Path,
    seed: int,
    index: int,
    command: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    variant = list(mutations(seed_traces, index + 1, seed))[index]
    path = tmp_path / "trace.jsonl"
    path.write_bytes(variant.data)
    original = tmp_path / "original.jsonl"
    original.write_bytes(seed_traces[variant.name])
    argv = {
        "recall": ["recall", "order refund", "--dir", str(tmp_path)],
        "show": ["show", str(path)],
        "export": ["export", str(path), "--console"],
        "diff": ["diff", str(original), str(path)],
        "fork": [
            *("fork", str(path), "--at", "1", "--tool-result", "edited", "--loose"),
            *("--trace-dir", str(tmp_path / "out")),
        ],
    }[command]
    assert main(argv) in (0, 1, 2)
    err = capsys.readouterr().err
    assert "Traceback" not in err
    if command == "fork":
        assert err.startswith("regista: ")
        assert "diverged at step 0 (before the edit" in err.split("\n")[0]
