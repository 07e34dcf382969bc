"""One truth per run: every writer, on seeded generated sessions, gives the same facts in
every view.

A session is generated (:mod:`.facts_session`), written by each writer (:mod:`.facts_writers`:
regista's loop, the SDK proxy, the Claude Code and Codex importers, the OTLP receiver), and
read through each view (:mod:`.facts_views`: ``show``, ``show --json``, ``runs``, ``runs
--json``, the TUI's header and timeline, share, MCP, ``/v1/runs``, ``export``, ``diff``). The
facts each view shows must be the session's: the kind of each step, the outcome, the errors,
the tokens (cache reads, 5-minute and 1-hour writes, reasoning), the cost or "unknown", the
turns a person typed, and the durations the trace recorded.

``REGISTA_FUZZ_ITERATIONS`` sets how many sessions each writer gets (default 3);
``REGISTA_FUZZ_SEED`` gives other ones.
"""

from __future__ import annotations

import math
import warnings
from pathlib import Path
from typing import Any

import pytest

from conformance.facts_session import ITERATIONS, Facts, Session, generate, rng_for
from conformance.facts_views import VIEWS, Seen
from conformance.facts_writers import CAN, OUTCOME, WRITERS, otlp_body, write_loop
from regista.pricing import cost_usd
from regista.tokens import Tokens
from regista.vocab import cost_amount


def _step_errors(session: Session) -> tuple[bool, ...]:
    return tuple(st.fails for st in session.steps())


def _step_usage(session: Session) -> tuple[Tokens | None, ...]:
    return tuple(st.usage for st in session.steps())


def _step_cost(session: Session) -> tuple[float | None, ...]:
    """Each step's cost: a model call's and a compaction's at the price table's rate
    (``None``: no price), a tool step's nothing; a compaction the source recorded no usage
    for costs nothing (Codex bills it in the next call's)."""
    out: list[float | None] = []
    for st in session.steps():
        if st.usage is None or (st.kind == "compaction" and not st.usage.total):
            out.append(0.0)
        else:
            out.append(cost_usd(session.model, st.usage))
    return tuple(out)


def recorded_durations(path: Path) -> tuple[float | None, tuple[float | None, ...]]:
    """The run's duration and each step's, as its trace recorded them."""
    from regista.trace.reader import Trace

    trace = Trace.load(path)
    steps: list[float | None] = []
    for st in trace.steps():
        if st.kind == "model":
            ev = st.response_event
            steps.append(ev.duration_ms if ev is not None else None)
        elif st.kind == "tool":
            res = st.result
            steps.append(res.duration_ms if res is not None and not st.denied else None)
        else:
            comp = st.compaction
            steps.append(comp.duration_ms if comp is not None else None)
    return (trace.end.duration_ms if trace.end is not None else None), tuple(steps)


def mismatches(
    seen: Seen, want: Facts, session: Session, durations: Any, late: float = 0.0
) -> list[str]:
    """Each fact ``seen`` shows that is not the session's (``late``: how much longer than
    its recorded duration a view may show a step, in ms; see :data:`LATE`)."""
    run_ms, step_ms = durations
    usage = _step_usage(session)
    expect: dict[str, Any] = {
        "kinds": want.kinds,
        "outcome": want.outcome,
        "errors": want.errors,
        "step_errors": _step_errors(session),
        "tokens": want.tokens,
        "tokens_total": want.tokens.total,
        "tokens_short": want.tokens.short(),
        "cost_known": want.cost_usd is not None,
        "cost_text": cost_amount(want.cost_usd),
        "turns": want.turns,
        "tool_calls": want.tool_calls,
        "steps": len(want.kinds),
        "step_tokens": want.step_tokens,
        "step_usage": tuple(u if u is not None else None for u in usage),
        "step_tokens_short": tuple(u.short() if u is not None and u.total else None for u in usage),
    }
    out = []
    for name, value in seen.shown().items():
        if name == "cost_usd":
            ok = want.cost_usd is not None and math.isclose(value, want.cost_usd, abs_tol=2e-6)
            if not ok:
                out.append(f"cost_usd: {value!r}, want {want.cost_usd!r}")
        elif name == "duration_ms":
            if run_ms is None and late:  # a span of an unfinished run: from its events
                continue
            if run_ms is None or not -10 <= value - run_ms <= 10 + late:
                out.append(f"duration_ms: {value!r}, recorded {run_ms!r}")
        elif name == "step_cost":
            want_costs = _step_cost(session)
            ok = len(value) == len(want_costs)
            for got_c, want_c in zip(value, want_costs, strict=False):
                if got_c == -1.0:  # a view that does not show it for this kind of step
                    continue
                if (got_c is None) != (want_c is None) or (
                    got_c is not None and not math.isclose(got_c, want_c, abs_tol=5e-5)
                ):
                    ok = False
            if not ok:
                out.append(f"step_cost: {value!r}, want {want_costs!r}")
        elif name == "step_ms":
            want_ms = tuple(ms or 0.0 for ms in step_ms)
            got = tuple(ms or 0.0 for ms in value)
            if len(got) != len(want_ms) or any(
                not -1.5 <= a - b <= 1.5 + late for a, b in zip(got, want_ms, strict=True)
            ):
                out.append(f"step_ms: {got!r}, recorded {want_ms!r}")
        elif name == "cost_text" and value.startswith("$") and want.cost_usd is not None:
            # printed to the 1/10,000: a sum added in another order may round the other way
            if abs(float(value[1:]) - want.cost_usd) > 0.00005 + 1e-9:
                out.append(f"cost_text: {value!r}, want {expect[name]!r}")
        elif value != expect[name]:
            out.append(f"{name}: {value!r}, want {expect[name]!r}")
    return out


#: A span runs from its step's first recorded time to its last, and never less than the
#: recorded duration: for a live call, the request is written a moment before the call
#: goes out (and a session's end a moment after its last answer), so ``export`` may show a
#: step (and a run) a few ms longer than the duration measured around the call itself.
#: Share and MCP give a step's time as its span too (``regista.breakdown.step_numbers``),
#: while ``show``'s and the TUI's ms columns give the recorded duration.
LATE = {"export": 500.0, "share": 500.0, "mcp": 500.0}


def cut_short(path: Path) -> None:
    """Drop the run's ``session.end``: a run still going, or killed."""
    lines = path.read_bytes().splitlines(keepends=True)
    assert b'"session.end"' in lines[-1]
    path.write_bytes(b"".join(lines[:-1]))


def _stoppable() -> int:
    """The first of the loop's sessions with two model calls or more."""
    return next(
        n for n in range(50) if len(generate(rng_for("loop", n), CAN["loop"], n).calls()) > 1
    )


#: (writer, session number, variant): ``cut`` drops the run's end (in progress);
#: ``max_turns`` stops the loop one model call short (failed).
CASES = [(w, n, "") for w in WRITERS for n in range(ITERATIONS)]
CASES += [(w, 0, "cut") for w in WRITERS]
CASES += [("loop", _stoppable(), "max_turns")]


@pytest.mark.parametrize(
    ("writer", "n", "variant"), CASES, ids=[f"{w}-{n}{'-' if v else ''}{v}" for w, n, v in CASES]
)
def test_every_view_gives_the_session_s_facts(
    writer: str, n: int, variant: str, tmp_path: Path
) -> None:
    session = generate(rng_for(writer, n), CAN[writer], n)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # an unpriced model warns once
        if variant == "max_turns":
            k = len(session.calls()) - 1
            path = write_loop(session, tmp_path / "run", max_turns=k)
            session = session.first_calls(k)
            want = session.expected("failed")
        else:
            path = WRITERS[writer](session, tmp_path / "run")
            want = session.expected("in_progress" if variant == "cut" else OUTCOME[writer])
        if variant == "cut":
            cut_short(path)
        durations = recorded_durations(path)
        problems = []
        if writer == "otlp":  # the recorded times are the spans': each step lasts its span
            spans = otlp_body(session)["resourceSpans"][0]["scopeSpans"][0]["spans"][1:]
            span_ms = tuple((int(x["endTimeUnixNano"]) - int(x["startTimeUnixNano"])) / 1e6
                            for x in spans)  # fmt: skip
            if span_ms != durations[1]:
                problems.append(f"recorded step ms: {durations[1]!r}, spans {span_ms!r}")
        for view, read in VIEWS.items():
            seen = read(path)
            late = LATE.get(view, 0.0)
            problems += [f"{view}: {p}" for p in mismatches(seen, want, session, durations, late)]
    assert not problems, f"{writer} session {n} ({session.model}):\n" + "\n".join(problems)
