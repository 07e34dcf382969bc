"""A session id that is reused never writes into the first session's trace."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from builders import SIMPLE_SCRIPT, by_turn, simple_agent

from regista import RegistaError, TraceExistsError
from regista.providers import ScriptedProvider
from regista.trace.reader import Trace


async def test_a_second_run_with_the_same_session_id_is_refused(tmp_path: Path) -> None:
    agent = simple_agent(tmp_path, provider=ScriptedProvider(by_turn(SIMPLE_SCRIPT)))
    agent.session_id = "01JSAMESESSION0000000000000"
    first = await agent.run("Weather?")
    before = first.trace_path.read_bytes()
    for _ in range(4):  # five runs in one process
        with pytest.raises(TraceExistsError, match="a new session needs a new session_id"):
            await agent.run("Weather?")
    assert first.trace_path.read_bytes() == before
    trace = Trace.load(first.trace_path)
    assert trace.complete and trace.summary().stop_reason == "end_turn"


_RUN = textwrap.dedent(
    """
    import sys
    sys.path.insert(0, sys.argv[2])
    from builders import SIMPLE_SCRIPT, by_turn, simple_agent
    from pathlib import Path
    from regista import RegistaError
    from regista.providers import ScriptedProvider
    agent = simple_agent(Path(sys.argv[1]), provider=ScriptedProvider(by_turn(SIMPLE_SCRIPT)))
    agent.session_id = "01JSAMESESSION0000000000000"
    try:
        print(agent.run_sync("Weather?").stop_reason)
    except RegistaError as exc:
        print("refused:", type(exc).__name__)
    """
)


def test_two_processes_one_session_id_one_trace(tmp_path: Path) -> None:
    tests = str(Path(__file__).parents[1])
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _RUN, str(tmp_path), tests], stdout=subprocess.PIPE, text=True
        )
        for _ in range(2)
    ]
    outs = sorted(p.communicate(timeout=60)[0].strip() for p in procs)
    assert outs == ["end_turn", "refused: TraceExistsError"]
    trace = Trace.load(tmp_path / "01JSAMESESSION0000000000000.jsonl")
    assert trace.complete and trace.summary().stop_reason == "end_turn"


def test_the_error_is_a_regista_error_with_one_line(tmp_path: Path) -> None:
    agent = simple_agent(tmp_path)
    agent.session_id = "01JSAMESESSION0000000000001"
    (tmp_path / "01JSAMESESSION0000000000001.jsonl").write_text("not mine\n")
    with pytest.raises(RegistaError) as info:
        asyncio.run(agent.run("Weather?"))
    assert "\n" not in str(info.value)
    assert (tmp_path / "01JSAMESESSION0000000000001.jsonl").read_text() == "not mine\n"
