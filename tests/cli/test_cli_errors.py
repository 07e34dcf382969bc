"""The command line's errors as a user meets them: the usage shown, the hint, the exit code.

Exit codes (README, "The command line"): 0 done, 1 done and the answer is no, 2 not done as
asked (an unknown option, a bad value, a path that names nothing).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from regista.cli.main import EXIT_USAGE, SUMMARIES, TAKES_COMMAND, main

SAMPLE = Path(__file__).parents[2] / "sample_traces" / "refund_happy.jsonl"


def _usage_error(argv: list[str], capsys: pytest.CaptureFixture[str]) -> list[str]:
    """The lines on stderr of a run that argparse refuses (exit 2), stdout empty."""
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == EXIT_USAGE
    out, err = capsys.readouterr()
    assert out == "" and "Traceback" not in err
    return err.splitlines()


@pytest.mark.parametrize(
    ("argv", "fixed"),
    [
        (["record", "python", "agent.py"], "regista record -- python agent.py"),
        (
            ["record", "--trace-dir", "d", "python", "my agent.py", "-v"],
            "regista record --trace-dir d -- python 'my agent.py' -v",
        ),
        (
            ["replay", str(SAMPLE), "python", "agent.py"],
            f"regista replay {SAMPLE} -- python agent.py",
        ),
        # the command's first word was taken for the trace, which is no file
        (["replay", "python", "agent.py"], "regista replay TRACE -- python agent.py"),
        (
            ["fork", str(SAMPLE), "--at", "1", "--tool-result", "x", "node", "a.js"],
            f"regista fork {SAMPLE} --at 1 --tool-result x -- node a.js",
        ),
        (["rewind", "python", "a.py", "--at", "2"], "regista rewind TRACE --at 2 -- python a.py"),
        (
            ["test", "tapes", "--junit", "r.xml", "node", "a.js"],
            "regista test tapes --junit r.xml -- node a.js",
        ),
    ],
)
def test_a_missing_double_dash_says_where_the_command_goes(
    argv: list[str], fixed: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """`regista record python agent.py`: the command's own usage, and one line naming the
    command line that works."""
    usage, *_, error = _usage_error(argv, capsys)
    assert usage.startswith(f"usage: regista {argv[0]} ")
    assert error.startswith(f"regista {argv[0]}: error: unrecognized arguments: ")
    assert error.endswith(f"; the command to run goes after --: {fixed}")


def test_every_command_that_runs_one_is_covered() -> None:
    assert set(TAKES_COMMAND) == {"record", "replay", "fork", "rewind", "test", "sweep"}


@pytest.mark.parametrize(
    "argv",
    [
        ["show", "--bogus", "x"],
        ["replay", "--bogus", "x"],
        ["diff", "--bogus", "x", "a", "b"],
        ["runs", "--bogus", "x"],
        ["rewind", "t", "--at", "1", "--bogus", "x"],
        ["record", "--bogus", "x"],
    ],
)
def test_an_unknown_option_shows_the_commands_usage(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    """`regista show --bogus x`: show's usage, not the top level's, and no `--` hint."""
    command = argv[0]
    *usage, error = _usage_error(argv, capsys)
    assert usage[0].startswith(f"usage: regista {command} ")
    assert error.startswith(f"regista {command}: error: unrecognized arguments: --bogus")
    assert "goes after --" not in error


def test_an_unknown_option_before_the_command_is_the_top_levels(
    capsys: pytest.CaptureFixture[str],
) -> None:
    usage, error = _usage_error(["--bogus", "show", "x"], capsys)
    assert usage.startswith("usage: regista [-h]")
    assert error == "regista: error: unrecognized arguments: --bogus"


def _missing_path_commands(missing: Path, out: Path) -> dict[str, list[list[str]]]:
    """Every command that reads a path, given one that names nothing (by command)."""
    m, s, o = str(missing), str(SAMPLE), str(out)
    return {
        "show": [["show", m]],
        "replay": [["replay", m], ["replay", m, "--", sys.executable, "-c", "pass"]],
        "resume": [["resume", m, "--trace-dir", o]],
        "fork": [["fork", m, "--at", "1", "--tool-result", "x", "--trace-dir", o]],
        "rewind": [["rewind", m, "--at", "1", "--trace-dir", o]],
        "diff": [["diff", m, s], ["diff", s, m]],
        "test": [["test", m]],
        "export": [["export", m, "--console"]],
        "runs": [["runs", m]],
        "recall": [["recall", "refund", "--dir", m]],
        "import": [
            ["import", fmt, m, "--trace-dir", o] for fmt in ("claude-code", "codex", "otlp")
        ],
        "share": [["share", m, "-o", f"{o}/a.html"], ["share", s, m, "-o", f"{o}/b.html"]],
        "mcp": [["mcp", m]],
        "verify": [["verify", m]],
        "redact": [["redact", m, "-o", f"{o}/r.jsonl"]],
        "masks": [["masks", "--masks", m]],
        "watch": [
            ["watch", "--claude", m, "--once", "--into", o],
            ["watch", "--codex", m, "--once", "--into", o],
        ],
        "doctor": [["doctor", "--claude", m], ["doctor", "--codex", m]],
        "sweep": [
            ["sweep", m, "--at", "1", "--tool-result", "x", "--out", f"{o}/sw"],
            ["sweep", s, "--at", "1", "--variants", m, "--out", f"{o}/sw"],
        ],
    }


#: Commands that read no path the user gives (they make their folder).
_NO_PATH_READ = {"record", "serve"}


def test_every_command_that_reads_a_path_is_checked(tmp_path: Path) -> None:
    table = _missing_path_commands(tmp_path / "nope", tmp_path)
    assert set(table) | _NO_PATH_READ == set(SUMMARIES)


def test_a_missing_path_exits_2_with_one_line_in_every_command(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The same code everywhere: 2, as for any misuse (`diff` keeps 1 for runs that
    differ), with one `regista: …` line naming the path."""
    missing = tmp_path / "nope" / "missing.jsonl"
    wrong = []
    for argvs in _missing_path_commands(missing, tmp_path / "out").values():
        for argv in argvs:
            code = main(argv)
            err = capsys.readouterr().err
            ok = (
                code == 2
                and err.count("\n") == 1
                and err.startswith("regista: ")
                and "Traceback" not in err
                and str(missing) in err
            )
            if not ok:
                wrong.append(f"regista {' '.join(argv)}: exit {code}, stderr {err!r}")
    assert not wrong, "\n".join(wrong)


def test_a_missing_path_exits_2_from_the_shell(tmp_path: Path) -> None:
    """The installed entry point gives the same code as main()."""
    missing = tmp_path / "missing.jsonl"
    done = subprocess.run(
        [sys.executable, "-m", "regista", "show", str(missing)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2
    assert done.stderr == f"regista: {missing}: no such trace file\n"
