"""Reading a transcript a block at a time gives what reading it whole gives."""

from __future__ import annotations

from pathlib import Path

import pytest

from importers.fuzzing import CASES, mutate, rng_for
from regista.importers import _common
from regista.importers._builder import ImportReport
from regista.importers._common import read_json_file, read_json_lines

BASE = b'{"a": 1}\n\n  \nnot json\n[1]\n{"b": "\xe2\x86\x92 x"}\n{"c": {"d": [1, 2]}}\n{"e": 3}'


def _both(path: Path, data: bytes) -> tuple[object, object]:
    r1, r2 = ImportReport(), ImportReport()
    whole = read_json_lines(data, path, r1)
    path.write_bytes(data)
    blocks = read_json_file(path, r2)
    return (whole, r1.bad_lines), (blocks, r2.bad_lines)


@pytest.mark.parametrize("block", [1, 2, 3, 7, 64])
def test_any_block_size_gives_the_same_lines_and_line_numbers(
    tmp_path: Path, block: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_common, "_BLOCK", block)
    whole, blocks = _both(tmp_path / "t.jsonl", BASE)
    assert whole == blocks
    assert [n for n, _ in whole[0]] == [1, 6, 7, 8]  # type: ignore[index]


def test_fuzzed_files_read_the_same_in_blocks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = rng_for("read-blocks")
    for _ in range(CASES):
        monkeypatch.setattr(_common, "_BLOCK", rng.randint(1, 40))
        data = mutate(rng, BASE)
        whole, blocks = _both(tmp_path / "t.jsonl", data)
        assert whole == blocks, data
