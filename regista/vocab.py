"""The words and colours regista uses for steps, diffs and costs, in one place.

The CLI, the TUI and the share page all say things the same way through this module: what a
step did (three lengths: :func:`step_label` for a diff row, :func:`step_line` for a timeline
row, :func:`step_gist` in full), what each kind of difference between two runs is called and
coloured, and what a cost is, known or not. It depends on no UI library: colours are names
any terminal library understands.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

import orjson

from regista.diff.structural import short_repr

# Only named in annotations: ``regista show`` reads events without importing the models.
if TYPE_CHECKING:
    from regista.trace.events import (
        ContextCompaction,
        ErrorEvent,
        LlmResponseEvent,
        ToolCall,
        ToolResult,
    )
    from regista.trace.steps import Step

__all__ = [
    "COST_UNKNOWN",
    "KINDS",
    "KIND_COLOURS",
    "KIND_MARKS",
    "LABELS",
    "NO_STOPS",
    "OK_STOPS",
    "OUTCOME_COLOURS",
    "OUTCOME_LABELS",
    "DiffKind",
    "RunOutcome",
    "compaction_gist",
    "cost_amount",
    "cost_text",
    "end_outcome",
    "gist_of",
    "model_gist",
    "one_line",
    "outcome_text",
    "run_outcome",
    "step_gist",
    "step_label",
    "step_line",
    "step_status",
    "tool_gist",
]

# -- kinds of difference between two runs ------------------------------------------------

DiffKind = Literal[
    "same", "changed_input", "changed_decision", "changed_config", "insert", "delete"
]

#: Every kind, in the order counts and legends list them.
KINDS: tuple[DiffKind, ...] = (
    "same",
    "changed_input",
    "changed_decision",
    "changed_config",
    "insert",
    "delete",
)

#: What people see for each kind.
LABELS: dict[DiffKind, str] = {
    "same": "same",
    "changed_input": "changed · input",
    "changed_decision": "changed · decision",
    "changed_config": "changed · config",
    "insert": "insert",
    "delete": "delete",
}

#: The colour of each kind, wherever a diff is drawn (a changed decision is the red one: it
#: is where two runs really part; an insert is green, a delete magenta).
KIND_COLOURS: dict[str, str] = {
    "same": "dim",
    "changed_input": "yellow",
    "changed_decision": "red",
    "changed_config": "blue",
    "insert": "green",
    "delete": "magenta",
}

#: The one-character mark of each kind in a gutter.
KIND_MARKS: dict[str, str] = {
    "same": " ",
    "changed_input": "~",
    "changed_decision": "!",
    "changed_config": "*",
    "insert": "+",
    "delete": "-",
}

# -- costs ---------------------------------------------------------------------------------

#: How an unknown cost reads (a model without a known price): never a silent $0.
COST_UNKNOWN = "cost unknown"


def cost_amount(value: float | None) -> str:
    """``$0.0123``, or ``unknown`` (after a word such as "cost")."""
    return "unknown" if value is None else f"${value:.4f}"


def cost_text(value: float | None) -> str:
    """``$0.0123``, or ``cost unknown`` (where it stands on its own)."""
    return COST_UNKNOWN if value is None else f"${value:.4f}"


# -- how a run ended ----------------------------------------------------------------------

#: How a run ended, one word every view says: it did what it was asked (``ok``), it stopped
#: for another reason or in an error (``failed``), it has no ``session.end`` yet
#: (``in_progress``), or it ended without saying why (``no_stop_reason``: an imported
#: transcript just ends, which is not a failure).
RunOutcome = Literal["ok", "failed", "in_progress", "no_stop_reason"]

#: The stop reasons of a run that did what it was asked.
OK_STOPS = frozenset({"end_turn", "stop_sequence"})
#: The stop reasons that say only that the source ended (an importer's, when the source
#: does not say how the run ended).
NO_STOPS = frozenset({"transcript_end"})

OUTCOME_LABELS: dict[RunOutcome, str] = {
    "ok": "ok",
    "failed": "failed",
    "in_progress": "in progress",
    "no_stop_reason": "ended without a stop reason",
}
OUTCOME_COLOURS: dict[RunOutcome, str] = {
    "ok": "green",
    "failed": "red",
    "in_progress": "yellow",
    "no_stop_reason": "cyan",
}


def run_outcome(stop_reason: str | None, error: str | None = None, *, ended: bool) -> RunOutcome:
    """How a run ended, from its ``session.end`` (``ended``: it has one): the one definition
    ``show``, ``runs``, the TUI, share, MCP and ``/v1/runs`` use."""
    if not ended:
        return "in_progress"
    if error is not None:
        return "failed"
    if stop_reason in OK_STOPS:
        return "ok"
    if not stop_reason or stop_reason in NO_STOPS:
        return "no_stop_reason"
    return "failed"


def end_outcome(end: Any) -> RunOutcome:
    """:func:`run_outcome` of a ``session.end`` event (``None``: the run has not ended)."""
    if end is None:
        return "in_progress"
    return run_outcome(end.stop_reason, end.error, ended=True)


def outcome_text(stop_reason: str | None, outcome: RunOutcome) -> str:
    """How a run's end reads next to its outcome's colour: its stop reason when it has a
    telling one (``end_turn``, ``max_turns`` …), else the outcome's words."""
    if outcome in ("ok", "failed") and stop_reason:
        return stop_reason
    return OUTCOME_LABELS[outcome]


# -- what a step did -----------------------------------------------------------------------


def _json(value: Any) -> str:
    return orjson.dumps(value).decode()


def _call(block: dict[str, Any]) -> str:
    return f"{block.get('name')}({_json(block.get('input') or {})})"


def step_status(step: Step) -> str:
    """How a step went, in one word: ``ok``, ``error``, ``denied`` or ``unfinished`` (the
    session stopped before its answer or result)."""
    if step.denied:
        return "denied"
    if step.is_error:
        return "error"
    if step.kind == "compaction":
        return "ok" if step.compaction is not None else "unfinished"
    return "ok" if step.complete else "unfinished"


def step_label(step: Step, width: int = 60) -> str:
    """A short one-line description of a step (diff rows, the share page), e.g.
    ``search_orders {"query":"Dana"} → error``."""
    if step.kind == "tool":
        call = step.tool_call
        text = f"{step.title} {short_repr(call.input if call else {}, width)}"
        if step.denied:
            return text + " → denied"
        return text + (" → error" if step.is_error else "")
    if step.kind == "compaction":
        comp = step.compaction
        return "compaction " + short_repr(comp.summary if comp else "", width)
    ev = step.response_event
    if ev is None:
        return "model (no answer)" + (" → error" if step.errors else "")
    content = ev.response.get("content") or []
    calls = [str(b.get("name")) for b in content if b.get("type") == "tool_use"]
    if calls:
        return "model → " + ", ".join(calls)
    text = "".join(str(b.get("text", "")) for b in content if b.get("type") == "text")
    return "model " + short_repr(text.strip(), width)


def one_line(text: str, limit: int = 160) -> str:
    """``text`` on one line (white space folded), cut to ``limit`` characters."""
    line = " ".join(text[: limit * 2].split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def step_line(step: Step) -> str:
    """The start of what the step said or did, on one line (the timeline's rows)."""
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
        text = one_line(" ".join(texts))
        return "  ".join(x for x in [text, *uses] if x) or "(empty response)"
    if step.kind == "tool":
        call, res, dec = step.tool_call, step.result, step.decision
        args = short_repr(call.input, 70) if call else ""
        if step.denied and dec is not None:
            return f"{args}  ⛔ denied: {dec.reason or ''}".rstrip()
        if res is None:
            return f"{args}  … (no result recorded)"
        body = res.content if isinstance(res.content, str) else short_repr(res.content, 200)
        return f"{args} ⇒ {one_line(body, 100)}"
    comp = step.compaction
    if comp is None:
        return ""
    return f"{len(comp.replaced)} messages → {one_line(comp.summary, 100)}"


def step_gist(step: Step) -> str:
    """What happened in ``step``, in full (``regista show``'s steps table)."""
    errors = step.errors
    return gist_of(
        step.kind,
        response=step.response_event,
        call=step.tool_call,
        result=step.result,
        compaction=step.compaction,
        error=errors[0] if errors else None,
    )


def gist_of(
    kind: str,
    *,
    response: LlmResponseEvent | None,
    call: ToolCall | None,
    result: ToolResult | None,
    compaction: ContextCompaction | None,
    error: ErrorEvent | None,
    limit: int | None = None,
) -> str:
    """:func:`step_gist` from the step's events (the first of each kind), or with ``limit``
    only the start of it: a prefix at least ``limit`` characters long, when the gist is
    longer (a table that shows its first words need not join a long tool result whole)."""
    if kind == "model":
        return model_gist(response, error, limit)
    if kind == "tool":
        return tool_gist(call, result, limit)
    if compaction is None:
        return ""
    return compaction_gist(compaction, limit)


def model_gist(
    response: LlmResponseEvent | None, error: ErrorEvent | None, limit: int | None = None
) -> str:
    """:func:`gist_of` a model step."""
    if response is None:
        if error is not None:  # the call failed: say how
            return f"(failed: {error.message})"
        return "(no response: the run stopped here)"
    counted = response.response.get("count_tokens")
    if isinstance(counted, dict):  # a side step: the conversation's tokens were counted
        return f"(count_tokens: {counted.get('input_tokens')} input tokens)"
    # The recorded payload as ``LlmResponse`` reads it (its shape was checked on load).
    blocks: list[dict[str, Any]] = response.response.get("content") or []
    text = "".join([b.get("text", "") for b in blocks if b.get("type") == "text"]).strip()
    if limit is not None and len(text) > limit:
        return text
    calls = []
    lead = text + " → " if text else "→ "
    length = len(lead) - 2  # the length so far: ", " goes between the calls
    for b in blocks:
        if b.get("type") == "tool_use":
            calls.append(_call(b))
            length += len(calls[-1]) + 2
            if limit is not None and length >= limit:
                break
    if calls:
        return lead + ", ".join(calls)
    return text or f"(stop: {response.response.get('stop_reason', 'end_turn')})"


def tool_gist(call: ToolCall | None, result: ToolResult | None, limit: int | None = None) -> str:
    """:func:`gist_of` a tool step."""
    head = _json(call.input) if call else ""
    if result is None:
        return f"{head} → (no result: the run stopped here)"
    if limit is not None and len(head) > limit:
        return head
    content = result.content
    if isinstance(content, str):
        body = content
    else:
        from regista.types import text_of

        body = text_of(content) or _json(content)
    return f"{head} → {body if limit is None else body[:limit]}"


def compaction_gist(compaction: ContextCompaction, limit: int | None = None) -> str:
    """:func:`gist_of` a compaction step."""
    summary = compaction.summary if limit is None else compaction.summary[:limit]
    return (
        f"{len(compaction.replaced)} messages (~{compaction.tokens_before:,} tokens) → "
        f"summary: {summary}"
    )
