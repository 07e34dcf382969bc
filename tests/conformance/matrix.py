"""The conformance matrix: one row per real client, recorded, replayed and forked by regista.

Each client's test drives the client headless against a fake provider on 127.0.0.1 and
fills its row with :func:`row`; the suite prints the table at its end (``conftest.py``) and
writes it as JSON beside the run (``.artifacts/conformance.json``), so CI shows, per client:
its version, whether recording gave one run per conversation that reads back, how many calls a
strict replay served, whether a changed prompt's 409 reached the client (and how many requests
it sent for it), and whether a fork went live after its edit.

Clients that are not installed skip and say why; with ``CI=true`` a missing client fails
(:func:`need`).
"""

from __future__ import annotations

import importlib.metadata
import os
import shutil
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import pytest

__all__ = ["ROWS", "Row", "need", "npm_bin", "pkg_version", "row"]

#: Where `.ci/run` installs the npm CLIs (``npm install --prefix``); ``REGISTA_NPM_PREFIX``
#: names another folder holding a ``node_modules``.
NPM_PREFIX = Path(__file__).resolve().parents[2] / ".ci" / "npm"


@dataclass
class Row:
    """What one client did under regista (``None``: not tried)."""

    client: str
    version: str = "?"
    record_ok: bool | None = None
    strict_served: int | None = None
    strict_total: int | None = None
    conflict_surfaced: bool | None = None
    conflict_requests: int | None = None
    loose_ok: bool | None = None
    fork_ok: bool | None = None
    notes: list[str] = field(default_factory=list)

    def cells(self) -> list[str]:
        def yn(v: bool | None) -> str:
            return "-" if v is None else ("ok" if v else "FAIL")

        strict = "-" if self.strict_total is None else f"{self.strict_served}/{self.strict_total}"
        conflict = yn(self.conflict_surfaced)
        if self.conflict_requests is not None:
            conflict += f" ({self.conflict_requests} sent)"
        return [
            self.client,
            self.version,
            yn(self.record_ok),
            strict,
            conflict,
            yn(self.loose_ok),
            yn(self.fork_ok),
        ]

    def as_json(self) -> dict[str, Any]:
        return asdict(self)


#: Every row filled in this run, by client name.
ROWS: dict[str, Row] = {}


def row(client: str, version: str) -> Row:
    """The row of ``client`` (made on first use)."""
    r = ROWS.get(client)
    if r is None:
        r = ROWS[client] = Row(client, version)
    return r


def need(what: str, why: str) -> None:
    """Skip the test because ``what`` is missing (``why`` says how to get it); fail in CI."""
    message = f"{what} is not installed: {why}"
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        pytest.fail(message + " (CI=true: the conformance matrix needs it)")
    pytest.skip(message)


def npm_bin(name: str) -> Path:
    """The executable ``name`` of an npm package installed for the matrix (skip or fail when
    missing)."""
    prefix = Path(os.environ.get("REGISTA_NPM_PREFIX") or NPM_PREFIX)
    candidate = prefix / "node_modules" / ".bin" / name
    if candidate.exists():
        return candidate
    # Only a CLI installed for the matrix is used, never one on PATH: a person's own may
    # be logged in, and its home folder holds their sessions.
    if shutil.which("node") is None:
        need("node", "install Node.js (Debian: nodejs), then run .ci/run")
    need(name, f"npm install --prefix {prefix} the package that provides it (.ci/run does)")
    raise AssertionError("unreachable")


def pkg_version(dist: str) -> str:
    """The installed version of the Python distribution ``dist`` (skip or fail when missing)."""
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        need(dist, f"pip install {dist} (it is in the project's dev extras)")
        raise AssertionError("unreachable") from None
