"""Seed traces for the fuzz tests: the committed samples and a session with every feature."""

from __future__ import annotations

from pathlib import Path

import pytest
from builders import rich_agent
from files import SAMPLES, found


@pytest.fixture(scope="session")
def seed_traces(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    """Valid traces (name -> bytes): multi-tool turns, a denial, a tool error, a
    compaction, a max_turns stop, and the three sample sessions."""
    folder = tmp_path_factory.mktemp("seeds")
    rich = rich_agent(folder).run_sync("What's the weather in Paris and Rome?")
    seeds = {"rich": Path(rich.trace_path).read_bytes()}
    for path in found(SAMPLES):
        seeds[path.stem] = path.read_bytes()
    return seeds


@pytest.fixture(autouse=True)
def _shop_db(sample_db: Path) -> None:
    """Sample agents re-created from ``agent_ref`` use a database in the test's folder."""
