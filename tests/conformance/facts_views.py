"""A run's facts as each view gives them.

Each ``*_view`` function reads one run (``path``, in a folder of its own) through one view
and returns what that view says of the facts, as a :class:`Seen`: the fields it does not show
stay ``None``. What a view prints is read back from its text (``show``, ``runs``, the TUI's
header and token column); what it returns as data is taken as is.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from regista.tokens import Tokens
from regista.vocab import OUTCOME_LABELS

#: A status as each text view words it.
_WORDS = {v: k for k, v in OUTCOME_LABELS.items()}


@dataclass
class Seen:
    """What one view says (``None``: not shown there)."""

    kinds: tuple[str, ...] | None = None
    outcome: str | None = None
    errors: int | None = None
    step_errors: tuple[bool, ...] | None = None
    tokens: Tokens | None = None
    tokens_total: int | None = None
    tokens_short: str | None = None
    cost_usd: float | None = None
    cost_known: bool | None = None
    cost_text: str | None = None
    turns: int | None = None
    tool_calls: int | None = None
    steps: int | None = None
    duration_ms: float | None = None
    step_tokens: tuple[int | None, ...] | None = None
    step_tokens_short: tuple[str | None, ...] | None = None
    step_ms: tuple[float | None, ...] | None = None
    #: The time of all the steps (a ``--by`` table's total).
    steps_ms: float | None = None
    step_usage: tuple[Tokens | None, ...] | None = None
    step_cost: tuple[float | None, ...] | None = None

    def shown(self) -> dict[str, Any]:
        return {
            f.name: getattr(self, f.name) for f in fields(self) if getattr(self, f.name) is not None
        }


def _status(words: str) -> str:
    """The status a text view's words for an outcome mean (a telling stop reason is ok
    when it is one of :data:`regista.vocab.OK_STOPS`, failed otherwise)."""
    from regista.vocab import OK_STOPS

    if words in _WORDS:
        return _WORDS[words]
    if words.startswith(("unfinished", "running", "crashed")):  # no session.end
        return "in_progress"
    return "ok" if words in OK_STOPS else "failed"


def _cli(*args: str) -> str:
    from regista.cli.main import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(list(args)) == 0
    return out.getvalue()


def _tokens(d: dict[str, Any]) -> Tokens:
    return Tokens(
        d["input"], d["output"], d["cache_read"], d["cache_write_5m"], d["cache_write_1h"],
        d["reasoning"],
    )  # fmt: skip


def _cost(value: float | None) -> tuple[float | None, bool]:
    return value, value is not None


# -- show ------------------------------------------------------------------------------------


def show_json(path: Path) -> Seen:
    d = json.loads(_cli("show", str(path), "--json"))
    cost, known = _cost(d["cost_usd"])
    assert known == (not d["cost_basis"].startswith("unknown")), d["cost_basis"]
    return Seen(
        outcome=d["status"], errors=d["errors"], tokens=_tokens(d["tokens"]),
        tokens_total=d["tokens"]["total"], cost_usd=cost, cost_known=known, turns=d["turns"],
        tool_calls=d["tool_calls"], steps=d["steps"], duration_ms=d["duration_ms"],
    )  # fmt: skip


_NUM = r"([\d,]+)"
_TOKENS = re.compile(
    rf"in {_NUM} · out {_NUM} · cache read {_NUM} · cache write 5m {_NUM} / 1h {_NUM}"
    rf"(?: · reasoning {_NUM})?"
)


def _n(s: str | None) -> int:
    return int(s.replace(",", "")) if s else 0


def parse_tokens_text(text: str) -> Tokens:
    m = _TOKENS.search(text)
    assert m, text
    return Tokens(*(_n(g) for g in m.groups()))


def parse_brief_tokens(text: str) -> Tokens:
    """``in 3 · out 97 · cache read 15,120 · cache write 5m 1,204 / 1h 0 · reasoning 5``,
    its cache parts left out when they are 0 (:meth:`Tokens.text` with ``brief``)."""
    inp = re.search(rf"\bin {_NUM}", text)
    out = re.search(rf"\bout {_NUM}", text)
    assert inp and out, text
    read = re.search(rf"cache read {_NUM}", text)
    write = re.search(rf"cache write 5m {_NUM} / 1h {_NUM}", text)
    reasoning = re.search(rf"reasoning {_NUM}", text)
    return Tokens(
        _n(inp.group(1)),
        _n(out.group(1)),
        _n(read.group(1)) if read else 0,
        _n(write.group(1)) if write else 0,
        _n(write.group(2)) if write else 0,
        _n(reasoning.group(1)) if reasoning else 0,
    )


def _row(text: str, label: str) -> str:
    m = re.search(rf"^{label}\s+(.*(?:\n {{6,}}.*)*)", text, re.M)
    return " ".join(m.group(1).split()) if m else ""


def show_text(path: Path) -> Seen:
    """``regista show --full``: the header's rows and the steps' table."""
    text = _cli("show", str(path), "--full")
    head, table = re.split(r"^ *# +kind .*$", text, maxsplit=1, flags=re.M)
    outcome_row = _row(head, "Outcome")
    words = outcome_row.split(" · ")[0]
    outcome = _status(words)
    cost_row = _row(head, "Cost")
    known = not cost_row.startswith("unknown")
    m = re.search(r"\$([\d.]+)", cost_row)
    errors = re.search(r"(\d+) errors?\b", outcome_row)
    turns = re.search(r"(\d+) turns?\b", outcome_row)
    dur = re.search(r"([\d.]+) s", _row(head, "Duration"))
    kinds, shorts, errs, ms = [], [], [], []
    for line in table.splitlines():
        cells = line.split()
        if len(cells) < 2 or not cells[0].isdigit():
            continue
        kinds.append(cells[1])
        end = " " + line[-70:]  # the tokens and ms columns (a gist may be long)
        short = re.search(r"\s(\d[\d,]*/\d[\d,]*(?:\+[\d.,]+[kM]?)?)\s", end)
        shorts.append(short.group(1) if short else None)
        tail = re.search(r"\s([\d,]+|-)?\s*(error|denied)?\s*$", end)
        errs.append(bool(tail and tail.group(2) == "error"))
        ms.append(
            float(tail.group(1).replace(",", ""))
            if tail and tail.group(1) not in (None, "-")
            else None
        )
    return Seen(
        kinds=tuple(kinds),
        outcome=outcome,
        errors=int(errors.group(1)) if errors else 0,
        tokens=parse_tokens_text(_row(head, "Tokens")),
        cost_known=known,
        cost_text=f"${m.group(1)}" if known and m else "unknown",
        turns=int(turns.group(1)) if turns else None,
        duration_ms=float(dur.group(1)) * 1000 if dur else None,
        step_tokens_short=tuple(shorts),
        step_errors=tuple(errs),
        step_ms=tuple(ms),
    )


def show_by(path: Path) -> Seen:
    """``regista show --by turn --json``: the steps' time in all."""
    d = json.loads(_cli("show", str(path), "--by", "turn", "--json"))
    return Seen(steps_ms=d["total"]["ms"])


# -- runs --------------------------------------------------------------------------------------


def runs_by(path: Path) -> Seen:
    """``regista runs --by model``'s groups (:func:`regista.cli.cmd_runs.runs_by`) of this
    run alone: its time."""
    from regista.cli.cmd_runs import runs_by as by
    from regista.store.runs import list_runs

    (run,) = [r for r in list_runs(path.parent).runs if r.path == path]
    (group,) = by([run], "model")
    return Seen(duration_ms=group.as_dict()["ms"])


def runs_json(path: Path) -> Seen:
    rows = json.loads(_cli("runs", str(path.parent), "--json"))
    (r,) = [r for r in rows if r["path"] == str(path)]
    cost, known = _cost(r["cost_usd"])
    assert known == (not r["cost_basis"].startswith("unknown")), r["cost_basis"]
    assert r["failed"] == (r["status"] == "failed")
    return Seen(
        outcome=r["status"], tokens=_tokens(r["tokens"]), tokens_total=r["tokens"]["total"],
        cost_usd=cost, cost_known=known, steps=r["steps"], duration_ms=r["duration_ms"],
    )  # fmt: skip


def runs_text(path: Path) -> Seen:
    from regista.cli.cmd_runs import run_lines
    from regista.store.runs import list_runs

    (run,) = [r for r in list_runs(path.parent).runs if r.path == path]
    head, line = run_lines([run], 400)[:2]
    at = head.index("OUTCOME")
    words = line[at:].split("  ")[0].strip()
    cost = line[head.index("STEPS") :].split()[1]
    return Seen(
        outcome=_status(words),
        cost_known=cost != "unknown",
        cost_text=cost,
        steps=int(line[head.index("STEPS") :].split()[0]),
    )


# -- MCP and the server --------------------------------------------------------------------------


def mcp(path: Path) -> Seen:
    from regista.store.mcp_server import RunsTools

    tools = RunsTools(path.parent)
    sid = path.stem
    (listed,) = [r for r in tools.list_runs(limit=1000) if r["session_id"] == sid]
    s = tools.run_summary(sid)
    for key in ("status", "cost_usd", "cost_basis", "tokens", "steps", "duration_ms"):
        assert listed[key] == s[key], (key, listed[key], s[key])
    kinds, errors, tokens, costs, ms = [], [], [], [], []
    for st in s["step_list"]:
        step = tools.get_step(sid, st["step"])
        for key in ("kind", "status", "cost_usd", "duration_ms"):
            assert step[key] == st[key], (key, step[key], st[key])
        assert step["tokens"]["total"] == st["tokens"]
        kinds.append(step["kind"])
        tool = step["kind"] == "tool"
        errors.append(bool(step.get("is_error")) if tool else False)
        tokens.append(None if tool else step["tokens"]["total"])
        costs.append(0.0 if tool and step["cost_usd"] in (0, None) else step["cost_usd"])
        ms.append(step["duration_ms"])
    cost, known = _cost(s["cost_usd"])
    return Seen(
        kinds=tuple(kinds), outcome=s["status"], errors=s["errors"], step_errors=tuple(errors),
        tokens=_tokens(s["tokens"]), cost_usd=cost, cost_known=known, turns=s["turns"],
        tool_calls=s["tool_calls"], steps=s["steps"], step_tokens=tuple(tokens),
        step_cost=tuple(costs), step_ms=tuple(ms), duration_ms=s["duration_ms"],
    )  # fmt: skip


def server(path: Path) -> Seen:
    from starlette.testclient import TestClient

    from regista.server import create_app

    sid = path.stem
    with TestClient(create_app(path.parent)) as http:
        (listed,) = [r for r in http.get("/v1/runs").json()["runs"] if r["id"] == sid]
        one = http.get(f"/v1/runs/{sid}").json()
    for key in ("status", "cost_usd", "cost_basis", "tokens", "steps", "duration_ms"):
        assert listed[key] == one[key], (key, listed[key], one[key])
    cost, known = _cost(one["cost_usd"])
    return Seen(
        kinds=tuple(s["kind"] for s in one["step_kinds"]), outcome=one["status"],
        errors=one["errors"], tokens=_tokens(one["tokens"]), cost_usd=cost,
        cost_known=known, turns=one["turns"], tool_calls=one["tool_calls"], steps=one["steps"],
        duration_ms=one["duration_ms"],
    )  # fmt: skip


# -- share ---------------------------------------------------------------------------------------


def share(path: Path) -> Seen:
    from regista.share import _run_data
    from regista.trace.reader import Trace

    data = _run_data(Trace.load(path))
    h = data["header"]
    cost, known = _cost(h["cost_usd"])
    assert known == (not h["cost_basis"].startswith("unknown")), h["cost_basis"]
    return Seen(
        kinds=tuple(s["kind"] for s in data["steps"]), outcome=h["status"], errors=h["errors"],
        step_errors=tuple(s["status"] == "error" for s in data["steps"]),
        tokens=_tokens(h["tokens"]), cost_usd=cost, cost_known=known, turns=h["turns"],
        tool_calls=h["tool_calls"], steps=h["steps"], duration_ms=h["duration_ms"],
        step_ms=tuple(s["ms"] for s in data["steps"]),
        step_cost=tuple(s["cost"] for s in data["steps"]),
        steps_ms=sum(g["ms"] for g in data["by"]["tool"]),
    )  # fmt: skip


# -- the TUI -------------------------------------------------------------------------------------


def _step_view(step: Any) -> str:
    """What the step pane shows of ``step`` (``render_step``), as plain text."""
    from rich.console import Console

    from regista_tui.widgets.step.render import render_step

    console = Console(width=400, record=True, file=io.StringIO())
    console.print(render_step(step))
    return console.export_text()


def tui(path: Path) -> Seen:
    """The header and the timeline's rows, as the widgets make them (``_header_text``,
    ``row_of``), over the index the app opens."""
    from regista_tui.__main__ import open_index
    from regista_tui.rows import row_of
    from regista_tui.widgets.header.session_header import _header_text

    index, _ = open_index(path)
    try:
        index.warm()
        head = _header_text(index, "", "").plain
        steps = [index.step(i) for i in range(len(index.steps))]
        rows = [row_of(st) for st in steps]
        usage: list[Tokens | None] = []
        costs: list[float | None] = []
        for st in steps:
            if st.kind == "tool":
                usage.append(None)
                costs.append(0.0)
                continue
            shown = _step_view(st)
            title = "Response" if st.kind == "model" else "Compaction"
            line = next(ln for ln in shown.splitlines() if title in ln and "tokens" in ln)
            usage.append(parse_brief_tokens(line.split("tokens", 1)[1]))
            cost = re.search(r"· (\$[\d.]+|cost unknown) ·", line)
            assert cost, line
            costs.append(None if cost.group(1) == "cost unknown" else float(cost.group(1)[1:]))
    finally:
        index.close()
    words = (
        re.split(r"[●◌✕] ", head, maxsplit=1)[1].split(" · ")[0]
        if re.search("[●◌✕] ", head)
        else ""
    )
    outcome = _status(words)
    errors = re.search(r"(\d+) errors?\b", head)
    turns = re.search(r"(\d+) turns?\b", head)
    short = re.search(r"· (\S+) tokens", head)
    cost = re.search(r"· (\$[\d.]+|cost unknown)", head)
    return Seen(
        kinds=tuple(r.kind for r in rows),
        outcome=outcome,
        errors=int(errors.group(1)) if errors else 0,
        step_errors=tuple(r.error for r in rows),
        tokens_short=short.group(1) if short else None,
        cost_known=None if cost is None else cost.group(1) != "cost unknown",
        cost_text=cost.group(1).replace("cost unknown", "unknown") if cost else None,
        turns=int(turns.group(1)) if turns else None,
        steps=len(rows),
        step_tokens=tuple(r.tokens for r in rows),
        step_ms=tuple(r.duration_ms for r in rows),
        step_usage=tuple(usage),
        step_cost=tuple(costs),
    )


# -- export and diff -------------------------------------------------------------------------------


def export(path: Path) -> Seen:
    """The OpenTelemetry spans of ``regista export``: the session span's totals, each step's
    span (its kind, tokens, duration, error status)."""
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    from opentelemetry.trace import StatusCode

    from regista.trace.otel import export_trace
    from regista.trace.otel_spans import CACHE_1H, REASONING

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    export_trace(path, provider)
    spans = list(exporter.get_finished_spans())
    (root,) = [s for s in spans if s.parent is None]
    steps = sorted(
        (s for s in spans if s.attributes and "regista.step" in s.attributes),
        key=lambda s: s.attributes["regista.step"],  # type: ignore[index]
    )

    def tokens(a: Any) -> Tokens:
        read = a.get("gen_ai.usage.cache_read.input_tokens", 0)
        write = a.get("gen_ai.usage.cache_creation.input_tokens", 0)
        hour = a.get(CACHE_1H, 0)
        return Tokens(
            a["gen_ai.usage.input_tokens"] - read - write, a["gen_ai.usage.output_tokens"],
            read, write - hour, hour, a.get(REASONING, 0),
        )  # fmt: skip

    ra = root.attributes or {}
    cost = ra.get("regista.cost_usd")
    step_tokens = tuple(
        tokens(s.attributes).total if "gen_ai.usage.output_tokens" in (s.attributes or {}) else None
        for s in steps
    )
    return Seen(
        kinds=tuple(str((s.attributes or {})["regista.step.kind"]) for s in steps),
        errors=sum(
            1 for s in steps
            if (s.attributes or {}).get("regista.step.kind") == "tool"
            and s.status.status_code == StatusCode.ERROR
        ),
        step_errors=tuple(
            (s.attributes or {}).get("regista.step.kind") == "tool"
            and s.status.status_code == StatusCode.ERROR
            for s in steps
        ),
        tokens=tokens(ra),
        cost_usd=float(cost) if isinstance(cost, int | float) else None,  # type: ignore[arg-type]
        cost_known=isinstance(cost, int | float),
        turns=ra.get("regista.turns"),  # type: ignore[arg-type]
        duration_ms=((root.end_time or 0) - (root.start_time or 0)) / 1e6,
        step_tokens=step_tokens,
        step_ms=tuple(((s.end_time or 0) - (s.start_time or 0)) / 1e6 for s in steps),
    )  # fmt: skip


def diff(path: Path) -> Seen:
    """``regista diff --json`` of the run with itself: one pair per step, its kind."""
    d = json.loads(_cli("diff", str(path), str(path), "--json"))
    return Seen(kinds=tuple(p["step_kind"] for p in d["pairs"]))


VIEWS = {
    "show": show_text,
    "show --json": show_json,
    "show --by": show_by,
    "runs": runs_text,
    "runs --json": runs_json,
    "runs --by": runs_by,
    "tui": tui,
    "share": share,
    "mcp": mcp,
    "/v1/runs": server,
    "export": export,
    "diff": diff,
}
