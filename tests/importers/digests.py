"""Digests of conversions, to compare a conversion with the one it replaced (kept as
expected values in the tests that use them)."""

from __future__ import annotations

import hashlib
import random
import warnings
from collections.abc import Callable, Iterable
from functools import partial
from pathlib import Path

import orjson

from regista.errors import RegistaError
from regista.importers import convert, import_runs

from .fuzzing import mutate


def digest(fmt: str, path: Path, root: Path, written: bool = False) -> str:
    """The digest of the conversion of ``path`` (its runs' traces and report; ``root``
    left out of them), or of its error (``written``: of the traces ``regista import``
    writes, each written as it converts)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            if written:
                conv, files = import_runs(fmt, path, path.parent / "traces")
                traces = [f.read_bytes() for f in files]
            else:
                conv = convert(fmt, path)
                traces = [run.to_bytes() for run in conv.runs]
        except RegistaError as exc:
            return "error: " + str(exc).replace(str(root), "<root>")
    h = hashlib.sha256()
    for run, data in zip(conv.runs, traces, strict=True):
        h.update(run.session_id.encode() + b"\n" + data.replace(str(root).encode(), b"<root>"))
    h.update("\n".join(conv.report.lines()).replace(str(root), "<root>").encode())
    return h.hexdigest()[:20]


def print_digests(fmt: str, cases: Callable[[Path], dict[str, Callable[[], Path]]]) -> None:
    """Print the digests of ``cases`` (after a deliberate change of the output)."""
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        out = {name: digest(fmt, make(), Path(d)) for name, make in cases(Path(d)).items()}
    print(orjson.dumps(out, option=orjson.OPT_INDENT_2).decode())


def write_case(root: Path, name: str, file: str, data: bytes) -> Path:
    """``data`` as the file ``file`` of the folder of case ``name``."""
    path = root / name / file
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def seeded_cases(
    root: Path,
    file: str,
    seeds: dict[str, bytes],
    mutated: Iterable[str],
    rng: random.Random,
    n: int = 25,
) -> dict[str, Callable[[], Path]]:
    """A case per seed, and ``n`` mutations of each seed named in ``mutated`` (made with
    ``rng``, in that order), each written as ``file`` when its case is made."""
    cases: dict[str, Callable[[], Path]] = {
        name: partial(write_case, root, name, file, data) for name, data in seeds.items()
    }
    for name in mutated:
        for k in range(n):
            data = mutate(rng, seeds[name])
            cases[f"{name}~{k}"] = partial(write_case, root, f"{name}~{k}", file, data)
    return cases
