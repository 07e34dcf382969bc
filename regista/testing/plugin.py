"""pytest plugin: golden traces as regression tests (registered via ``pytest11``).

Mark a test with the tape it plays; the ``tape_result`` fixture holds the finished run::

    @pytest.mark.tape("sample_traces/refund_happy.jsonl")
    def test_refund_still_works(tape_result):
        assert tape_result.stop_reason == "end_turn"

    @pytest.mark.tape("tapes/checkout.jsonl", agent="myapp.agents:checkout_agent")
    def test_checkout(tape_result): ...

Or play tapes yourself with the ``tape`` fixture: ``tape.play(path, agent=None)``.
Masks (the volatile spans a strict match ignores, :mod:`regista.diff.masks`) come from
``masks=`` on the marker or in ``tape.play``, else from ``--regista-masks FILE``; a request
that differs only there passes, and ``tape_result.verdicts`` says ``masked`` for its step.
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
    "tape(path, agent=None, masks=None): play a golden regista trace against the current agent "
    "(strict replay, $0); the result is the tape_result fixture"
)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.getgroup("regista").addoption(
        "--regista-masks",
        metavar="FILE",
        default=None,
        help="a mask file (TOML) for every tape test: the volatile spans a strict match "
        "ignores (regista masks learn writes one)",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", MARKER_HELP)


_FAILURE = pytest.StashKey[str]()
_PLAYED = pytest.StashKey[bool]()


class TapePlayer:
    """Plays tapes for a test; paths resolve against the pytest root directory."""

    def __init__(self, root: Path, masks: str | None = None) -> None:
        self.root = root
        self.masks = masks

    def resolve(self, path: str | Path) -> Path:
        p = Path(path)
        return p if p.is_absolute() else self.root / p

    def try_play(
        self, path: str | Path, agent: Any = None, masks: Any = None
    ) -> tuple[RunResult | None, str]:
        """Play ``path``: the result, or ``None`` and the reason it failed."""
        masks = masks if masks is not None else self.masks
        if isinstance(masks, str | Path):
            masks = self.resolve(masks)
        try:
            return play_tape_sync(self.resolve(path), agent, masks=masks), ""
        except RegistaError as exc:
            return None, str(exc)

    def play(self, path: str | Path, agent: Any = None, masks: Any = None) -> RunResult:
        """Play ``path``; a divergence or a bad tape fails the test with its message."""
        result, failure = self.try_play(path, agent, masks)
        if result is None:
            pytest.fail(failure, pytrace=False)
        return result


def _marked(item: pytest.Item) -> pytest.Mark | None:
    marker = item.get_closest_marker("tape")
    return marker if marker is not None and marker.args else None


@pytest.fixture
def tape(request: pytest.FixtureRequest) -> TapePlayer:
    """A :class:`TapePlayer` for this test."""
    return _player(request.config)


def _player(config: pytest.Config) -> TapePlayer:
    return TapePlayer(Path(config.rootpath), config.getoption("--regista-masks", None))


@pytest.fixture
def tape_result(request: pytest.FixtureRequest, tape: TapePlayer) -> RunResult | None:
    """The finished run of the test's ``@pytest.mark.tape(...)``.

    A tape that fails is reported as the test's failure (not a setup error): the test body
    is then not run.
    """
    marker = _marked(request.node)
    if marker is None:
        pytest.fail("tape_result needs @pytest.mark.tape('path/to/trace.jsonl')", pytrace=False)
    result, failure = tape.try_play(
        marker.args[0], marker.kwargs.get("agent"), marker.kwargs.get("masks")
    )
    request.node.stash[_PLAYED] = True
    if result is None:
        request.node.stash[_FAILURE] = failure
    return result


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_call(item: pytest.Item) -> None:
    """Fail a tape test whose tape diverged; play the tape of a marked test that did not
    ask for ``tape_result``."""
    marker = _marked(item)
    if marker is None:
        return
    failure = item.stash.get(_FAILURE, "")
    if not item.stash.get(_PLAYED, False):
        _, failure = _player(item.config).try_play(
            marker.args[0], marker.kwargs.get("agent"), marker.kwargs.get("masks")
        )
    if failure:
        pytest.fail(failure, pytrace=False)
