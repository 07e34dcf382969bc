"""``regista share``: one self-contained HTML page that shows a run (or two, side by side).

The page carries everything inline: its stylesheet, its script and the run's data. It loads
nothing from anywhere (its Content-Security-Policy forbids it, and only its own script, by
hash, may run). The data sits in a ``<script type="application/json">`` block with every
``<``, ``>`` and ``&`` escaped, and the page's script builds the view with ``textContent``
only, so a trace full of ``<script>`` shows that text and runs nothing.

A step's detail is kept as its own JSON string and decoded when the step is opened; the
timeline is drawn in slices as it scrolls. A 50 MB trace makes a page of about the same size
that opens at once.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
from importlib import resources
from pathlib import Path
from typing import Any

import orjson

from regista.breakdown import (
    BY,
    StepNumbers,
    breakdown,
    run_facts,
    run_span,
    step_numbers,
    subagent_of,
)
from regista.diff.steps import request_config
from regista.diff.structural import structural_diff
from regista.errors import UserError
from regista.loops import RepeatFinder, waste
from regista.savings import Savings
from regista.tokens import Tokens, tokens_of
from regista.trace.events import ContextCompaction, LlmRequestEvent, LlmResponseEvent
from regista.trace.reader import Trace
from regista.types import LlmRequest
from regista.vocab import outcome_text, step_status
from regista.vocab import step_label as step_summary

__all__ = ["share_html", "write_share"]


def _asset(name: str) -> str:
    return (resources.files(__package__) / name).read_text(encoding="utf-8")


def _request_diff(prev: LlmRequest | None, cur: LlmRequest, ev: LlmRequestEvent) -> dict[str, Any]:
    """What changed since the previous request: its settings, and the new messages."""
    changes = (
        [
            c.describe("before", "now")
            for c in structural_diff(request_config(prev), request_config(cur))
        ]
        if prev is not None
        else []
    )
    return {
        "first": prev is None,
        "kept": ev.messages_prefix,
        "total": len(cur.messages),
        "new_messages": ev.messages,
        "changes": changes,
        "system": cur.system if prev is None else None,
    }


def _event_dict(ev: Any) -> dict[str, Any]:
    """An event as the page reads it: a model call or compaction with its tokens."""
    data: dict[str, Any] = ev.model_dump(mode="json")
    if isinstance(ev, LlmResponseEvent | ContextCompaction):
        usage = ev.response.get("usage") if isinstance(ev, LlmResponseEvent) else ev.usage
        with contextlib.suppress(ValueError):  # an odd usage: the page shows none
            data["tokens"] = tokens_of(usage).as_dict()
    return data


def _run_data(trace: Trace) -> dict[str, Any]:
    s = trace.summary()
    end = trace.end
    diffs: dict[int, dict[str, Any]] = {}
    prev: LlmRequest | None = None
    for ev, request in trace.iter_requests():
        diffs[ev.step] = _request_diff(prev, request, ev)
        prev = request
    steps = []
    details = []
    all_steps = trace.steps()
    numbered = [step_numbers(st) for st in all_steps]
    placed = run_span(trace, [n.span for n in numbered])
    t0 = placed[0] / 1e6 if placed is not None else None
    finder = RepeatFinder()
    took: dict[int, tuple[Tokens, float | None]] = {}
    for st, numbers in zip(all_steps, numbered, strict=True):
        resp = st.response_event
        span = _span_ms(numbers, t0)
        cost = numbers.cost
        tokens = numbers.tokens.as_dict() if numbers.tokens.total else None
        ms = numbers.ms or 0.0
        repeats = finder.add(st)
        row = {
            "i": st.index,
            "kind": st.kind,
            "label": step_summary(st, 80),
            "status": step_status(st),
            "source": getattr(resp or st.result or st.compaction, "source", None),
            "cost": cost,
            "ms": ms,
            "start": span[0] if span else None,
            "end": span[1] if span else None,
            "tokens": tokens,
            "repeat": {**repeats[0].as_dict(), "text": repeats[0].describe()} if repeats else None,
        }
        took[st.index] = (numbers.tokens, numbers.cost)
        steps.append(row)
        detail = {
            "events": [_event_dict(ev) for ev in st.events],
            "request": diffs.get(st.index),
        }
        details.append(orjson.dumps(detail).decode())
    saved = Savings.from_dict((end.replay or {}).get("saved")) if end is not None else None
    header = {
        **run_facts(trace, s),
        "status_text": outcome_text(s.stop_reason, s.status),
        "error": end.error if end else None,
        "forked_from": (
            {"session_id": s.forked_from.get("session_id"), "at_step": s.forked_from.get("at_step")}
            if s.forked_from
            else None
        ),
        "savings": saved.describe() if saved is not None and saved.calls else None,
        "file": trace.path.name if trace.path else None,
        "repeats": waste(finder.repeats, took.__getitem__),
    }
    by = {
        key: [g.as_dict() for g in breakdown(all_steps, key, subagent=subagent_of(trace.path))]
        for key in BY
    }
    return {"header": header, "steps": steps, "details": details, "by": by}


def _span_ms(numbers: StepNumbers, t0: float | None) -> tuple[float, float] | None:
    """The step's start and end in milliseconds from the session's start, as the export's
    spans place it (:func:`~regista.breakdown.step_numbers`), ``t0`` the run's start
    (:func:`~regista.breakdown.run_span`); ``None`` when a time in it is not one."""
    if t0 is None or numbers.span is None:
        return None
    start, end = numbers.span
    return round(max(0.0, start / 1e6 - t0), 3), round(max(0.0, end / 1e6 - t0), 3)


def _pairs(a: Trace, b: Trace) -> list[dict[str, Any]]:
    from regista.diff import diff_runs

    rd = diff_runs(a, b)
    pos_a = {st.index: i for i, st in enumerate(a.steps())}
    pos_b = {st.index: i for i, st in enumerate(b.steps())}
    return [
        {
            "a": pos_a.get(p.a_step) if p.a_step is not None else None,
            "b": pos_b.get(p.b_step) if p.b_step is not None else None,
            "kind": p.kind,
            "label": p.label,
            "changes": [c.describe("A", "B") for c in p.changes][:20],
        }
        for p in rd.pairs
    ]


def _load(path: str | Path | Trace) -> Trace:
    return path if isinstance(path, Trace) else Trace.load(path)


def _safe_json(value: Any) -> str:
    """JSON that cannot end its ``<script>`` block or open another one."""
    raw = orjson.dumps(value)
    raw = raw.replace(b"<", b"\\u003c").replace(b">", b"\\u003e").replace(b"&", b"\\u0026")
    return raw.decode()


def share_html(a: str | Path | Trace, b: str | Path | Trace | None = None) -> str:
    """The page for run ``a``, or for ``a`` and ``b`` side by side with their alignment.

    Raises:
        TraceError: A trace cannot be read (see ``Trace.load``).
    """
    ta = _load(a)
    data: dict[str, Any] = {"a": _run_data(ta)}
    title = ta.start.task
    if b is not None:
        tb = _load(b)
        data["b"] = _run_data(tb)
        data["pairs"] = _pairs(ta, tb)
        title = f"{ta.session_id} vs {tb.session_id}"
    script = _asset("page.js")
    digest = base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()
    csp = (
        "default-src 'none'; style-src 'unsafe-inline'; img-src data:; "
        f"script-src 'sha256-{digest}'; base-uri 'none'; form-action 'none'"
    )
    title = " ".join(title.split())[:120]
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{csp}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>regista · {_escape(title)}</title>\n"
        f"<style>{_asset('page.css')}</style>\n</head><body>\n"
        '<div id="app"><noscript>This page needs JavaScript to show the run.</noscript></div>\n'
        f'<script type="application/json" id="regista-data">{_safe_json(data)}</script>\n'
        f"<script>{script}</script>\n</body></html>\n"
    )


def _escape(text: str) -> str:
    return (
        text.replace("&", "&amp;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace('"', "&quot;")
        .replace("'", "&#39;")
    )


def write_share(
    out: str | Path, a: str | Path | Trace, b: str | Path | Trace | None = None
) -> Path:
    """Write :func:`share_html` to ``out`` (created or replaced whole, never half-written).

    Raises:
        UserError: ``out`` cannot be written.
    """
    page = share_html(a, b)
    path = Path(out)
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        tmp.write_text(page, encoding="utf-8")
        tmp.replace(path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise UserError(f"cannot write {path}: {exc.strerror or exc}") from None
    return path
