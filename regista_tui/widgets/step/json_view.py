"""JSON as the step view shows it: pretty-printed, highlighted, and wrapped only between
words, with continuation lines indented under their value (never ``"Stand`` / ``ing``)."""

from __future__ import annotations

import re
from typing import Any

import orjson
from rich.console import Console, ConsoleOptions, RenderResult
from rich.text import Text

__all__ = ["JsonView", "pretty_json"]

KEY = "bold blue"
STRING = "green"
NUMBER = "cyan"
LITERAL = "magenta"

#: One line of orjson's indented output: indent, optional ``"key": ``, value, optional comma.
_LINE = re.compile(r'^( *)(?:("(?:[^"\\]|\\.)*"): )?(.*?)(,?)$')
#: A word and the spaces after it (where a long string may be wrapped).
_WORD = re.compile(r"\S+\s*|\s+")


def pretty_json(value: Any) -> str:
    """``value`` as indented JSON (its ``repr`` when it is not JSON)."""
    try:
        return orjson.dumps(value, option=orjson.OPT_INDENT_2).decode()
    except TypeError:
        return repr(value)


def _value_style(value: str) -> str:
    if value.startswith('"'):
        return STRING
    if value in ("true", "false", "null"):
        return LITERAL
    if value[:1] in "-0123456789":
        return NUMBER
    return ""


class JsonView:
    """Indented, highlighted JSON that wraps between words, with a hanging indent.

    Args:
        value: The value to show.
        limit: Characters of JSON shown; the rest is counted ("m: show more").
    """

    def __init__(self, value: Any, limit: int = 2000) -> None:
        body = pretty_json(value)
        self.more = max(0, len(body) - limit)
        self.lines = body[:limit].split("\n")

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        width = max(20, options.max_width)
        for line in self.lines:
            yield from self._line(line, width)
        if self.more:
            yield Text(f"… {self.more:,} more characters (m: show more)", "dim")

    def _line(self, line: str, width: int) -> list[Text]:
        m = _LINE.match(line)
        assert m is not None  # the pattern matches any line
        indent, key, value, comma = m.groups()
        head = Text(indent)
        if key is not None:
            head.append(key, KEY).append(": ")
        style = _value_style(value)
        if head.cell_len + len(value) + len(comma) <= width:
            return [head.append(value, style).append(comma)]
        # Too long: the value wraps between words under its own start (or, when the key
        # leaves too little room, two spaces in from the line's indent).
        hang = head.cell_len if width - head.cell_len >= 24 else len(indent) + 2
        out: list[Text] = []
        current = head
        room = width - current.cell_len
        for word in _WORD.findall(value):
            while len(word) > room and current.cell_len > hang:  # start a new line
                out.append(current)
                current, room = Text(" " * hang), width - hang
            while len(word) > room:  # a word longer than a whole line: fold it
                current.append(word[:room], style)
                out.append(current)
                word = word[room:]
                current, room = Text(" " * hang), width - hang
            current.append(word, style)
            room -= len(word)
        out.append(current.append(comma))
        return out
