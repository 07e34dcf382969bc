"""What an import writes does not depend on how many referred tool results its encoder
keeps in memory (``_REFERRED_KEPT``): the digests of the seeded, fuzzed Claude Code and
Codex cases, made at 64, are those at 1 and 2. A resumed Codex rollout repeats a result
(``late~5``): kept, it was referred to; dropped, it was written whole."""

from __future__ import annotations

from pathlib import Path

import pytest

from regista.importers import _builder

from . import test_cc_bounded, test_codex_bounded
from .digests import digest

FORMATS = {"claude-code": test_cc_bounded, "codex": test_codex_bounded}


@pytest.mark.parametrize("kept", [1, 2])
@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_the_bytes_are_those_made_keeping_64(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fmt: str, kept: int
) -> None:
    assert _builder._REFERRED_KEPT == 64, "the digests were made at 64"
    monkeypatch.setattr(_builder, "_REFERRED_KEPT", kept)
    module = FORMATS[fmt]
    cases = module._cases(tmp_path)
    got = {name: digest(fmt, make(), tmp_path) for name, make in cases.items()}
    differ = sorted(name for name in got if got[name] != module.EXPECTED[name])
    assert not differ, f"{fmt} at {kept}: {differ}"
