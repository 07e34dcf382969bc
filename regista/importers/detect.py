"""Which format a file holds, from its content (never its name).

``detect(data)`` looks at the first JSON line (or, for a single JSON document, the whole
document) and answers ``"regista"``, ``"claude-code"``, ``"codex"``, ``"otlp"`` or ``None``.
It is cheap enough to run on every file a command opens. A regista trace is told by
:func:`regista.trace.formats.is_regista_event`, the trace layer's own test.
"""

from __future__ import annotations

from typing import Any

import orjson

from regista.trace.formats import is_regista_event

__all__ = ["FORMATS", "any_line_is", "detect", "detect_object"]

#: Formats regista converts on open, by the name ``regista import`` uses.
FORMATS = ("claude-code", "codex", "otlp")

_CODEX_WRAPPED = {"session_meta", "response_item", "event_msg", "turn_context", "compacted"}
_CODEX_ITEMS = {
    "message",
    "reasoning",
    "function_call",
    "function_call_output",
    "custom_tool_call",
    "custom_tool_call_output",
    "local_shell_call",
    "web_search_call",
}
_PROBE_LINES = 20
_WHOLE_LIMIT = 64 * 1024 * 1024


def detect_object(obj: dict[str, Any]) -> str | None:
    """The format a decoded first line (or whole document) belongs to."""
    from regista.importers import claude_code

    kind = obj.get("type")
    if not isinstance(kind, str) and kind is not None:
        kind = ""  # a type that is not a name (a list, a number) is no known kind
    if is_regista_event(obj):
        return "regista"
    if kind in _CODEX_WRAPPED and "payload" in obj:
        return "codex"
    if "record_type" in obj or (
        kind is None and "id" in obj and "timestamp" in obj and "instructions" in obj
    ):
        return "codex"
    if isinstance(obj.get("session"), dict) and isinstance(obj.get("items"), list):
        return "codex"
    if kind in _CODEX_ITEMS and "sessionId" not in obj and "uuid" not in obj:
        return "codex"
    if isinstance(obj.get("resourceSpans"), list):
        return "otlp"
    if claude_code.looks_like(obj):
        return "claude-code"
    return None


def detect(data: bytes) -> str | None:
    """The format of a file's bytes, or ``None`` when it is none regista knows."""
    start = 0
    for _ in range(_PROBE_LINES):
        end = data.find(b"\n", start)
        line = data[start:] if end < 0 else data[start:end]
        if line.strip():
            try:
                obj = orjson.loads(line)
            except orjson.JSONDecodeError:
                obj = None
            if isinstance(obj, dict):
                return detect_object(obj)
            if line.strip() in (b"{", b"["):
                break  # a pretty-printed document: decode it whole
        if end < 0:
            break
        start = end + 1
    if len(data) <= _WHOLE_LIMIT and data.lstrip()[:1] == b"{":
        try:
            obj = orjson.loads(data)
        except orjson.JSONDecodeError:
            return None
        if isinstance(obj, dict):
            return detect_object(obj)
    return None


def any_line_is(data: bytes, fmt: str) -> bool:
    """Whether any line of ``data`` is an object of the format ``fmt`` (a transcript whose
    first lines are damaged is still one)."""
    for line in data.splitlines():
        try:
            obj = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue
        if isinstance(obj, dict) and detect_object(obj) == fmt:
            return True
    return False
