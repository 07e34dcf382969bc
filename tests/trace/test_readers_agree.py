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
from collections import Counter
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import orjson
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
from regista.trace import grouping
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


def _odd(path: Path, rng: random.Random) -> Path:
    """A copy of the trace with events that no writer groups this way, each a case on which
    a reader once said something else than the reference: a second decision on a step
    (denied, then allowed, or the other way), ``"allowed": false`` with a space, a second
    call of another name, a tool result or a response in a step of another kind, an error
    before its step's opener, and an error of a number no opener begins."""
    events = [orjson.loads(line) for line in path.read_bytes().split(b"\n") if line]
    out: list[dict[str, Any]] = []
    spaced: set[int] = set()
    numbers = sorted({e["step"] for e in events if type(e.get("step")) is int})
    opened: set[int] = set()
    model = [e["step"] for e in events if e["type"] == "llm.request"]
    tool = [e["step"] for e in events if e["type"] == "tool.call"]
    for ev in events:
        what, n = ev["type"], ev.get("step")
        if what in STEP_KINDS and n not in opened:
            opened.add(n)
            nxt = n + 1
            if nxt in numbers and nxt not in opened and rng.random() < 0.15:
                # an error of the next step, before its opener: of no step
                out.append({**_error(ev), "step": nxt})
        out.append(ev)
        pick = rng.random()
        if what == "permission.decision" and pick < 0.5:
            out.append({**ev, "allowed": not ev["allowed"]})
        elif what == "permission.decision" and pick < 0.8 and not ev["allowed"]:
            spaced.add(len(out) - 1)
        elif what == "tool.call" and pick < 0.2:
            out.append({**ev, "name": ev["name"] + "_again"})
        elif what == "tool.result" and pick < 0.2 and model:
            out.append({**ev, "step": rng.choice(model)})  # a result in a model step
        elif what == "llm.response" and pick < 0.2 and tool:
            # a response in a tool step (of no usage: the session's end counts none)
            answer = {**ev["response"], "usage": {}}
            out.append({**ev, "step": rng.choice(tool), "response": answer, "cost_usd": None})
        elif what == "tool.call" and pick < 0.3:
            out.append({**_error(ev), "step": 10_000 + len(out)})  # a number never opened
    lines = []
    for seq, ev in enumerate(out):
        ev["seq"] = seq
        line = orjson.dumps(ev)
        if seq in spaced:
            line = line.replace(b'"allowed":false', b'"allowed": false', 1)
        lines.append(line)
    odd = path.with_name(path.stem + "-odd.jsonl")
    odd.write_bytes(b"\n".join(lines) + b"\n")
    return odd


def _error(ev: dict[str, Any]) -> dict[str, Any]:
    keep = ("schema_version", "session_id", "seq", "ts")
    return {
        **{k: ev[k] for k in keep},
        "type": "error",
        "where": "tool",
        "error_type": "OddError",
        "message": "odd",
    }


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
        rng = random.Random(seed)
        session = _session(sub, seed)
        paths += _variants(session, rng) + _variants(_odd(session, rng), rng)
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
                bool(r.flags & grouping.ERROR),
                r.denied,
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


# -- the core itself, against the rule as docs/readers.md words it ----------------------------

_TYPES = [
    "llm.request",
    "llm.response",
    "tool.call",
    "permission.decision",
    "tool.result",
    "context.compaction",
    "error",
    "session.end",
]


def _plain(events: list[tuple[str, int | None, bool]]) -> list[tuple[Any, ...]]:
    """Per step: number, kind, its events' positions, complete, error, denied, failed; as
    docs/readers.md says it, without the core. An event is ``(type, number, field)``: a
    result's ``is_error``, a decision's ``allowed`` (else ignored)."""
    opener = {"llm.request": "model", "tool.call": "tool", "context.compaction": "compaction"}
    steps: dict[int, tuple[str, list[int]]] = {}
    for at, (what, n, _) in enumerate(events):
        if n is None:
            continue  # no number: no step
        if n not in steps:
            if what not in opener:
                continue  # a number no opener began: no step
            steps[n] = (opener[what], [])
        steps[n][1].append(at)
    out = []
    for n in sorted(steps):
        kind, ats = steps[n]
        mine = [events[a] for a in ats]
        closing = {"model": "llm.response", "tool": "tool.result"}.get(kind)
        complete = closing is None or any(what == closing for what, _, _ in mine)
        results = [value for what, _, value in mine if what == "tool.result"]
        allowed = [value for what, _, value in mine if what == "permission.decision"]
        error = any(what == "error" for what, _, _ in mine) or bool(results and results[0])
        denied = bool(allowed) and not allowed[0]
        out.append((n, kind, ats, complete, error, denied, error and not denied))
    return out


def _core(events: list[tuple[str, int | None, bool]], raw: bool) -> list[tuple[Any, ...]]:
    """The same, from the core: its grouping, and its rules applied an event at a time (to
    the type as a reader of objects meets it, or as bytes)."""
    groups = grouping.Grouping()
    ats: list[list[int]] = []
    flags: list[int] = []
    for at, (what, n, value) in enumerate(events):
        key: str | bytes = what.encode() if raw else what
        pos = groups.place(n, key)
        if pos is None:
            continue
        if pos == len(ats):
            ats.append([])
            flags.append(0)
        ats[pos].append(at)
        flags[pos] = grouping.fold(flags[pos], groups.kinds[pos], key, value)
    order = sorted(range(len(ats)), key=groups.numbers.__getitem__)
    return [
        (
            groups.numbers[p],
            groups.kinds[p],
            ats[p],
            bool(flags[p] & grouping.COMPLETE),
            bool(flags[p] & grouping.ERROR),
            bool(flags[p] & grouping.DENIED),
            grouping.failed(flags[p]),
        )
        for p in order
    ]


def _events(rng: random.Random) -> list[tuple[str, int | None, bool]]:
    top = rng.randrange(1, 8)
    return [
        (
            rng.choice(_TYPES),
            None if rng.random() < 0.1 else rng.randrange(top),
            rng.random() < 0.4,
        )
        for _ in range(rng.randrange(0, 40))
    ]


def test_the_core_groups_and_folds_as_the_rule_says() -> None:
    rng = random.Random(_SEED)
    for _ in range(3000):
        events = _events(rng)
        want = _plain(events)
        assert _core(events, raw=False) == want, events
        assert _core(events, raw=True) == want, events


def test_the_core_says_what_a_step_says(traces: list[tuple[Path, Trace]]) -> None:
    """``Step``'s facts are the core's fold of its events."""
    for _, trace in traces:
        for step in trace.steps():
            events = [(ev.type, ev.step, _field(ev)) for ev in step.events]
            flags = grouping.step_flags(step.kind, step.events)
            plain = _plain(events)
            assert len(plain) == 1 and plain[0][3:] == (
                bool(flags & grouping.COMPLETE),
                bool(flags & grouping.ERROR),
                bool(flags & grouping.DENIED),
                grouping.failed(flags),
            )


def _field(ev: Any) -> bool:
    return bool(getattr(ev, "is_error", False) or getattr(ev, "allowed", False))


def test_a_negative_number_is_refused_by_the_core() -> None:
    groups = grouping.Grouping()
    with pytest.raises(grouping.NegativeStep, match="must not be negative"):
        groups.place(-1, "tool.call")
    with pytest.raises(grouping.NegativeStep):
        grouping.opens(-3, b"error")
    assert grouping.opens(0, b"tool.call") == grouping.opens(0, "tool.call") == "tool"
    assert grouping.opens(4, "error") is None


def test_the_stepless_types_are_those_whose_model_needs_no_step() -> None:
    from regista.trace.events import EVENT_CLASSES

    needs = {
        kind
        for kind, cls in EVENT_CLASSES.items()
        if "step" in cls.model_fields and cls.model_fields["step"].is_required()
    }
    assert set(EVENT_CLASSES) - needs == grouping.STEPLESS
    assert {k.decode() for k in grouping.STEPLESS_BYTES} == grouping.STEPLESS


def test_one_table_of_kinds() -> None:
    assert grouping.KIND_OF is STEP_KINDS
    assert {k.decode(): v for k, v in grouping.KIND_OF_BYTES.items()} == STEP_KINDS
    for kind, code in grouping.KIND_CODE.items():
        as_bytes = grouping.BYTES_RULES_BY_CODE[code]
        assert {k.decode(): v for k, v in as_bytes.items()} == grouping.RULES[kind]  # type: ignore[index]
    # no dict mixes the two forms (a type and its bytes hash alike)
    for table in (grouping.KIND_OF, *grouping.RULES.values()):
        assert all(isinstance(k, str) for k in table)


def _plain_counts(
    events: list[tuple[str, int | None, bool]], costs: list[float | None], turns: list[int]
) -> dict[str, Any]:
    """A run's counts as docs/readers.md says them, without the core (no ``session.end``):
    ``costs`` and ``turns`` are its answers' and compactions' costs, and its answers' turns."""
    begun: set[int] = set()
    loose = 0
    for what, n, _ in events:
        if n is not None and n not in begun and what in STEP_KINDS:
            begun.add(n)
        loose += what == "error" and (n is None or n not in begun)
    steps = _plain(events)
    return {
        "turns": max(turns) + 1 if turns else 0,
        "steps": len(steps),
        "tool_calls": sum(what == "tool.call" for what, _, _ in events),
        "cost_usd": None if None in costs else sum(costs, 0.0),
        "errors": sum(1 for step in steps if step[-1]) + loose,
        "denials": sum(what == "permission.decision" and not v for what, _, v in events),
        "compactions": sum(what == "context.compaction" for what, _, _ in events),
    }


def test_the_core_counts_a_run_as_the_rule_says() -> None:
    rng = random.Random(_SEED)
    for _ in range(2000):
        events = _events(rng)
        priced = [what for what, _, _ in events if what in ("llm.response", "context.compaction")]
        costs = [None if rng.random() < 0.05 else rng.randrange(100) / 8 for _ in priced]
        turns = [rng.randrange(9) for what in priced if what == "llm.response"]
        want = _plain_counts(events, costs, turns)
        for raw in (False, True):
            groups = grouping.Grouping()
            flags: list[int] = []
            tallies = [0] * grouping.TALLIES
            for what, n, value in events:
                key: str | bytes = what.encode() if raw else what
                pos = groups.place(n, key)
                if pos == len(flags):
                    flags.append(0)
                if pos is not None:
                    flags[pos] = grouping.fold(flags[pos], groups.kinds[pos], key, value)
                grouping.count(tallies, key, pos is not None, value)
            counts = grouping.run_counts(
                tallies,
                len(flags),
                Counter(flags),
                None,
                max(turns, default=-1),
                costs,
                [{"input_tokens": 2}] * len(priced),
            )
            assert counts.pop("tokens").input == 2 * len(priced)
            assert counts == want, events
    # a run that ended says its turns and cost
    end = SimpleNamespace(turns=3, cost_usd=None)
    assert grouping.run_counts([0] * grouping.TALLIES, 0, {}, end, 7, [1.0], [])["turns"] == 3
    assert {"llm.response", "context.compaction"} == grouping.PRICED
    assert {k.decode(): v for k, v in grouping.COUNTS_BYTES.items()} == grouping.COUNTS
    assert {k.decode() for k in grouping.PRICED_BYTES} == grouping.PRICED
