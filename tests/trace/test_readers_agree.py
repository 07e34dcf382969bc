"""Every fast reader of a trace says what the reference says, on seeded sessions.

The reference is ``Trace.load`` (``parse_file``: every line decoded and validated), its
``steps()`` (``build_steps``) and ``summary()``. The fast paths, each a consumer of the
same table of step kinds (``regista.trace.names.STEP_KINDS``) and kept equal here:

- ``TraceIndex`` (the debugger, ``read_summary``): a scan of line heads;
- ``RunFile`` (diffs, the two-run view): one orjson pass keeping digests;
- ``Listing`` + ``StepsPass`` (``regista show``): light events in one pass;
- ``read_run`` (``regista runs``): the first and last lines.

The sessions are written by the real agent loop with a seeded scripted model: parallel
tool calls, denials, tool errors, compactions, a provider error, and unfinished runs (cut
at a line, or in the middle of one). ``REGISTA_FUZZ_SEED`` picks the seeds; the committed
samples, the schema-1 traces and the importers' traces (a Claude Code session with error
results written before their content, a Codex rollout, OpenTelemetry spans) are read too.
"""

from __future__ import annotations

import asyncio
import os
import random
import warnings
from pathlib import Path
from typing import Any

import pytest
from builders import Effects, no_rome, weather_tools
from files import SAMPLES, V1_TRACES, found

from regista import Agent, ContextConfig
from regista.cli.show_pass import StepsPass
from regista.diff.runfile import RunFile
from regista.errors import TraceWarning
from regista.loop import FakeClock
from regista.providers import ScriptedProvider
from regista.store.runs import read_run
from regista.trace.index import TraceIndex, read_summary
from regista.trace.listing import Listing
from regista.trace.names import STEP_KINDS
from regista.trace.reader import Trace

_SEED = int(os.environ.get("REGISTA_FUZZ_SEED", "1212"))
_CITIES = ["Paris", "Rome", "Oslo", "Lima", "Quito", "Accra"]


def _model(rng: random.Random, calls: int) -> Any:
    """A scripted model: ``calls`` answers, each 0–3 tool uses (Rome is denied, ``flaky``
    fails), usage with and without cache tokens; perhaps a provider error at the end."""
    state = {"n": 0}
    fail_at = calls if rng.random() < 0.2 else -1

    def answer(request: Any) -> dict[str, Any]:
        n = state["n"] = state["n"] + 1
        if request.system and request.system.startswith("You summarise"):
            return {
                "content": [{"type": "text", "text": "Summary: " + "so far " * rng.randrange(9)}],
                "stop_reason": "end_turn",
                "usage": {"input_tokens": 400, "output_tokens": 30},
            }
        if n == fail_at:
            raise RuntimeError("the provider went away")
        usage: dict[str, Any] = {
            "input_tokens": rng.randrange(5, 900),
            "output_tokens": rng.randrange(1, 300),
        }
        if rng.random() < 0.5:
            usage["cache_read_input_tokens"] = rng.randrange(0, 5000)
            usage["cache_creation_input_tokens"] = rng.randrange(0, 500)
        if n >= calls:
            text = "Done: " + " ".join(rng.choices(_CITIES, k=rng.randrange(1, 6)))
            return {"content": [{"type": "text", "text": text}], "usage": usage}
        uses = []
        for k in range(rng.choice([1, 1, 1, 2, 3])):
            uid = f"toolu_{n}_{k}"
            pick = rng.random()
            if pick < 0.15:
                args: dict[str, Any] = {"reason": "x"}
                uses.append({"type": "tool_use", "id": uid, "name": "flaky", "input": args})
            elif pick < 0.35:
                days = rng.randrange(1, 4)
                args = {"city": rng.choice(_CITIES), "days": days}
                uses.append({"type": "tool_use", "id": uid, "name": "get_forecast", "input": args})
            else:
                args = {"city": rng.choice(_CITIES)}
                uses.append({"type": "tool_use", "id": uid, "name": "get_weather", "input": args})
        content = [{"type": "text", "text": "Looking."}] if rng.random() < 0.6 else []
        return {"content": content + uses, "stop_reason": "tool_use", "usage": usage}

    return answer


def _session(folder: Path, seed: int) -> Path:
    rng = random.Random(seed)
    calls = rng.randrange(2, 14)
    agent = Agent(
        model=rng.choice(["claude-sonnet-4-6", "claude-opus-4-1", "gpt-4o-mini"]),
        instructions="You are a careful assistant.",
        tools=weather_tools(Effects()),
        provider=ScriptedProvider(_model(rng, calls)),
        policy=no_rome,
        trace_dir=folder,
        max_turns=rng.choice([calls + 2, max(1, calls - 2)]),
        context=ContextConfig(max_tokens=rng.choice([400, 1500, 100_000]), keep_last=1),
        clock=FakeClock(),
        session_id=f"01AGREE{seed:019d}",
    )
    try:
        return asyncio.run(agent.run("Weather for the trip")).trace_path
    except Exception:  # a provider error ends the run; its trace says so
        return folder / f"{agent.session_id}.jsonl"


def _variants(path: Path, rng: random.Random) -> list[Path]:
    """The whole trace, and copies cut as a process that died would leave them."""
    data = path.read_bytes()
    lines = data.split(b"\n")[:-1]
    out = [path]
    if len(lines) > 2:
        at = rng.randrange(1, len(lines))
        cut = path.with_name(path.stem + "-cut.jsonl")
        cut.write_bytes(b"\n".join(lines[:at]) + b"\n")
        out.append(cut)
        half = path.with_name(path.stem + "-half.jsonl")
        line = lines[at]
        half.write_bytes(b"\n".join(lines[:at]) + b"\n" + line[: max(1, len(line) // 2)])
        out.append(half)
    return out


def _imported(folder: Path) -> list[Path]:
    """The traces the importers write, every run of each conversion (sub-agents too)."""
    from importers.cc_fixtures import basic_session, text, tool_use
    from importers.test_fuzz import SEEDS

    from regista.importers import convert

    cc = basic_session()
    cc.answer(tool_use("toolu_E1", "Bash", command="false"), tool_use("toolu_E2", "Read", path="x"))
    cc.tool_result("toolu_E1", "exit 1: it failed", is_error=True)
    cc.tool_result("toolu_E2", [text("the file")])
    cc.answer(text("One failed."))
    sources = {"claude-code": [cc.data(), SEEDS["claude-code"]()]}
    sources["codex"] = [SEEDS["codex"]()]
    sources["otlp"] = [SEEDS["otlp"]()]
    out = []
    for fmt, datas in sources.items():
        for i, data in enumerate(datas):
            source = folder / f"{fmt}-{i}.jsonl"
            source.write_bytes(data)
            for k, run in enumerate(convert(fmt, source, data).runs):
                path = folder / f"{fmt}-{i}-run{k}.jsonl"
                path.write_bytes(run.to_bytes())
                out.append(path)
    return out


def _traces(folder: Path) -> list[Path]:
    paths: list[Path] = []
    for i in range(12):
        seed = _SEED * 1000 + i
        sub = folder / str(i)
        sub.mkdir()
        paths += _variants(_session(sub, seed), random.Random(seed))
    imported = folder / "imported"
    imported.mkdir()
    return paths + found(SAMPLES) + found(V1_TRACES) + _imported(imported)


@pytest.fixture(scope="module")
def traces(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[Path, Trace]]:
    folder = tmp_path_factory.mktemp("agree")
    out = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TraceWarning)
        for path in _traces(folder):
            out.append((path, Trace.load(path)))
    return out


def _reference(trace: Trace) -> list[tuple[Any, ...]]:
    """Per step: number, kind, its events' line numbers, tool, error, denied, complete."""
    return [
        (
            s.index,
            s.kind,
            [ev.seq for ev in s.events],
            s.tool_call.name if s.tool_call else None,
            s.is_error,
            s.denied,
            s.complete,
        )
        for s in trace.steps()
    ]


def test_every_step_opens_with_an_event_of_the_table(traces: list[tuple[Path, Trace]]) -> None:
    for _, trace in traces:
        for step in trace.steps():
            assert STEP_KINDS[step.events[0].type] == step.kind


def test_the_index_scans_what_the_reader_reads(traces: list[tuple[Path, Trace]]) -> None:
    for path, trace in traces:
        for chunk in (None, 97):  # whole, and a few lines at a time as a growing file
            index = TraceIndex(path)
            try:
                while not index.scan(chunk):
                    pass
                got = [
                    (e.index, e.kind, e.lines, e.tool, e.error, e.denied, e.complete)
                    for e in index.steps
                ]
                assert got == _reference(trace), path
                assert index.summary() == trace.summary(), path
            finally:
                index.close()
        assert read_summary(path) == trace.summary(), path


def test_the_diff_reader_groups_as_the_reader(traces: list[tuple[Path, Trace]]) -> None:
    for path, trace in traces:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", TraceWarning)
            with RunFile(path) as run:
                run.read(final=True)
                got = [(f.index, f.kind, f.lines, f.complete) for f in run.steps()]
                errors = [[e["type"] for e in f.errors] for f in run.steps()]
                for facts in run.steps():  # a step decoded on demand is the reader's
                    assert (
                        run.step(facts).events
                        == trace.steps()[[s.index for s in trace.steps()].index(facts.index)].events
                    )
        ref = [(i, k, lines, c) for i, k, lines, _, _, _, c in _reference(trace)]
        assert got == ref, path
        assert errors == [[ev.error_type for ev in s.errors] for s in trace.steps()], path


def test_show_lists_what_the_reader_reads(traces: list[tuple[Path, Trace]]) -> None:
    for path, trace in traces:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", TraceWarning)
            listing = Listing.load(path)
        shown = StepsPass(listing, None)
        got = [
            (
                r.index,
                r.kind,
                r.tool,
                r.error is not None or r.failed,
                bool(r.denied),
                r.columns(False, None)[0],
            )
            for r in shown.rows
        ]
        ref = [
            (s.index, s.kind, s.tool_call and s.tool_call.name, s.is_error, s.denied, s.title)
            for s in trace.steps()
        ]
        assert got == ref, path
        assert shown.summary == trace.summary(), path


def test_the_run_list_says_what_the_summary_says(traces: list[tuple[Path, Trace]]) -> None:
    for path, trace in traces:
        run = read_run(path)
        summary = trace.summary()
        assert run.session_id == summary.session_id
        assert run.complete == summary.complete, path
        assert run.status == summary.status, path
        assert run.steps == summary.steps or trace.truncated, path
        if summary.complete:
            assert run.cost_usd == summary.cost_usd, path
            assert run.tokens == summary.tokens, path


def test_the_traces_hold_what_the_readers_must_agree_on(traces: list[tuple[Path, Trace]]) -> None:
    """Imported runs with error results, denials, compactions, unfinished and cut runs."""
    steps = [s for _, t in traces for s in t.steps()]
    imported = [t for p, t in traces if p.parent.name == "imported"]
    assert len(imported) >= 4
    assert any(s.is_error and s.kind == "tool" for t in imported for s in t.steps())
    assert any(s.denied for s in steps) and any(s.kind == "compaction" for s in steps)
    assert any(t.end is None for _, t in traces) and any(t.truncated for _, t in traces)
