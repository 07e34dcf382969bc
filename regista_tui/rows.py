"""One-line summaries of steps for the timeline, made from a decoded step."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from regista.structdiff import short_repr
from regista.trace.steps import Step

__all__ = ["Row", "gist_of", "row_of"]


@dataclass(frozen=True)
class Row:
    """What a timeline row shows for one step."""

    number: int
    kind: str
    title: str
    gist: str
    tokens: int | None
    duration_ms: float | None
    error: bool
    denied: bool
    source: str
    complete: bool


def _one_line(text: str, limit: int = 160) -> str:
    line = " ".join(text[: limit * 2].split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def gist_of(step: Step) -> str:
    """The start of what the step said or did, on one line."""
    if step.kind == "model":
        ev = step.response_event
        if ev is None:
            return "… (no response recorded)"
        content: list[dict[str, Any]] = ev.response.get("content") or []
        texts = [str(b.get("text", "")) for b in content if b.get("type") == "text"]
        uses = [
            f"→ {b.get('name')}({short_repr(b.get('input'), 60)})"
            for b in content
            if b.get("type") == "tool_use"
        ]
        text = _one_line(" ".join(texts))
        return "  ".join(x for x in [text, *uses] if x) or "(empty response)"
    if step.kind == "tool":
        call, res, dec = step.tool_call, step.result, step.decision
        args = short_repr(call.input, 70) if call else ""
        if dec is not None and not dec.allowed:
            return f"{args}  ⛔ denied: {dec.reason or ''}".rstrip()
        if res is None:
            return f"{args}  … (no result recorded)"
        body = res.content if isinstance(res.content, str) else short_repr(res.content, 200)
        return f"{args} ⇒ {_one_line(body, 100)}"
    comp = step.compaction
    if comp is None:
        return ""
    return f"{len(comp.replaced)} messages → {_one_line(comp.summary, 100)}"


def row_of(step: Step, model_label: str | None = None) -> Row:
    """The timeline row of ``step``; ``model_label`` replaces the model name (``scripted``)."""
    tokens: int | None = None
    duration: float | None = None
    if step.kind == "model":
        ev = step.response_event
        if ev is not None:
            usage = ev.response.get("usage") or {}
            tokens = int(usage.get("input_tokens", 0)) + int(usage.get("output_tokens", 0))
            duration = ev.duration_ms
    elif step.kind == "tool":
        res = step.result
        # a denied call never ran: it has no duration
        duration = res.duration_ms if res is not None and not step.denied else None
    else:
        comp = step.compaction
        if comp is not None:
            usage = comp.usage or {}
            tokens = int(usage.get("input_tokens", 0)) + int(usage.get("output_tokens", 0))
            duration = comp.duration_ms
    title = step.title
    if step.kind == "model" and model_label:
        title = model_label
    try:
        gist = gist_of(step)
    except Exception as exc:  # a malformed but valid-looking step must not break the list
        gist = f"(cannot summarise: {exc})"
    return Row(
        number=step.index,
        kind=step.kind,
        title=title,
        gist=gist,
        tokens=tokens,
        duration_ms=duration,
        error=step.is_error,
        denied=step.denied,
        source=step.source,
        complete=step.complete,
    )
