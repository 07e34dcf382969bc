"""The scrubber: the whole run squeezed into one line, with markers and the cursor."""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
from textual import events
from textual.message import Message
from textual.reactive import reactive
from textual.strip import Strip
from textual.widget import Widget

from regista.engine import StepEntry, StepList

__all__ = ["Scrubber"]

# Later entries win when several steps share a cell.
_MARKS = [
    ("compaction", "≡", "bold magenta"),
    ("repeat", "↻", "bold yellow"),
    ("breakpoint", "●", "bold red"),
    ("error", "✗", "bold red"),
    ("denied", "⊘", "bold yellow"),
]


class Scrubber(Widget):
    """Where the cursor is in the run, with errors, denials, repeats (loops), compactions and
    breakpoints."""

    DEFAULT_CSS = """
    Scrubber { height: 1; background: $panel; }
    """

    position: reactive[int] = reactive(0)

    class Scrubbed(Message):
        """The user clicked the bar at ``position``."""

        def __init__(self, scrubber: Scrubber, position: int) -> None:
            super().__init__()
            self.scrubber = scrubber
            self.position = position

        @property
        def control(self) -> Scrubber:
            return self.scrubber

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.total = 0
        self._cells: list[tuple[str, str]] = []
        #: ``(position, kind, error, denied)`` of the steps a mark may show.
        self._marked: Sequence[tuple[int, str, bool, bool]] = []
        self._breakpoint: set[int] = set()
        self._repeats: set[int] = set()

    def update_marks(
        self, entries: Sequence[StepEntry], breakpoints: set[int], repeats: set[int] | None = None
    ) -> None:
        """Recompute the markers from the index's step entries (cheap: no decoding; from
        the columns of a :class:`StepList`, without an entry per step) and the positions of
        the steps that repeat earlier ones."""
        total = len(entries)  # the scan thread keeps appending: the steps up to here
        if isinstance(entries, StepList):
            marked = [m for m in entries.marked() if m[0] < total]
        else:
            marked = [
                (pos, e.kind, e.error, e.denied)
                for pos, e in enumerate(entries[:total])
                if e.error or e.denied or e.kind == "compaction"
            ]
        self._marked = marked
        self._breakpoint = breakpoints
        if repeats is not None:
            self._repeats = repeats
        self.total = total
        self._cells = []
        self.refresh()

    def _layout(self, width: int) -> list[tuple[str, str]]:
        cells = [("─", "dim")] * width
        if not self.total or width <= 0:
            return cells
        rank = {name: i for i, (name, _, _) in enumerate(_MARKS)}
        best: dict[int, int] = {}
        marked = {pos: (kind, error, denied) for pos, kind, error, denied in self._marked}
        at = sorted({*marked, *self._repeats, *self._breakpoint})
        for pos in at:
            if not 0 <= pos < self.total:
                continue
            kind, error, denied = marked.get(pos, ("", False, False))
            flags = []
            if kind == "compaction":
                flags.append("compaction")
            if pos in self._repeats:
                flags.append("repeat")
            if pos in self._breakpoint:
                flags.append("breakpoint")
            if denied:
                flags.append("denied")
            if error:
                flags.append("error")
            if not flags:
                continue
            cell = min(width - 1, pos * width // self.total)
            r = max(rank[f] for f in flags)
            if r >= best.get(cell, -1):
                best[cell] = r
        for cell, r in best.items():
            _, ch, style = _MARKS[r]
            cells[cell] = (ch, style)
        return cells

    def render_line(self, y: int) -> Strip:
        """The bar (on the line API: a move redraws one line of cached runs of cells)."""
        width = self.size.width
        style = self.rich_style
        if y != 0 or width <= 0:
            return Strip.blank(width, style)
        if len(self._cells) != width:
            self._cells = self._layout(width)
        here = self.position * width // self.total if self.total else -1
        text = Text(no_wrap=True, end="", style=style)
        run_start = 0
        cells = self._cells
        for i in range(width + 1):
            # Cells of one style are appended as one run; the cursor's cell stands alone.
            if i < width and i != here and i - 1 != here and cells[i][1] == cells[run_start][1]:
                continue
            if run_start < i:
                if run_start == here:
                    ch = cells[here][0]
                    text.append("▼" if ch == "─" else ch, "bold reverse")
                else:
                    text.append("".join(c for c, _ in cells[run_start:i]), cells[run_start][1])
            run_start = i
        return Strip(text.render(self.app.console)).crop_extend(0, width, style)

    def watch_position(self) -> None:
        self.refresh()

    def on_resize(self) -> None:
        self._cells = []

    def on_click(self, event: events.Click) -> None:
        if self.total and self.size.width:
            pos = min(self.total - 1, event.x * self.total // self.size.width)
            self.post_message(self.Scrubbed(self, pos))
