"""A small traces folder for the run list tests: runs, a fork, a replay, a failure."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

ROOT = "01TESTTRACE0000000000000001"
OTHER = "01TESTRUNSALES000000000002"
FORK = "01TESTRUNFORK0000000000003"
REPLAY = "01TESTRUNREPLAY00000000004"
FAILED = "01TESTRUNFAILED00000000005"


def _variant(
    source: Path, folder: Path, sid: str, ts: str, *, start: dict[str, Any], end: dict[str, Any]
) -> Path:
    """``source`` as run ``sid``: its first and last lines patched with ``start`` / ``end``."""
    lines = source.read_bytes().replace(ROOT.encode(), sid.encode()).splitlines()
    first = {**orjson.loads(lines[0]), "ts": ts, **start}
    last = {**orjson.loads(lines[-1]), **end}
    lines[0], lines[-1] = orjson.dumps(first), orjson.dumps(last)
    path = folder / f"{sid}.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


def make_library(source: Path, folder: Path) -> Path:
    """Five runs made from the refund trace ``source`` (run ``ROOT``, started 2026-01-01):
    ``OTHER`` (newest root), ``FAILED`` (max_turns), and under ``ROOT`` its replay
    (started last of all) and a fork at step 3."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / source.name).write_bytes(source.read_bytes())
    _variant(
        source,
        folder,
        OTHER,
        "2026-01-03T09:00:00.000Z",
        start={"task": "Summarise the weekly sales report."},
        end={"cost_usd": 0.12},
    )
    _variant(
        source,
        folder,
        FAILED,
        "2026-01-02T12:00:00.000Z",
        start={"task": "Cancel order B-7."},
        end={"stop_reason": "max_turns", "cost_usd": 0.3},
    )
    _variant(
        source,
        folder,
        FORK,
        "2026-01-02T08:00:00.000Z",
        start={"forked_from": {"session_id": ROOT, "at_step": 3, "edit": {"op": "replace"}}},
        end={"cost_usd": 0.05},
    )
    _variant(
        source,
        folder,
        REPLAY,
        "2026-01-04T10:00:00.000Z",
        start={"replay_of": ROOT},
        end={},
    )
    return folder
