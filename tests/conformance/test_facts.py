"""One truth per run: every writer, on seeded generated sessions, gives the same facts in
every view.

A session is generated (:mod:`.facts_session`), written by each writer (:mod:`.facts_writers`:
regista's loop, the SDK proxy, the Claude Code and Codex importers, the OTLP receiver), and
read through each view (:mod:`.facts_views`: ``show``, ``show --json``, ``show --by``,
``runs``, ``runs --json``, ``runs --by``, the TUI's header and timeline, share, MCP,
``/v1/runs``, ``export``, ``diff``). The facts each view shows must be the session's: the
kind of each step, the outcome, the errors, the tokens (cache reads, 5-minute and 1-hour
writes, reasoning), the cost or "unknown", the turns a person typed, and how long each step
and the run took (one definition, computed again here from the trace's lines: every view
gives the same number, as far as it rounds it).

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


_OPENERS = {"llm.request": "model", "tool.call": "tool", "context.compaction": "compaction"}
_CLOSERS = {"model": "llm.response", "tool": "tool.result", "compaction": "context.compaction"}


def _ns(ts: str) -> int:
    from datetime import UTC, datetime

    dt = datetime.fromisoformat(ts.replace("Z", "+00:00"))
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return round(dt.timestamp() * 1e6) * 1000


def _took(first: dict[str, Any], closing: dict[str, Any] | None, last: dict[str, Any]) -> float:
    ms = (closing or {}).get("duration_ms")
    if isinstance(ms, int | float) and ms > 0:
        return float(ms)
    return max(_ns((closing or last)["ts"]) - _ns(first["ts"]), 0) / 1e6


def expected_durations(path: Path) -> tuple[float, tuple[float, ...]]:
    """The run's duration and each step's, from the trace's lines (docs/readers.md, "How
    long a step took"): what the closing event recorded where it is a positive number, else
    the time from the first event to the closing one (the last, when cut short); a denied
    tool call ran nothing. A run's closing event is its ``session.end``."""
    import orjson

    events = [orjson.loads(line) for line in path.read_bytes().splitlines() if line.strip()]
    steps: dict[int, list[dict[str, Any]]] = {}
    kinds: dict[int, str] = {}
    for ev in events:
        n = ev.get("step")
        if n is None:
            continue
        if n not in kinds and ev["type"] in _OPENERS:
            kinds[n] = _OPENERS[ev["type"]]
        if n in kinds:
            steps.setdefault(n, []).append(ev)
    out = []
    for n in sorted(steps):
        evs = steps[n]
        if any(e["type"] == "permission.decision" and not e["allowed"] for e in evs):
            out.append(0.0)
            continue
        closing = next((e for e in evs if e["type"] == _CLOSERS[kinds[n]]), None)
        out.append(_took(evs[0], closing, evs[-1]))
    end = events[-1] if events[-1]["type"] == "session.end" else None
    return _took(events[0], end, events[-1]), tuple(out)


def mismatches(
    seen: Seen, want: Facts, session: Session, durations: Any, within: tuple[float, float]
) -> list[str]:
    """Each fact ``seen`` shows that is not the session's (``within``: how far a step's and
    the run's time may be from its definition, in ms, as the view rounds it: see
    :data:`ROUNDED`)."""
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
            if not abs(value - run_ms) <= within[1]:
                out.append(f"duration_ms: {value!r}, want {run_ms!r}")
        elif name == "steps_ms":
            if not abs(value - sum(step_ms)) <= within[0] * len(step_ms) + 0.001:
                out.append(f"steps_ms: {value!r}, want {sum(step_ms)!r}")
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
            got = tuple(ms or 0.0 for ms in value)  # a denied call: none shown, 0 taken
            if len(got) != len(step_ms) or any(
                not abs(a - b) <= within[0] for a, b in zip(got, step_ms, strict=True)
            ):
                out.append(f"step_ms: {got!r}, want {step_ms!r}")
        elif name == "cost_text" and value.startswith("$") and want.cost_usd is not None:
            # printed to the 1/10,000: a sum added in another order may round the other way
            if abs(float(value[1:]) - want.cost_usd) > 0.00005 + 1e-9:
                out.append(f"cost_text: {value!r}, want {expect[name]!r}")
        elif value != expect[name]:
            out.append(f"{name}: {value!r}, want {expect[name]!r}")
    return out


#: How far each view's times may be from their definition (a step's, the run's), in ms: as
#: the view rounds them (``show`` prints a step's whole ms and the run's 1/100 s). Every
#: other view gives the value to the µs (:func:`regista.breakdown.took_ms`; the export's
#: spans are whole ns of it). ``show`` rounds the µs value, so its bound is both (50.5004 ms
#: is 50.5 to the µs, which rounds to even: 50).
EXACT = (0.0011, 0.0011)
ROUNDED = {"show": (0.5 + EXACT[0], 5.0 + EXACT[1])}


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
        durations = expected_durations(path)
        problems = []
        if writer == "otlp":  # the recorded times are the spans': each step lasts its span
            spans = otlp_body(session)["resourceSpans"][0]["scopeSpans"][0]["spans"][1:]
            span_ms = tuple((int(x["endTimeUnixNano"]) - int(x["startTimeUnixNano"])) / 1e6
                            for x in spans)  # fmt: skip
            if not all(math.isclose(a, b) for a, b in zip(span_ms, durations[1], strict=True)):
                problems.append(f"step ms: {durations[1]!r}, spans {span_ms!r}")
        for view, read in VIEWS.items():
            seen = read(path)
            within = ROUNDED.get(view, EXACT)
            problems += [f"{view}: {p}" for p in mismatches(seen, want, session, durations, within)]
    assert not problems, f"{writer} session {n} ({session.model}):\n" + "\n".join(problems)
