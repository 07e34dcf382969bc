"""``regista replay / resume / fork / rewind`` from the command line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from builders import SIMPLE_SCRIPT, simple_agent, write_whole

from regista.cli.main import main
from regista.errors import ProviderError
from regista.providers import ScriptedProvider
from regista.trace.reader import Trace

ROOT = Path(__file__).parents[2]
HAPPY = ROOT / "sample_traces" / "refund_happy.jsonl"
LOOP = ROOT / "sample_traces" / "refund_search_loop.jsonl"


pytestmark = pytest.mark.usefixtures("sample_db")  # agents made from agent_ref


def test_replay(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["replay", str(HAPPY), "--trace-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "replayed: end_turn after 9 steps (9 recorded, 0 edited, 0 live), cost $0.0000" in out
    [written] = tmp_path.glob("*.jsonl")
    assert Trace.load(written).start.replay_of == Trace.load(HAPPY).session_id


def test_replay_divergence_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    recorded = simple_agent(tmp_path).run_sync("Weather?")
    write_whole(recorded.trace_path)
    lines = recorded.trace_path.read_text().splitlines()
    out = []
    for ln in lines:
        ev = json.loads(ln)
        if ev["type"] == "tool.result" and ev["tool_use_id"] == "toolu_1":
            ev["content"] = "Snow."
        out.append(json.dumps(ev))
    recorded.trace_path.write_text("\n".join(out) + "\n")
    assert main(["replay", str(recorded.trace_path), "--trace-dir", str(tmp_path / "r")]) == 1
    err = capsys.readouterr().err
    assert "diverged at step 2 (model call)" in err and "Traceback" not in err


def test_replay_of_a_failed_session_ends_as_recorded(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The recording ended in a provider error; the replay reproduces it: that is a faithful
    replay (exit 0), and the output says how the run ended."""
    agent = simple_agent(tmp_path / "orig", provider=ScriptedProvider(SIMPLE_SCRIPT[:1]))
    with pytest.raises(ProviderError):
        agent.run_sync("Weather?")
    (failed,) = (tmp_path / "orig").glob("*.jsonl")
    assert main(["replay", str(failed), "--trace-dir", str(tmp_path / "r")]) == 0
    out = capsys.readouterr().out
    assert "replayed: error after 3 steps (2 recorded, 0 edited, 0 live)" in out
    assert "error: ScriptedProvider: the script has 1 responses and call 2 asked" in out


def test_replay_agent_outside_hybrid_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["replay", str(HAPPY), "--agent", "regista.samples.refund:refund_agent"]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "--agent is for --mode hybrid" in err and "regista test" in err


def test_replay_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["replay", str(tmp_path / "missing.jsonl")]) != 0
    assert "no such trace file" in capsys.readouterr().err


def test_fork_cli_ends_the_loop(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    hit = Trace.load(HAPPY).steps()[1].result
    assert hit is not None and isinstance(hit.content, str)
    (tmp_path / "hit.json").write_text(hit.content)
    code = main(
        [
            "fork",
            str(LOOP),
            "--at",
            "1",
            "--tool-result",
            f"@{tmp_path / 'hit.json'}",
            "--live-after",
            "1",
            "--trace-dir",
            str(tmp_path / "forks"),
        ]
    )
    assert code == 0
    out = capsys.readouterr().out
    assert "fork at step 1: end_turn" in out
    assert "parent " in out and "max_turns" in out


def test_fork_cli_bad_edit(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        ["fork", str(HAPPY), "--at", "0", "--tool-result", "x", "--trace-dir", str(tmp_path)]
    )
    assert code == 2
    assert "a tool-result edit needs a tool step" in capsys.readouterr().err


def test_fork_cli_error_goes_with_a_tool_result_only(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["fork", str(HAPPY), "--at", "0", "--answer", "x", "--error"]
    assert main([*args, "--trace-dir", str(tmp_path)]) == 2
    assert "--error marks a new tool result" in capsys.readouterr().err
    assert not list(tmp_path.iterdir())


def test_rewind_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rewind", str(HAPPY), "--at", "6", "--trace-dir", str(tmp_path)]) == 0
    assert "rewind to step 6: end_turn after 9 steps (6 recorded, 0 edited, 3 live)" in (
        capsys.readouterr().out
    )


def test_resume_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cut = tmp_path / "crashed.jsonl"
    cut.write_text("\n".join(HAPPY.read_text().splitlines()[:12]) + "\n")
    assert main(["resume", str(cut), "--trace-dir", str(tmp_path / "resumed")]) == 0
    out = capsys.readouterr().out
    assert "resumed: end_turn" in out
    assert len(list((tmp_path / "resumed").glob("*.jsonl"))) == 1


def test_resume_without_agent_ref(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    recorded = simple_agent(tmp_path).run_sync("Weather?")
    assert main(["resume", str(recorded.trace_path)]) == 2
    assert "--agent module:attr" in capsys.readouterr().err


def test_agent_that_cannot_be_loaded(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rewind", str(HAPPY), "--at", "2", "--agent", "nowhere.at_all:agent"]) == 2
    assert "cannot import 'nowhere.at_all'" in capsys.readouterr().err


def test_cli_is_a_real_console_script(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "regista", "replay", str(tmp_path / "nope.jsonl")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode != 0
    assert proc.stderr.strip().startswith("regista: ")
    assert "Traceback" not in proc.stderr


def test_fork_of_an_unfinished_run_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cut = tmp_path / "crashed.jsonl"
    cut.write_text("\n".join(HAPPY.read_text().splitlines()[:12]) + "\n")
    args = ["fork", str(cut), "--at", "1", "--tool-result", "x", "--live-after", "1"]
    assert main([*args, "--trace-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "unfinished, cost" in out and "None" not in out
