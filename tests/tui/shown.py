"""What the screen shows, as plain text: the one way every TUI test reads it."""

from __future__ import annotations

import io
from typing import Any

from rich.console import Console

__all__ = ["plain", "text_of"]

#: Wide enough that a header or a status line is never wrapped in the text read.
WIDTH = 300


def plain(renderable: object, width: int = WIDTH) -> str:
    """``renderable`` (a widget's content, a Rich renderable) drawn ``width`` wide, as text."""
    console = Console(width=width, record=True, file=io.StringIO(), color_system=None)
    console.print(renderable)
    return console.export_text()


def text_of(app: Any, selector: str, width: int = WIDTH) -> str:
    """What a widget of the current screen shows (a Static, a step pane), as plain text."""
    return plain(app.screen.query_one(selector).content, width)
