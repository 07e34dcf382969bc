"""Attribute values cut to a size without breaking them (``--max-value-chars``).

Backends parse JSON-valued attributes (``gen_ai.input.messages``, …): a value cut in the
middle of a string is dropped whole. So a value over the limit loses whole messages (the
oldest first, keeping the last), then whole parts of the message left, and only a single
part still too long has its text shortened, inside the JSON, with "…". A plain string is
cut with "…". Every value stays what it was: valid JSON stays valid JSON.
"""

from __future__ import annotations

from typing import Any

import orjson

__all__ = ["fit_json", "fit_text"]

_ELLIPSIS = "…"
#: Keys whose values say what a message or part is: never shortened.
_STRUCTURAL = frozenset({"role", "type", "id", "name", "finish_reason", "modality", "mime_type"})


def fit_text(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters (ending in "…" when cut)."""
    if len(text) <= limit:
        return text
    return text[: max(limit - 1, 0)] + _ELLIPSIS if limit > 0 else ""


def _size(value: Any) -> int:
    return len(orjson.dumps(value).decode())


def _shorten_strings(value: Any, limit: int) -> Any:
    """The longest strings of ``value`` cut until its JSON fits (or nothing is left to cut)."""
    for _ in range(64):
        over = _size(value) - limit
        if over <= 0:
            return value
        path, longest = _longest(value, ())
        if path is None or len(longest) <= 1:
            break
        keep = max(len(longest) - over - 1, 0)
        value = _replace(value, path, fit_text(longest, keep + 1) if keep else _ELLIPSIS)
    return value


def _longest(value: Any, path: tuple[Any, ...]) -> tuple[tuple[Any, ...] | None, str]:
    best: tuple[tuple[Any, ...] | None, str] = (None, "")
    items: Any = (
        value.items()
        if isinstance(value, dict)
        else enumerate(value)
        if isinstance(value, list)
        else ()
    )
    if isinstance(value, str):
        return path, value
    for key, child in items:
        if key in _STRUCTURAL:
            continue
        found = _longest(child, (*path, key))
        if found[0] is not None and len(found[1]) > len(best[1]):
            best = found
    return best


def _replace(value: Any, path: tuple[Any, ...], new: str) -> Any:
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(value, dict):
        return {**value, head: _replace(value[head], rest, new)}
    copy = list(value)
    copy[head] = _replace(copy[head], rest, new)
    return copy


def fit_json(value: Any, limit: int) -> str:
    """The JSON of ``value`` in at most ``limit`` characters where possible, always valid.

    A list of messages (``{"role", "parts"}``) loses its oldest messages first, then the
    last message's trailing parts; any other list loses its trailing items; then the longest
    strings are shortened.
    """
    text = orjson.dumps(value).decode()
    if len(text) <= limit:
        return text
    if isinstance(value, list):
        items = list(value)
        messages = all(isinstance(m, dict) and "parts" in m for m in items)
        while len(items) > 1 and _size(items) > limit:
            items.pop(0 if messages else -1)
        if messages and items and _size(items) > limit:
            parts = list(items[0]["parts"])
            while len(parts) > 1 and _size([{**items[0], "parts": parts}]) > limit:
                parts.pop()
            items = [{**items[0], "parts": parts}]
        value = items
    return orjson.dumps(_shorten_strings(value, limit)).decode()
