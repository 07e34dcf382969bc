"""Fixtures for the trace tests."""

from __future__ import annotations

from pathlib import Path

import pytest
from otel_support import small_agent


@pytest.fixture
def small_trace(tmp_path: Path) -> Path:
    """The small session's trace: a tool that works, one that raises, one the policy denies."""
    return small_agent(tmp_path).run_sync("Weather in Paris and Rome?").trace_path
