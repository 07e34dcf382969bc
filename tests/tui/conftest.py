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
    return RegistaApp(index, notice=notice, settle_s=0)


@pytest.fixture(scope="session")
def other_trace_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The same agent where the first lookup works: the runs diverge at step 1."""
    from tui_traces import SCRIPT, make_trace

    script = [dict(SCRIPT[0]), *SCRIPT[2:]]
    script[0] = {
        **script[0],
        "content": [
            {"type": "text", "text": "Let me look the order up."},
            {"type": "tool_use", "name": "lookup_order", "input": {"order_id": "A-100"}},
        ],
    }
    return make_trace(
        tmp_path_factory.mktemp("other"), session_id="01TESTTRACE0000000000000002", script=script
    )


@pytest.fixture(scope="session")
def replay_path(trace_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A strict replay of :func:`trace_path`."""
    import asyncio

    from regista import replay

    result = asyncio.run(replay(trace_path, trace_dir=tmp_path_factory.mktemp("replay")))
    return Path(result.trace_path)
