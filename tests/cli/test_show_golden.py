"""``regista show`` prints exactly the same bytes for the same trace.

Each case's output is kept under ``show_golden/``; a faster way to lay out the same table
must still match it byte for byte. To write the files again after a change that is meant
to change the output: ``REGISTA_UPDATE_GOLDEN=1 .venv/bin/pytest tests/cli/test_show_golden.py``.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from show_odd import odd_trace

from regista.cli.main import main

HERE = Path(__file__).parent
GOLDEN = HERE / "show_golden"
SAMPLES = HERE.parents[1] / "sample_traces"

TRACES = {
    "happy": lambda tmp: SAMPLES / "refund_happy.jsonl",
    "denied": lambda tmp: SAMPLES / "refund_denied_compaction.jsonl",
    "loop": lambda tmp: SAMPLES / "refund_search_loop.jsonl",
    "odd": lambda tmp: odd_trace(tmp / "odd.jsonl"),
    "odd_fork": lambda tmp: odd_trace(tmp / "odd.jsonl", fork=True, end=False),
    "no_steps": lambda tmp: odd_trace(tmp / "odd.jsonl", steps=False),
    "shuffled": lambda tmp: odd_trace(tmp / "odd.jsonl", shuffled=True),
}
# (columns, --full, colour)
LAYOUTS = {
    "160": ("160", False, False),
    "70": ("70", False, False),
    "30": ("30", False, False),
    "full": ("100", True, False),
    "colour": ("120", False, True),
}


def _cut(path: Path) -> Path:
    """The trace with its last line half-written."""
    cut = path.with_name("cut.jsonl")
    cut.write_bytes(path.read_bytes()[:-25])
    return cut


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
@pytest.mark.parametrize("trace", [*sorted(TRACES), "odd_cut"])
def test_the_same_trace_shows_the_same_bytes(
    trace: str,
    layout: str,
    tmp_path: Path,
    capsysbinary: pytest.CaptureFixture[bytes],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    columns, full, colour = LAYOUTS[layout]
    monkeypatch.setenv("COLUMNS", columns)
    monkeypatch.delenv("NO_COLOR", raising=False)
    if colour:
        monkeypatch.setenv("FORCE_COLOR", "1")
    else:
        monkeypatch.delenv("FORCE_COLOR", raising=False)
    path = _cut(TRACES["odd"](tmp_path)) if trace == "odd_cut" else TRACES[trace](tmp_path)
    code = main(["show", *(["--full"] if full else []), str(path)])
    out, err = capsysbinary.readouterr()
    assert (code, err) == (0, b"")
    expected = GOLDEN / f"{trace}-{layout}.txt"
    if os.environ.get("REGISTA_UPDATE_GOLDEN"):
        expected.write_bytes(out)
    assert out == expected.read_bytes()


@pytest.mark.parametrize("trace", sorted(TRACES))
def test_the_start_of_a_gist_is_the_start_of_the_whole_gist(trace: str, tmp_path: Path) -> None:
    from regista.trace.reader import Trace
    from regista.vocab import gist_of, step_gist

    for step in Trace.load(TRACES[trace](tmp_path)).steps():
        whole = step_gist(step)
        errors = step.errors
        for limit in (0, 1, 2, 5, 20, 36, 50, 100, 1000):
            start = gist_of(
                step.kind,
                response=step.response_event,
                call=step.tool_call,
                result=step.result,
                compaction=step.compaction,
                error=errors[0] if errors else None,
                limit=limit,
            )
            assert whole.startswith(start)
            assert start == whole or len(start) >= limit
