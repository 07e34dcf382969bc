"""What the recall index keeps of a trace's events: searchable text and a skeleton.

Events are decoded with orjson only (no validation): the index must survive any file, and
whatever it cannot read it leaves out. A step's searchable text is what a person reads in
it: the model's words and tool calls (name and input), the tool's result, errors, a
compaction's summary. Requests are left out: they repeat what the steps before them said.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import orjson

__all__ = ["END_STEP", "MAX_EVENT_TEXT", "RunDigest", "digest_lines", "event_text"]

#: The step number under which the task (``session.start``) and the outcome
#: (``session.end``) are indexed.
TASK_STEP = -1
END_STEP = -2

#: Characters of one event's text that are indexed (a 5 MB tool result is not needed whole
#: to be recalled by its words).
MAX_EVENT_TEXT = 2000
#: Characters of a run's distinct words kept for run-level matching.
MAX_RUN_TEXT = 400_000


def _blocks_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    parts = []
    for b in content:
        if not isinstance(b, dict):
            continue
        if isinstance(b.get("text"), str):
            parts.append(b["text"])
        elif isinstance(b.get("thinking"), str):
            parts.append(b["thinking"])
        elif "content" in b:
            parts.append(_blocks_text(b.get("content")))
    return "\n".join(p for p in parts if p)


def _dump(value: Any) -> str:
    try:
        return orjson.dumps(value).decode()
    except TypeError:
        return ""


def event_text(ev: dict[str, Any]) -> str:
    """The searchable text of one decoded event ('' for none)."""
    t = ev.get("type")
    text = ""
    if t == "session.start":
        text = str(ev.get("task") or "")
    elif t == "llm.response":
        resp = ev.get("response")
        text = _blocks_text(resp.get("content")) if isinstance(resp, dict) else ""
    elif t == "tool.call":
        text = f"{ev.get('name', '')} {_dump(ev.get('input'))}"
    elif t == "tool.result":
        text = _blocks_text(ev.get("content"))
    elif t == "error":
        text = f"{ev.get('error_type', '')}: {ev.get('message', '')}"
    elif t == "context.compaction":
        text = str(ev.get("summary") or "")
    elif t == "permission.decision" and ev.get("allowed") is False:
        text = f"denied {ev.get('reason') or ''}"
    elif t == "session.end":
        text = " ".join(str(ev.get(k) or "") for k in ("output", "error"))
    return text[:MAX_EVENT_TEXT].strip()


@dataclass
class RunDigest:
    """What one pass over (part of) a trace found.

    Attributes:
        start: The decoded ``session.start`` (only when the pass began at the file start).
        end: The decoded ``session.end``, if seen.
        texts: ``(step, text)`` per event with text (:data:`TASK_STEP` for the task and
            events outside any step, :data:`END_STEP` for ``session.end``).
        skeleton: The run as a short path: tool names (``!`` error, ``-`` denied), ``model``
            turns are left out; compactions show as ``compact``.
        last_step: The highest step number seen.
        consumed: Bytes read, up to and including the last complete line.
    """

    start: dict[str, Any] | None = None
    end: dict[str, Any] | None = None
    texts: list[tuple[int, str]] = field(default_factory=list)
    skeleton: list[str] = field(default_factory=list)
    last_step: int = -1
    consumed: int = 0


def digest_lines(data: bytes, *, at_start: bool) -> RunDigest:
    """Digest the complete lines of ``data`` (a trace, or what was appended to it).

    Raises:
        ValueError: ``at_start`` and the first line is not a ``session.start``.
    """
    d = RunDigest()
    end = data.rfind(b"\n")
    if end < 0:
        if at_start:
            raise ValueError("no complete line")
        return d
    d.consumed = end + 1
    tool_pos: dict[int, int] = {}
    first = True
    for raw in data[:end].split(b"\n"):
        try:
            ev = orjson.loads(raw)
        except orjson.JSONDecodeError:
            ev = None
        if first and at_start:
            if not isinstance(ev, dict) or ev.get("type") != "session.start":
                raise ValueError("does not begin with a session.start event")
            if not isinstance(ev.get("session_id"), str):
                raise ValueError("session.start has no session_id")
            d.start = ev
        first = False
        if not isinstance(ev, dict):
            continue
        step = ev.get("step")
        step = step if isinstance(step, int) and not isinstance(step, bool) else -1
        d.last_step = max(d.last_step, step)
        t = ev.get("type")
        if t == "session.end":
            d.end = ev
        elif t == "tool.call":
            tool_pos[step] = len(d.skeleton)
            d.skeleton.append(str(ev.get("name") or "?")[:60])
        elif t == "context.compaction":
            d.skeleton.append("compact")
        elif t in ("tool.result", "permission.decision", "error") and step in tool_pos:
            mark = ""
            if t == "permission.decision" and ev.get("allowed") is False:
                mark = "-"
            elif t == "error" or (t == "tool.result" and ev.get("is_error") is True):
                mark = "!"
            i = tool_pos[step]
            if mark and not d.skeleton[i].endswith(("!", "-")):
                d.skeleton[i] += mark
        elif t == "error" and step >= 0:
            d.skeleton.append("error!")
        text = event_text(ev)
        if t == "session.end":
            step = END_STEP
        if text:
            d.texts.append((step, text))
    return d
