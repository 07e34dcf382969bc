"""The README's Python blocks run as written (each in a fresh folder and interpreter)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from builders import SIMPLE_SCRIPT, simple_agent

from regista import ScriptedProvider, ToolResultEdit, fork
from regista.errors import ProviderError
from regista.trace.reader import Trace

ROOT = Path(__file__).resolve().parents[1]
BLOCK = re.compile(r"^ *```python\n(.*?)^ *```", re.S | re.M)


def _blocks() -> list[str]:
    return [
        re.sub(r"^ {3}", "", b, flags=re.M)  # blocks inside a numbered list are indented
        for b in BLOCK.findall((ROOT / "README.md").read_text(encoding="utf-8"))
    ]


def _run(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(cwd), "REGISTA_SAMPLE_DB": str(cwd / "shop.db")}
    return subprocess.run(
        args, cwd=cwd, env=env, capture_output=True, text=True, timeout=120, check=False
    )


def test_the_readme_has_the_blocks_this_test_knows() -> None:
    blocks = _blocks()
    assert len(blocks) == 2
    assert "asyncio.run(main())" in blocks[0]
    assert "@pytest.mark.tape" in blocks[1]


def test_the_api_tour_runs_as_written(tmp_path: Path) -> None:
    tour = _blocks()[0]
    (tmp_path / "tour.py").write_text(tour, encoding="utf-8")
    proc = _run([sys.executable, "tour.py"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].endswith(" end_turn Paris: Sunny, 21°C 0.0")
    assert lines[1] == "Paris: Raining end_turn end_turn 0.0"  # the fork went on live
    assert lines[2] == "Divergence(a_step=1, b_step=1, kind='changed_decision')"
    traces = list((tmp_path / ".regista" / "traces").glob("*.jsonl"))
    assert len(traces) == 7  # run, 3 replays, resume, fork, rewind


def test_the_tape_test_example_runs(tmp_path: Path) -> None:
    """The pytest example, with a tape and the agent module it names."""
    (tmp_path / "tests" / "tapes").mkdir(parents=True)
    shutil.copy(
        ROOT / "sample_traces" / "refund_happy.jsonl",
        tmp_path / "tests" / "tapes" / "checkout.jsonl",
    )
    (tmp_path / "myapp").mkdir()
    (tmp_path / "myapp" / "__init__.py").write_text("")
    (tmp_path / "myapp" / "agents.py").write_text(
        "from regista.samples.refund import refund_agent as checkout_agent\n"
    )
    (tmp_path / "test_checkout.py").write_text(_blocks()[1], encoding="utf-8")
    proc = _run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"], tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "1 passed" in proc.stdout


async def test_a_spent_list_script_says_how_to_fork(tmp_path: Path) -> None:
    """A list-scripted provider answers each call once: forking with the agent that used it
    up fails with one message that says what to do, and the fork's trace says so too."""
    agent = simple_agent(tmp_path, provider=ScriptedProvider(SIMPLE_SCRIPT))
    result = await agent.run("Weather?")
    with pytest.raises(ProviderError, match="script a function of the request") as info:
        await fork(result.trace_path, 1, ToolResultEdit("Snow."), agent=agent)
    assert info.value.trace_path is not None
    end = Trace.load(info.value.trace_path).end
    assert end is not None and end.stop_reason == "error"
