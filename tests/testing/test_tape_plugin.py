"""The tape-test pytest plugin and ``regista test``."""

from __future__ import annotations

import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from builders import SIMPLE_SCRIPT, simple_agent

from regista.cli.main import main
from regista.errors import ProviderError, TraceWarning
from regista.providers import ScriptedProvider
from regista.testing import TapeMismatch, play_tape

pytest_plugins = ["pytester"]

ROOT = Path(__file__).parents[2]
HAPPY = ROOT / "sample_traces" / "refund_happy.jsonl"
#: A user's pytest run of tapes, without the plugins this project's own suite carries
#: (each costs its start-up in every process the run starts).
_LEAN = ("-p", "no:cacheprovider", "-p", "no:langsmith_plugin", "-p", "no:textual-snapshot")

CHANGED_AGENT = """
from regista.samples import refund

def changed_agent():
    agent = refund.refund_agent()
    agent.instructions = agent.instructions[:-1] + "!"
    return agent
"""


async def test_play_tape_passes_for_the_current_agent() -> None:
    result = await play_tape(HAPPY)
    assert result.stop_reason == "end_turn"
    assert result.cost_usd == 0.0


async def test_a_prompt_change_fails_with_step_field_and_character(tmp_path: Path) -> None:
    from regista.samples.refund import refund_agent

    agent = refund_agent()
    agent.instructions = (agent.instructions or "")[:-1] + "!"
    with pytest.raises(TapeMismatch) as info:
        await play_tape(HAPPY, agent)
    message = str(info.value)
    assert message.startswith(
        "refund_happy.jsonl: diverged at step 0 (model call): request.system:"
    )
    assert "first difference at character" in message
    assert "else!'" in message


async def test_a_shorter_run_fails_at_the_end(tmp_path: Path) -> None:
    recorded = await simple_agent(tmp_path).run("Weather?")
    lines = recorded.trace_path.read_text().splitlines()
    # the recording says the session ended one model call later than the agent will
    agent = simple_agent(tmp_path)
    agent.max_turns = 2
    with pytest.raises(TapeMismatch, match="end of run"):
        await play_tape(recorded.trace_path, agent)
    assert lines


async def test_a_tape_that_ended_in_a_provider_error_passes_when_reproduced(
    tmp_path: Path,
) -> None:
    failing = simple_agent(tmp_path / "orig", provider=ScriptedProvider(SIMPLE_SCRIPT[:1]))
    with pytest.raises(ProviderError):
        await failing.run("Weather?")
    (tape,) = (tmp_path / "orig").glob("*.jsonl")
    result = await play_tape(tape, simple_agent(tmp_path / "now"))
    assert result.stop_reason == "error" and "asked for another" in (result.error or "")


def test_plugin_marker_and_fixture(pytester: pytest.Pytester) -> None:
    shutil.copy(HAPPY, pytester.path / "golden.jsonl")
    pytester.makepyfile(
        changed=CHANGED_AGENT,
        test_golden="""
import pytest

@pytest.mark.tape("golden.jsonl")
def test_ok(tape_result):
    assert tape_result.stop_reason == "end_turn"

@pytest.mark.tape("golden.jsonl", agent="changed:changed_agent")
def test_changed(tape_result):
    pass

def test_fixture(tape):
    assert tape.play("golden.jsonl").cost_usd == 0.0
""",
    )
    result = pytester.runpytest_subprocess("--strict-markers", *_LEAN)
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(["*golden.jsonl: diverged at step 0 (model call): request.system*"])
    assert "Traceback" not in result.stdout.str()


def test_plugin_under_xdist(pytester: pytest.Pytester) -> None:
    shutil.copy(HAPPY, pytester.path / "golden.jsonl")
    pytester.makepyfile(
        test_x="""
import pytest

@pytest.mark.parametrize("n", range(4))
@pytest.mark.tape("golden.jsonl")
def test_ok(tape_result, n):
    assert tape_result.stop_reason == "end_turn"
""",
    )
    result = pytester.runpytest_subprocess("-n", "2", "--strict-markers", *_LEAN)
    result.assert_outcomes(passed=4)


def test_regista_test_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tapes = tmp_path / "tapes"
    tapes.mkdir()
    shutil.copy(HAPPY, tapes / "happy.jsonl")
    report = tmp_path / "report.xml"
    assert main(["test", str(tapes), "--junit", str(report)]) == 0
    out = capsys.readouterr().out
    assert "[1/1] PASS" in out and "1 passed, 0 failed" in out
    suite = ET.parse(report).getroot().find("testsuite")
    assert suite is not None and suite.get("tests") == "1" and suite.get("failures") == "0"


def test_regista_test_cli_failure(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "changed.py").write_text(CHANGED_AGENT)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    shutil.copy(HAPPY, tmp_path / "happy.jsonl")
    report = tmp_path / "out" / "report.xml"
    code = main(["test", "happy.jsonl", "--agent", "changed:changed_agent", "--junit", str(report)])
    assert code == 1
    out = capsys.readouterr().out
    assert "FAIL happy.jsonl" in out and "0 passed, 1 failed" in out
    failure = ET.parse(report).getroot().find("testsuite/testcase/failure")
    assert failure is not None and "request.system" in (failure.text or "")


def test_regista_test_cli_no_traces(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["test", str(tmp_path)]) == 1
    assert "no traces" in capsys.readouterr().err


def test_regista_test_cli_finds_traces_in_a_folder_it_was_given(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Folders such as .regista or .venv are skipped below PATH, not when PATH is one."""
    traces = tmp_path / ".regista" / "traces"
    traces.mkdir(parents=True)
    shutil.copy(HAPPY, traces / "happy.jsonl")
    (traces / ".venv").mkdir()
    (traces / ".venv" / "junk.jsonl").write_text("not a trace\n")
    assert main(["test", str(traces)]) == 0
    out = capsys.readouterr().out
    assert "[1/1] PASS" in out and "junk" not in out


def test_regista_test_cli_a_broken_tape_is_an_error_whatever_its_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "diverged_refund.jsonl").write_text("not json\n")
    assert main(["test", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "ERROR" in out and "0 passed, 0 failed, 1 error\n" in out


def test_regista_test_cli_plays_a_fork_like_any_golden_trace(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], sample_db: Path
) -> None:
    """A fork records its edit like any answer, so it replays: a fixed run can be a tape."""
    import asyncio

    from regista import ToolResultEdit, fork

    loop = ROOT / "sample_traces" / "refund_search_loop.jsonl"
    hit = ToolResultEdit("Found it: ORD-1042")
    forked = asyncio.run(fork(loop, 1, hit, live_after=1, trace_dir=tmp_path / "tapes"))
    assert forked.stop_reason == "end_turn"
    assert main(["test", str(tmp_path / "tapes")]) == 0
    out = capsys.readouterr().out
    assert "[1/1] PASS" in out and "1 passed, 0 failed" in out


def _cut_tapes(folder: Path) -> None:
    """An unfinished tape (no session.end) and one whose last line is half-written."""
    lines = HAPPY.read_text().splitlines(keepends=True)
    (folder / "unfinished.jsonl").write_text("".join(lines[:12]))
    (folder / "truncated.jsonl").write_text("".join(lines[:12]) + lines[12][:40])


def test_regista_test_cli_fails_a_cut_short_tape(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _cut_tapes(tmp_path)
    with pytest.warns(TraceWarning, match="dropped a half-written last line"):
        assert main(["test", str(tmp_path), "--junit", str(tmp_path / "r.xml")]) == 1
    out = capsys.readouterr().out
    assert "[1/2] FAIL" in out and "[2/2] FAIL" in out and "SKIP" not in out
    assert "truncated.jsonl: not a usable tape: its last line is half-written" in out
    assert "unfinished.jsonl: not a usable tape: its session never ended" in out
    assert "0 passed, 2 failed\n" in out
    assert 'failures="2"' in (tmp_path / "r.xml").read_text()


def test_plugin_fails_a_cut_short_tape(pytester: pytest.Pytester) -> None:
    _cut_tapes(pytester.path)
    pytester.makepyfile(
        test_cut="""
import pytest

@pytest.mark.tape("unfinished.jsonl")
def test_unfinished(tape_result):
    pass

@pytest.mark.tape("truncated.jsonl")
def test_truncated():
    pass
"""
    )
    result = pytester.runpytest_subprocess(*_LEAN)
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines(["*unfinished.jsonl: not a usable tape*"])
    assert "Traceback" not in result.stdout.str()
