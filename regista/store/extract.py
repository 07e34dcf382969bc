"""What the recall index keeps of a trace's events: searchable text and a skeleton.

Events are decoded with orjson only (no validation): the index must survive any file, and
whatever it cannot read it leaves out. A step's searchable text is what a person reads in
it: the model's words and tool calls (name and input), the tool's result, errors, a
compaction's summary, and what a model request adds to the conversation (a prompt typed
after the first, text a harness injected). Those texts, cut at :data:`MAX_EVENT_TEXT`, are
the snippets. The words a run is found by come from every text of every event in full:
requests included (their system prompt, tool descriptions and new messages, each system
prompt and tool list once), tool results however long.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import orjson

__all__ = [
    "END_STEP",
    "MAX_EVENT_TEXT",
    "WORD",
    "RunDigest",
    "add_words",
    "digest_lines",
    "event_text",
    "request_text",
]

#: The step number under which the task (``session.start``) and the outcome
#: (``session.end``) are indexed.
TASK_STEP = -1
END_STEP = -2

#: Characters of one event's text that are indexed (a 5 MB tool result is not needed whole
#: to be recalled by its words).
MAX_EVENT_TEXT = 2000
#: Characters of a run's distinct words kept for run-level matching (a safety valve: a run
#: of ordinary text has far fewer; one full of random ids may reach a few MB).
MAX_RUN_TEXT = 32_000_000

#: A word, as SQLite's unicode61 tokenizer splits text.
WORD = re.compile(r"[^\W_]+")

#: Bytes to split on (ASCII that is not a letter or digit: a space) and ASCII capitals
#: folded; bytes of other characters are kept, for :func:`add_words` to look at again.
_FOLD = bytes(
    (c + 32 if 65 <= c <= 90 else c) if (chr(c).isalnum() and c < 128) or c >= 128 else 32
    for c in range(256)
)


def add_words(text: str, words: set[str]) -> None:
    """Add the distinct words of ``text``, lower-cased, split as :data:`WORD` splits.

    ASCII is split and folded by ``bytes.translate`` and ``split`` (about three times as
    fast as the regular expression over a tool's output); only the pieces that hold other
    characters are split again by :data:`WORD`.
    """
    raw = text.encode("utf-8", "surrogatepass").translate(_FOLD)
    if raw.isascii():
        words.update(raw.decode("ascii").split())
        return
    pieces = set(raw.decode("utf-8", "surrogatepass").split())
    odd = [p for p in pieces if not p.isascii()]
    pieces.difference_update(odd)
    words.update(pieces)
    if odd:
        words.update(WORD.findall(" ".join(odd).lower()))


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


def _message_text(messages: Any, *, typed: bool) -> str:
    """The text of request messages: with ``typed``, only what a user message says in its
    own words (no tool results, no assistant turns: those are steps of their own)."""
    if not isinstance(messages, list):
        return ""
    parts = []
    for m in messages:
        if not isinstance(m, dict):
            continue
        content = m.get("content")
        if typed:
            if m.get("role") != "user":
                continue
            if isinstance(content, list):
                content = [b for b in content if isinstance(b, dict) and b.get("type") == "text"]
            parts.append(_blocks_text(content))
            continue
        parts.append(_blocks_text(content))
        if isinstance(content, list):  # tool calls' inputs in assistant turns
            parts.extend(
                _dump(b.get("input"))
                for b in content
                if isinstance(b, dict) and b.get("type") == "tool_use"
            )
    return "\n".join(p for p in parts if p)


def request_text(ev: dict[str, Any], *, typed: bool = True) -> str:
    """The text an ``llm.request`` adds: with ``typed``, what its new user messages say in
    their own words (the snippet); else every text of its new messages."""
    return _message_text(ev.get("messages"), typed=typed)


def event_text(ev: dict[str, Any], limit: int = MAX_EVENT_TEXT) -> str:
    """The searchable text of one decoded event ('' for none), cut at ``limit``
    characters (``0``: whole)."""
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
    elif t == "llm.request":
        text = request_text(ev)
    return (text[:limit] if limit else text).strip()


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
        words: The distinct words (lower case) of every text of the events, in full.
    """

    start: dict[str, Any] | None = None
    end: dict[str, Any] | None = None
    texts: list[tuple[int, str]] = field(default_factory=list)
    skeleton: list[str] = field(default_factory=list)
    last_step: int = -1
    consumed: int = 0
    words: set[str] = field(default_factory=set)


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
    words = d.words
    last_system: Any = None
    last_tools: Any = None
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
        whole = event_text(ev, 0)
        if whole:
            add_words(whole, words)
        if t == "llm.request":
            rest = [request_text(ev, typed=False)]
            system = ev.get("system")
            if system and system != last_system:
                last_system = system
                rest.append(system if isinstance(system, str) else _blocks_text(system))
            tools = ev.get("tools")
            if tools and tools != last_tools:
                last_tools = tools
                rest.append(_dump(tools))
            for r in rest:
                if r:
                    add_words(r, words)
        elif t == "session.start":
            for key in ("instructions", "system"):
                if isinstance(ev.get(key), str):
                    add_words(ev[key], words)
        text = whole[:MAX_EVENT_TEXT].strip()
        if t == "session.end":
            step = END_STEP
        if text:
            d.texts.append((step, text))
    return d
