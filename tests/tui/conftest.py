"""Fixtures for the TUI tests: small deterministic traces made by running scripted agents."""

from __future__ import annotations

from pathlib import Path

import pytest
from tui_traces import make_trace

from regista_tui.__main__ import open_index
from regista_tui.app import RegistaApp


@pytest.fixture(scope="session")
def trace_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The refund agent's trace: 8 steps with a tool error, a denial and a compaction."""
    return make_trace(tmp_path_factory.mktemp("traces"))


@pytest.fixture
def browser_app(trace_path: Path) -> RegistaApp:
    index, notice = open_index(trace_path)
    return RegistaApp(index, notice=notice)
