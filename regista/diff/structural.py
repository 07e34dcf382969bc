"""Structural diff of JSON-like values, with field paths people can read.

``structural_diff(recorded, live)`` returns :class:`Change` items whose ``path`` points at
exactly what differs, e.g. ``request.messages[3].content[0].text``. Long strings are shown
around their first differing character. Replay divergences, run diffs and the TUI's
request diffs all use this one engine.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import orjson

__all__ = ["Change", "format_changes", "short_repr", "structural_diff"]

Op = Literal["changed", "added", "removed"]

_WINDOW = 30


@dataclass(frozen=True)
class Change:
    """One difference.

    Attributes:
        path: Where, e.g. ``request.messages[3].content[0].text``.
        op: ``changed`` (both sides have a value), ``added`` (only the new side),
            ``removed`` (only the old side).
        old: The old (recorded / left) value, ``None`` when added.
        new: The new (live / right) value, ``None`` when removed.
    """

    path: str
    op: Op
    old: Any = None
    new: Any = None

    @property
    def first_difference(self) -> int | None:
        """0-based index of the first differing character, when both sides are strings."""
        if isinstance(self.old, str) and isinstance(self.new, str):
            return _first_diff(self.old, self.new)
        return None

    def describe(self, old_label: str = "recorded", new_label: str = "live") -> str:
        """One line for people, e.g. ``request.system: recorded 'a' != live 'b'``."""
        if self.op == "added":
            return f"{self.path}: only {new_label} has {short_repr(self.new)}"
        if self.op == "removed":
            return f"{self.path}: only {old_label} has {short_repr(self.old)}"
        i = self.first_difference
        if i is not None:
            a, b = _window(self.old, i), _window(self.new, i)
            where = (
                f" (first difference at character {i + 1})"
                if len(self.old) > 2 * _WINDOW or len(self.new) > 2 * _WINDOW or i > _WINDOW
                else ""
            )
            return f"{self.path}: {old_label} {a} != {new_label} {b}{where}"
        return (
            f"{self.path}: {old_label} {short_repr(self.old)} != {new_label} {short_repr(self.new)}"
        )

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "op": self.op, "old": self.old, "new": self.new}


def _first_diff(a: str, b: str) -> int:
    n = min(len(a), len(b))
    for i in range(n):
        if a[i] != b[i]:
            return i
    return n


def _window(s: str, i: int) -> str:
    start = max(0, i - _WINDOW)
    end = min(len(s), i + _WINDOW)
    body = repr(s[start:end])
    return ("…" if start > 0 else "") + body + ("…" if end < len(s) else "")


def short_repr(value: Any, limit: int = 80) -> str:
    """A compact one-line rendering of a JSON value."""
    if isinstance(value, str):
        text = repr(value)
    else:
        try:
            text = orjson.dumps(value).decode()
        except TypeError:
            text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def structural_diff(old: Any, new: Any, path: str = "") -> list[Change]:
    """Every difference between two JSON-like values, in document order."""
    out: list[Change] = []
    _diff(old, new, path, out)
    return out


def _diff(old: Any, new: Any, path: str, out: list[Change]) -> None:
    if old == new and type(old) is type(new):
        return
    if isinstance(old, dict) and isinstance(new, dict):
        for key in old:
            sub = f"{path}.{key}" if path else str(key)
            if key in new:
                _diff(old[key], new[key], sub, out)
            else:
                out.append(Change(sub, "removed", old=old[key]))
        for key in new:
            if key not in old:
                sub = f"{path}.{key}" if path else str(key)
                out.append(Change(sub, "added", new=new[key]))
        return
    if isinstance(old, list) and isinstance(new, list):
        n = min(len(old), len(new))
        for i in range(n):
            _diff(old[i], new[i], f"{path}[{i}]", out)
        for i in range(n, len(old)):
            out.append(Change(f"{path}[{i}]", "removed", old=old[i]))
        for i in range(n, len(new)):
            out.append(Change(f"{path}[{i}]", "added", new=new[i]))
        return
    out.append(Change(path or "<root>", "changed", old=old, new=new))


def format_changes(
    changes: list[Change],
    old_label: str = "recorded",
    new_label: str = "live",
    limit: int = 10,
) -> str:
    """Changes as lines for people, at most ``limit`` of them."""
    lines = [c.describe(old_label, new_label) for c in changes[:limit]]
    if len(changes) > limit:
        lines.append(f"… and {len(changes) - limit} more differences")
    return "\n".join(lines)
