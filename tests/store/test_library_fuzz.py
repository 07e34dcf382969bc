"""Seeded fuzz: a library kept over mutated transcripts, and doctor over mutated settings.

Whatever the files hold, a sync never raises: a session that cannot be imported is said
and recorded, every trace it writes reads back, and the next sync is quiet.
"""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from home import make_home
from importers.fuzzing import CASES, mutate, rng_for

from regista.store.doctor import retention
from regista.store.library import Library, default_roots
from regista.trace.reader import Trace


def test_fuzzed_homes_sync_without_raising(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = rng_for("library-sync")
    home = tmp_path / "home"
    files = make_home(home)
    originals = {name: p.read_bytes() for name, p in files.items()}
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    monkeypatch.delenv("CODEX_HOME", raising=False)
    lib_dir = tmp_path / "lib"
    for case in range(max(CASES // 10, 10)):
        for name in rng.sample(sorted(files), rng.randint(1, 3)):
            files[name].write_bytes(mutate(rng, originals[name]))
        with Library(lib_dir, default_roots()) as lib:
            stats = lib.sync()
            assert stats.imported + stats.failed >= 1, case
            again = lib.sync()
            assert again.imported == again.failed == 0, case
        for trace in (lib_dir / "claude-code").glob("*.jsonl"):
            Trace.load(trace)
        for trace in (lib_dir / "codex").glob("*.jsonl"):
            Trace.load(trace)


def test_fuzzed_settings_give_a_retention(tmp_path: Path) -> None:
    rng = rng_for("library-settings")
    base = orjson.dumps({"cleanupPeriodDays": 14, "model": "opus", "permissions": {"allow": []}})
    for _ in range(CASES):
        (tmp_path / "settings.json").write_bytes(mutate(rng, base))
        r = retention(tmp_path)
        assert r.days is None or (isinstance(r.days, int) and r.days >= 0)
        assert r.describe()
