"""The walk every runs reader shares (``regista.store.runs.trace_files``), seeded: on random
trees (hidden names, nested folders, symlinks in and out, folders named like traces) it
yields what ``os.walk`` finds, in its order, with the same files left out."""

from __future__ import annotations

import os
import random
from collections.abc import Iterator
from pathlib import Path

from regista.store.paths import inside
from regista.store.runs import trace_files

SEED = int(os.environ.get("REGISTA_FUZZ_SEED", "2727"))
CASES = int(os.environ.get("REGISTA_FUZZ_CASES", "30"))


def _by_os_walk(folder: Path) -> Iterator[Path]:
    """The walk as it was first written, on ``os.walk``."""
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(files):
            if name.endswith(".jsonl") and not name.startswith("."):
                path = Path(root) / name
                if not os.path.islink(path) or inside(folder, path):
                    yield path


def _tree(rng: random.Random, root: Path, outside: Path) -> None:
    folders = [root]
    for _ in range(rng.randrange(1, 25)):
        parent = rng.choice(folders)
        name = rng.choice(["a", "b", ".hid", "x.jsonl", "traces", "Z", "é"]) + str(rng.randrange(4))
        kind = rng.randrange(6)
        target = parent / (name + rng.choice(["", ".jsonl", ".json"]))
        if target.exists() or target.is_symlink():
            continue
        if kind == 0:
            target.mkdir()
            folders.append(target)
        elif kind in (1, 2):
            target.write_text("{}\n")
        elif kind == 3:  # a link to a file outside
            target.symlink_to(outside / "out.jsonl")
        elif kind == 4:  # a link to a file or folder inside
            inner = rng.choice(folders)
            target.symlink_to(inner)
        else:  # a dangling link
            target.symlink_to(root / "nowhere.jsonl")


def test_the_walk_matches_os_walk(tmp_path: Path) -> None:
    rng = random.Random(SEED)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "out.jsonl").write_text("{}\n")
    for n in range(CASES):
        root = tmp_path / f"case{n}"
        root.mkdir()
        _tree(rng, root, outside)
        want = list(_by_os_walk(root))
        assert list(trace_files(root)) == want, f"seed {SEED}, case {n}"
