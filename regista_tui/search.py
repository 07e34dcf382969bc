"""Search across the text of steps: a fast byte pre-filter, then a check on what people see.

The raw lines are searched first (case-insensitively, for the query as it is and as JSON
would escape it); candidate steps are then parsed (plain JSON, no validation) and matched
against their visible text only, so that a tool's name in every request's tool list does
not make every model call a match. The search starts at a given step and wraps around,
and says where its first match is as soon as it has one.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import orjson

from regista.engine import TraceIndex, too_deep

__all__ = ["search_steps", "visible_text"]


def _json(value: Any) -> str:
    return orjson.dumps(value).decode()


def _block_text(block: Any) -> str:
    """A content block as the step view shows it (its text, not its JSON envelope)."""
    if not isinstance(block, dict):
        return str(block)
    kind = block.get("type")
    if kind == "text":
        return str(block.get("text", ""))
    if kind == "tool_use":
        return f"tool_use {block.get('name')} {block.get('id', '')} {_json(block.get('input'))}"
    if kind == "tool_result":
        content = block.get("content")
        body = content if isinstance(content, str) else _json(content)
        return f"tool_result {block.get('tool_use_id', '')} {body}"
    if kind == "thinking":
        return f"thinking {block.get('thinking', '')}"
    return _json(block)


def _messages_text(messages: Any) -> list[str]:
    out: list[str] = []
    for message in messages if isinstance(messages, list) else []:
        if not isinstance(message, dict):
            continue
        out.append(str(message.get("role", "")))
        content = message.get("content")
        if isinstance(content, str):
            out.append(content)
        else:
            out += [_block_text(b) for b in content if b] if isinstance(content, list) else []
    return out


def visible_text(events: list[dict[str, Any]]) -> str:
    """The text the step view shows of a step's events: messages and answers as text, tool
    inputs as JSON (as they are drawn), not the JSON the events are stored in (so that
    "content" or "type" does not match every step)."""
    parts: list[str] = []
    for ev in events:
        kind = ev.get("type")
        if kind == "llm.request":
            parts += _messages_text(ev.get("messages"))  # the new messages of this turn
        elif kind == "llm.response":
            response = ev.get("response")
            content = response.get("content") if isinstance(response, dict) else None
            parts += [_block_text(b) for b in content] if isinstance(content, list) else []
        elif kind == "tool.call":
            parts += [str(ev.get("name")), _json(ev.get("input"))]
        elif kind == "permission.decision" and ev.get("reason"):
            parts.append(str(ev["reason"]))
        elif kind == "tool.result":
            content = ev.get("content")
            parts.append(content if isinstance(content, str) else _json(content))
        elif kind == "context.compaction":
            parts.append(str(ev.get("summary", "")))
            parts += _messages_text(ev.get("replaced"))
        elif kind == "error":
            parts.append(str(ev.get("message", "")))
    return "\n".join(parts)


def search_steps(
    index: TraceIndex,
    query: str,
    *,
    start: int = 0,
    on_first: Callable[[int], None] | None = None,
    cancelled: Callable[[], bool] = lambda: False,
) -> list[int]:
    """Positions of the steps whose visible text contains ``query`` (case-insensitive).

    Args:
        start: The position to search from; the search wraps around to it.
        on_first: Called with the first match found from ``start`` on, as soon as found.
        cancelled: Polled between steps; the search stops early when it says so.

    Returns:
        The matches, in trace order.
    """
    # Text inside a JSON string is escaped ('\\"'); a tool's input is JSON itself, shown
    # and searched as it is ('{"order_id":"A-1"}'): look for the query both ways.
    escaped = orjson.dumps(query).decode()[1:-1]
    needles = {escaped.lower(), query.lower()}
    pattern = re.compile(b"|".join(re.escape(n.encode()) for n in sorted(needles)), re.IGNORECASE)
    count = len(index)
    start = max(0, min(start, count - 1)) if count else 0
    out: list[int] = []
    for pos in [*range(start, count), *range(0, start)]:
        if cancelled():
            break
        raw = index.step_text(pos)
        if not pattern.search(raw):
            continue
        try:
            lines = raw.split(b"\n")
            events = [orjson.loads(line) for line in lines]
        except orjson.JSONDecodeError:
            continue  # a corrupt line: the step view says what is wrong with it
        if any(too_deep(line, ev) for line, ev in zip(lines, events, strict=True)):
            continue  # likewise
        text = visible_text([ev for ev in events if isinstance(ev, dict)]).lower()
        if any(n in text for n in needles):
            if not out and on_first is not None:
                on_first(pos)
            out.append(pos)
    return sorted(out)
