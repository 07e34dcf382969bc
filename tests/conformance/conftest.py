"""Prints the conformance matrix at the end of the run (see ``matrix.py``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from conformance.matrix import ROWS

_HEAD = ["client", "version", "record", "strict served", "409 surfaced", "loose", "fork"]


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if not ROWS:
        return
    rows = [_HEAD] + [r.cells() for r in sorted(ROWS.values(), key=lambda r: r.client)]
    widths = [max(len(r[i]) for r in rows) for i in range(len(_HEAD))]
    terminalreporter.section("regista conformance matrix")
    for r in rows:
        terminalreporter.write_line("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)))
    out = Path(__file__).resolve().parents[2] / ".artifacts"
    out.mkdir(exist_ok=True)
    (out / "conformance.json").write_bytes(
        orjson.dumps([r.as_json() for r in ROWS.values()], option=orjson.OPT_INDENT_2)
    )
