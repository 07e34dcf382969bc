"""Search across the text of steps: a fast byte pre-filter, then a check on what people see.

The raw line is searched first (case-insensitively, for the query as it is and as JSON
would escape it); candidate steps are then decoded and matched against their visible text
only, so that a tool's name in every request's tool list does not make every model call
a match.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import orjson

from regista.errors import RegistaError
from regista.trace.index import TraceIndex
from regista.trace.steps import Step

__all__ = ["search_steps", "visible_text"]


def visible_text(step: Step) -> str:
    """What the step view shows of a step, as one string (JSON-escaped)."""
    parts: list[Any] = []
    if step.kind == "model":
        req, resp = step.request_event, step.response_event
        if req is not None:
            parts.append(req.messages)
        if resp is not None:
            parts.append(resp.response.get("content"))
    elif step.kind == "tool":
        call, dec, res = step.tool_call, step.decision, step.result
        if call is not None:
            parts += [call.name, call.input]
        if dec is not None and dec.reason:
            parts.append(dec.reason)
        if res is not None:
            parts.append(res.content)
    elif step.compaction is not None:
        parts += [step.compaction.summary, step.compaction.replaced]
    parts += [err.message for err in step.errors]
    return orjson.dumps(parts).decode()


def search_steps(
    index: TraceIndex, query: str, *, cancelled: Callable[[], bool] = lambda: False
) -> list[int]:
    """Positions of the steps whose visible text contains ``query`` (case-insensitive)."""
    # Text inside a JSON string is escaped ('\\"'); a tool's input is JSON itself, shown
    # and searched as it is ('{"order_id":"A-1"}'): look for the query both ways.
    escaped = orjson.dumps(query).decode()[1:-1]
    needles = {escaped.lower(), query.lower()}
    pattern = re.compile(b"|".join(re.escape(n.encode()) for n in sorted(needles)), re.IGNORECASE)
    out: list[int] = []
    for pos in range(len(index)):
        if cancelled():
            break
        if not pattern.search(index.step_text(pos)):
            continue
        try:
            text = visible_text(index.step(pos)).lower()
            if any(n in text for n in needles):
                out.append(pos)
        except RegistaError:
            continue
    return out
