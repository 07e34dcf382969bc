"""How long a step and a run took is one number in every view (docs/readers.md, "How long a
step took, and a run"): what the writer measured where it measured something, else the span
of the recorded times.

Each case is a run whose measured durations and recorded times disagree, read through every
view of the conformance of facts (``show``, ``show --json``, ``show --by``, ``runs``,
``runs --by``, the debugger's timeline, share, MCP, ``/v1/runs``, ``export``). ``show`` and
the debugger gave the measured duration, while share, MCP, ``--by`` and the export's spans
gave the span from a step's first event to its last (where longer): a tool a person approved
after 30 s took 200 ms in ``show`` and 30.2 s in the export; a run the proxy ended when it
went idle lasted its calls in ``show`` and a minute in the export; an imported tool step
without a recorded duration took 0 ms in ``show`` and its call-to-result time in share.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson
import pytest
from conformance.facts_views import VIEWS

from regista.trace.reader import Trace
from regista.trace.recorder import TraceRecorder
from regista.types import LlmResponse
from regista.wire.shapes import anthropic_request

T0 = datetime(2026, 3, 2, 9, 15, tzinfo=UTC)

#: How far each view may round a step's and the run's time, in ms (as the conformance of
#: facts allows it: ``show`` prints whole ms and 1/100 s).
WITHIN = {"show": (0.5, 5.0)}


def _clock(seconds: list[float]) -> Any:
    """A recorder clock that writes the given times (seconds after :data:`T0`) in turn."""
    times: Iterator[float] = iter(seconds)

    def ts() -> str:
        t = T0 + timedelta(seconds=next(times))
        return t.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"

    return ts


def _request(text: str) -> Any:
    return anthropic_request(
        {"model": "m", "max_tokens": 9, "messages": [{"role": "user", "content": text}]}
    )


def _answer(content: list[dict[str, Any]], stop: str) -> LlmResponse:
    return LlmResponse.model_validate(
        {"content": content, "stop_reason": stop, "usage": {"input_tokens": 5, "output_tokens": 2}}
    )


_USE = {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "ls"}}
_DONE = [{"type": "text", "text": "done"}]


def _write(path: Path, times: list[float], ms: dict[str, float]) -> Path:
    """A model call, a tool step, a model call and the end, at ``times`` (one per event),
    with the durations ``ms`` (``model``, ``tool``, ``answer``, ``run``) recorded."""
    rec = TraceRecorder.create(path, path.stem, clock=_clock(times))
    rec.start(task="list", model="m", provider="scripted")
    step = rec.request(_request("list"))
    rec.response(step, _answer([_USE], "tool_use"), provider="scripted", duration_ms=ms["model"])
    tool = rec.tool_call("toolu_1", "Bash", {"command": "ls"})
    rec.decision(tool, "toolu_1", allowed=True, by="policy", reason=None)
    rec.tool_result(tool, "toolu_1", "Bash", "a.txt", duration_ms=ms["tool"])
    step = rec.request(_request("list"))
    rec.response(step, _answer(_DONE, "end_turn"), provider="scripted", duration_ms=ms["answer"])
    rec.end("end_turn", output="done", duration_ms=ms["run"])
    return path


def _approved(folder: Path) -> Path:
    """The loop's way: a tool a person approved 30 s after it was asked for ran 200 ms."""
    times = [0.0, 0.0, 1.0, 1.0, 31.0, 31.2, 31.2, 32.0, 32.0]
    ms = {"model": 900.0, "tool": 200.0, "answer": 700.0, "run": 32_100.0}
    return _write(folder / "approved.jsonl", times, ms)


def _proxied(folder: Path) -> Path:
    """The proxy's way: a call's request and answer are written at one time, when the
    answer has come, the tool step's events with the call that brought its result, and the
    run's end when it went idle, a minute after its last call (its duration: from the first
    call's start to the last call's end)."""
    times = [1.2, 1.2, 1.2, 4.7, 4.7, 4.7, 4.7, 4.7, 65.0]
    ms = {"model": 1200.0, "tool": 3000.0, "answer": 500.0, "run": 4700.0}
    return _write(folder / "proxied.jsonl", times, ms)


def _imported(folder: Path, tmp_path: Path, measured: bool) -> Path:
    """A Claude Code session imported: its tool steps last from the answer that asked for
    them to their results; ``measured`` false drops the durations the importer recorded (an
    older import, which recorded none: 0)."""
    from importers.cc_fixtures import basic_session

    from regista.cli.main import main

    source = basic_session().write(tmp_path / "4f1c2a9e.jsonl")
    assert main(["import", "claude-code", str(source), "--trace-dir", str(folder)]) == 0
    (path,) = folder.glob("*.jsonl")
    if not measured:
        lines = []
        for line in path.read_bytes().splitlines():
            ev = orjson.loads(line)
            if ev["type"] in ("tool.result", "session.end"):
                ev["duration_ms"] = 0.0
            lines.append(orjson.dumps(ev))
        path.write_bytes(b"\n".join(lines) + b"\n")
    return path


def _want(path: Path) -> tuple[float, tuple[float, ...]]:
    from conformance.test_facts import expected_durations

    return expected_durations(path)


CASES = ["approved", "proxied", "imported", "imported-unmeasured"]


@pytest.mark.parametrize("case", CASES)
def test_every_view_gives_each_step_and_the_run_one_duration(case: str, tmp_path: Path) -> None:
    folder = tmp_path / "runs"
    folder.mkdir()
    if case == "approved":
        path = _approved(folder)
    elif case == "proxied":
        path = _proxied(folder)
    else:
        path = _imported(folder, tmp_path, measured=case == "imported")
    run_ms, step_ms = _want(path)
    if case == "approved":
        assert (run_ms, step_ms) == (32_100.0, (900.0, 200.0, 700.0))
    elif case == "proxied":
        assert (run_ms, step_ms) == (4700.0, (1200.0, 3000.0, 500.0))
    else:  # the tool steps take their call-to-result times either way
        tools = [ms for ms, st in zip(step_ms, Trace.load(path).steps(), strict=True)
                 if st.kind == "tool"]  # fmt: skip
        assert tools and all(ms > 0 for ms in tools), step_ms
    problems = []
    for view, read in VIEWS.items():
        seen = read(path)
        step_within, run_within = WITHIN.get(view, (0.0011, 0.0011))
        if seen.step_ms is not None:
            got = tuple(ms or 0.0 for ms in seen.step_ms)
            if len(got) != len(step_ms) or any(
                abs(a - b) > step_within for a, b in zip(got, step_ms, strict=True)
            ):
                problems.append(f"{view}: steps {got}, want {step_ms}")
        if seen.steps_ms is not None and abs(seen.steps_ms - sum(step_ms)) > 0.01:
            problems.append(f"{view}: steps in all {seen.steps_ms}, want {sum(step_ms)}")
        if seen.duration_ms is not None and abs(seen.duration_ms - run_ms) > run_within:
            problems.append(f"{view}: run {seen.duration_ms}, want {run_ms}")
    assert not problems, "\n".join(problems)


def test_a_span_ends_at_its_closing_event_and_lasts_the_step_s_time(tmp_path: Path) -> None:
    """The waterfall's and the export's place of a step: it ends when what it measured had
    ended (its closing event), and starts its duration before; the run starts at its first
    step's start where that is before its first event (the proxy's ``session.start``)."""
    from regista.breakdown import run_span, step_time

    trace = Trace.load(_proxied(tmp_path))
    at = int(T0.timestamp()) * 10**9
    spans = [step_time(st)[1] for st in trace.steps()]
    assert spans == [
        (at, at + 1_200_000_000),
        (at + 1_700_000_000, at + 4_700_000_000),
        (at + 4_200_000_000, at + 4_700_000_000),
    ]
    assert run_span(trace, spans) == (at, at + 4_700_000_000)


def test_a_denied_call_and_a_call_cut_short(tmp_path: Path) -> None:
    """A denied tool call ran nothing (0); a step with no closing event lasts until its last
    event (the time so far); a duration that is not a positive number counts as none."""
    from regista.breakdown import step_time

    times = [0.0, 0.0, 1.0, 1.0, 5.0, 6.0, 6.0, 9.0]
    rec = TraceRecorder.create(tmp_path / "t.jsonl", "t", clock=_clock(times))
    rec.start(task="list", model="m", provider="scripted")
    step = rec.request(_request("list"))
    rec.response(step, _answer([_USE], "tool_use"), provider="scripted", duration_ms=-3.0)
    tool = rec.tool_call("toolu_1", "Bash", {"command": "ls"})
    rec.decision(tool, "toolu_1", allowed=False, by="policy", reason="no")
    rec.tool_result(tool, "toolu_1", "Bash", "denied", is_error=True, duration_ms=50.0)
    cut = rec.tool_call("toolu_2", "Bash", {"command": "pwd"})
    rec.error("tool", "Crash", "the process died", step=cut)
    rec.close()
    steps = Trace.load(tmp_path / "t.jsonl").steps()
    assert [step_time(st)[0] for st in steps] == [1000.0, 0.0, 3000.0]
