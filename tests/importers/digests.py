"""Digests of conversions, to compare a conversion with the one it replaced (kept as
expected values in the tests that use them)."""

from __future__ import annotations

import hashlib
import warnings
from collections.abc import Callable
from pathlib import Path

import orjson

from regista.errors import RegistaError
from regista.importers import convert, import_runs


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
