"""``regista --help`` imports no command module, and the table it lists agrees with them."""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

from fresh import fresh_python

from regista.cli.main import COMMANDS, SUMMARIES, build_parser


def _helps(parser: argparse.ArgumentParser) -> dict[str, str]:
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return {a.dest: str(a.help) for a in sub._choices_actions}


def test_the_summary_table_matches_the_commands() -> None:
    """Every command is in the table, with its module's own one-line help."""
    assert _helps(build_parser()) == {cmd: summary for cmd, (_, summary) in SUMMARIES.items()}
    assert {module for module, _ in SUMMARIES.values()} == set(COMMANDS)


def test_help_imports_no_command_and_no_event_model() -> None:
    code = (
        "import sys\n"
        "from regista.cli.main import main\n"
        "try:\n"
        "    main(['--help'])\n"
        "except SystemExit:\n"
        "    pass\n"
        "heavy = ('pydantic', 'asyncio', 'orjson', 'regista.trace.events', 'regista.loop')\n"
        "loaded = [m for m in sys.modules if m.startswith('regista.cli.cmd_') or m in heavy]\n"
        "print('LOADED', ','.join(sorted(loaded)) or 'none')\n"
    )
    out = fresh_python(code)
    assert "LOADED none" in out
    assert "rewind" in out and "replay the first N steps" in out


def test_a_command_imports_only_its_own_module() -> None:
    code = (
        "import sys\n"
        "from regista.cli.main import main\n"
        "try:\n"
        "    main(['rewind', '--help'])\n"
        "except SystemExit:\n"
        "    pass\n"
        "print('LOADED', sorted(m for m in sys.modules if m.startswith('regista.cli.cmd_')))\n"
    )
    out = fresh_python(code)
    assert "LOADED ['regista.cli.cmd_fork']" in out
    assert "A fork with no edit" in out


def test_output_into_a_pipe_its_reader_closed_is_no_traceback(tmp_path: Path) -> None:
    """``regista show T | head -1``: the reader leaves; regista stops without a traceback."""
    from importers.cc_fixtures import CCSession, text

    session = CCSession()
    for n in range(2000):  # a listing far larger than a pipe's buffer
        session.prompt(f"question {n}")
        session.answer(text(f"answer number {n}, long enough to fill a row of the listing"))
    path = session.write(tmp_path / "long.jsonl")
    proc = subprocess.Popen(
        [sys.executable, "-m", "regista", "show", str(path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    assert proc.stdout.readline().startswith(b"Session")
    proc.stdout.close()  # regista is blocked writing the rest: that write now fails
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 1
    assert err == ""
