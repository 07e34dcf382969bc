"""pytest plugin: golden traces as regression tests (registered via ``pytest11``).

Mark a test with the tape it plays; the ``tape_result`` fixture holds the finished run::

    @pytest.mark.tape("sample_traces/refund_happy.jsonl")
    def test_refund_still_works(tape_result):
        assert tape_result.stop_reason == "end_turn"

    @pytest.mark.tape("tapes/checkout.jsonl", agent="myapp.agents:checkout_agent")
    def test_checkout(tape_result): ...

Or play tapes yourself with the ``tape`` fixture: ``tape.play(path, agent=None)``.
Paths are relative to the pytest root directory. A run that leaves the recorded path fails
the test with the step, field and character where it left. Works with ``--strict-markers``
and pytest-xdist (nothing is shared between tests).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from regista.errors import RegistaError
from regista.loop import RunResult
from regista.testing import play_tape_sync

MARKER_HELP = (
    "tape(path, agent=None): play a golden regista trace against the current agent "
    "(strict replay, $0); the result is the tape_result fixture"
)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", MARKER_HELP)


class TapePlayer:
    """Plays tapes for a test; paths resolve against the pytest root directory."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def resolve(self, path: str | Path) -> Path:
        p = Path(path)
        return p if p.is_absolute() else self.root / p

    def play(self, path: str | Path, agent: Any = None) -> RunResult:
        """Play ``path``; a divergence or a bad tape fails the test with its message."""
        try:
            return play_tape_sync(self.resolve(path), agent)
        except RegistaError as exc:
            pytest.fail(str(exc), pytrace=False)


@pytest.fixture
def tape(request: pytest.FixtureRequest) -> TapePlayer:
    """A :class:`TapePlayer` for this test."""
    return TapePlayer(Path(request.config.rootpath))


@pytest.fixture
def tape_result(request: pytest.FixtureRequest, tape: TapePlayer) -> RunResult:
    """The finished run of the test's ``@pytest.mark.tape(...)``."""
    marker = request.node.get_closest_marker("tape")
    if marker is None or not marker.args:
        pytest.fail("tape_result needs @pytest.mark.tape('path/to/trace.jsonl')", pytrace=False)
    agent = marker.kwargs.get("agent")
    return tape.play(marker.args[0], agent)
