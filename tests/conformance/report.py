"""Prints the conformance matrix at the end of the run (see ``matrix.py``).

The suite's root ``conftest.py`` takes these hooks, so the table is printed whatever tests
were asked for (a ``conftest.py`` in this folder would not be loaded by the controller of an
xdist run, which collects nothing).

Under pytest-xdist each worker fills the rows of the clients it ran and writes them to
``.artifacts/conformance/<worker>.json`` when it ends; the controller gathers every file into
one table and writes it whole as ``.artifacts/conformance.json``.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import orjson
import pytest

from conformance.matrix import ROWS, Row

_HEAD = ["client", "version", "record", "strict served", "409 surfaced", "loose", "fork"]
_OUT = Path(__file__).resolve().parents[2] / ".artifacts"
_PARTS = _OUT / "conformance"


def _worker(config: pytest.Config) -> str | None:
    winput = getattr(config, "workerinput", None)
    return str(winput["workerid"]) if winput else None


def pytest_sessionstart(session: pytest.Session) -> None:
    if _worker(session.config) is None:  # the controller (or a run without xdist)
        shutil.rmtree(_PARTS, ignore_errors=True)


def pytest_sessionfinish(session: pytest.Session) -> None:
    worker = _worker(session.config)
    if worker is not None and ROWS:
        _PARTS.mkdir(parents=True, exist_ok=True)
        (_PARTS / f"{worker}.json").write_bytes(orjson.dumps([r.as_json() for r in ROWS.values()]))


def _rows() -> list[Row]:
    rows = dict(ROWS)
    for part in sorted(_PARTS.glob("*.json")) if _PARTS.is_dir() else []:
        for data in orjson.loads(part.read_bytes()):
            row = Row(**data)
            have = rows.get(row.client)
            if have is None:
                rows[row.client] = row
            else:  # one client's tests ran on two workers: keep what each filled
                for name, value in data.items():
                    if value not in (None, [], "?") and getattr(have, name) in (None, [], "?"):
                        setattr(have, name, value)
    return sorted(rows.values(), key=lambda r: r.client)


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if _worker(terminalreporter.config) is not None:
        return
    found = _rows()
    if not found:
        return
    table = [_HEAD] + [r.cells() for r in found]
    widths = [max(len(r[i]) for r in table) for i in range(len(_HEAD))]
    terminalreporter.section("regista conformance matrix")
    for r in table:
        terminalreporter.write_line("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)))
    _OUT.mkdir(exist_ok=True)
    (_OUT / "conformance.json").write_bytes(
        orjson.dumps([r.as_json() for r in found], option=orjson.OPT_INDENT_2)
    )
