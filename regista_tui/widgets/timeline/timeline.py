"""The timeline: one row per step, rendered lazily (only visible rows are decoded).

A virtual list on Textual's line API (``ScrollView.render_line``), as in toolong: the widget
knows how many steps the index holds, decodes a row's step only when the row scrolls into
view, and caches the rendered row.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

from rich.text import Text
from textual import events
from textual.binding import Binding, BindingType
from textual.geometry import Region, Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from regista.trace.index import TraceIndex
from regista_tui.rows import Row, row_of

__all__ = ["Timeline"]

KIND_BADGE = {
    "model": ("M", "bold cyan"),
    "tool": ("T", "bold green"),
    "compaction": ("C", "bold magenta"),
}
SOURCE_MARK = {"recorded": ("R", "cyan"), "edit": ("E", "bold magenta"), "live": (" ", "")}


class Timeline(ScrollView, can_focus=True):
    """The steps of one run, one per line, with a cursor."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("down,j", "cursor_down", "Next step", id="timeline.down", show=False),
        Binding("up,k", "cursor_up", "Prev step", id="timeline.up", show=False),
        Binding("pagedown", "page_down", "Page down", id="timeline.page_down", show=False),
        Binding("pageup", "page_up", "Page up", id="timeline.page_up", show=False),
        Binding("home", "first", "First step", id="timeline.first", show=False),
        Binding("end", "last", "Last step", id="timeline.last", show=False),
    ]

    COMPONENT_CLASSES: ClassVar[set[str]] = {"timeline--cursor", "timeline--dim"}

    DEFAULT_CSS = """
    Timeline { background: $surface; overflow-x: hidden; }
    Timeline > .timeline--cursor { background: $accent 40%; text-style: bold; }
    Timeline:focus > .timeline--cursor { background: $accent; color: $text; }
    Timeline > .timeline--dim { color: $text-muted; }
    """

    cursor: reactive[int] = reactive(0, always_update=True)

    class StepSelected(Message):
        """The cursor moved to the step at ``position`` (an index into the run's steps)."""

        def __init__(self, timeline: Timeline, position: int) -> None:
            super().__init__()
            self.timeline = timeline
            self.position = position

        @property
        def control(self) -> Timeline:
            return self.timeline

    def __init__(
        self,
        index: TraceIndex,
        *,
        model_label: str | None = None,
        marker: Callable[[int], str | None] | None = None,
        id: str | None = None,
    ) -> None:
        super().__init__(id=id)
        self.index = index
        self.model_label = model_label
        #: Extra gutter mark for a position (breakpoints, divergence), set by the screen.
        self.marker = marker
        self._rows: dict[int, Row] = {}
        self._strips: dict[tuple[int, int, bool], Strip] = {}

    # -- data ----------------------------------------------------------------------------

    def row(self, pos: int) -> Row:
        """The (cached) summary row of the step at ``pos``."""
        row = self._rows.get(pos)
        if row is None:
            try:
                row = row_of(self.index.step(pos), self.model_label)
            except Exception as exc:  # shown in place: one bad line must not hide the rest
                entry = self.index.steps[pos]
                row = Row(
                    entry.index,
                    entry.kind,
                    "?",
                    f"(unreadable: {exc})",
                    None,
                    None,
                    True,
                    False,
                    "live",
                    False,
                )
            if row.complete:
                self._rows[pos] = row
        return row

    def grow(self) -> None:
        """The index has more steps (or a step changed): resize and redraw."""
        self._strips.clear()
        for pos in [p for p, r in self._rows.items() if not r.complete]:
            del self._rows[pos]
        self.virtual_size = Size(self.size.width, len(self.index))
        self.refresh()

    def forget_marks(self) -> None:
        """Gutter marks changed (e.g. a breakpoint): redraw."""
        self._strips.clear()
        self.refresh()

    # -- rendering -----------------------------------------------------------------------

    def on_resize(self, event: events.Resize) -> None:
        self._strips.clear()
        self.virtual_size = Size(event.size.width, len(self.index))

    def render_line(self, y: int) -> Strip:
        pos = self.scroll_offset.y + y
        width = self.size.width
        if pos >= len(self.index) or width <= 0:
            return Strip.blank(width, self.rich_style)
        selected = pos == self.cursor
        key = (pos, width, selected)
        strip = self._strips.get(key)
        if strip is None:
            text = self._row_text(self.row(pos), pos, width)
            style = self.rich_style
            if selected:
                style = style + self.get_component_rich_style("timeline--cursor")
            text.stylize(style, 0)
            segments = list(text.render(self.app.console))
            strip = Strip(segments).crop_extend(0, width, style)
            if len(self._strips) > 2000:
                self._strips.clear()
            self._strips[key] = strip
        return strip

    def _row_text(self, row: Row, pos: int, width: int) -> Text:
        mark = self.marker(pos) if self.marker else None
        text = Text(no_wrap=True, overflow="ellipsis", end="")
        text.append(f"{row.number:>5} ", "dim")
        text.append(mark or " ", "bold red")
        badge, badge_style = KIND_BADGE.get(row.kind, ("?", ""))
        text.append(badge, badge_style)
        src, src_style = SOURCE_MARK.get(row.source, ("?", ""))
        text.append(src, src_style)
        if row.denied:
            text.append("⊘", "bold yellow")
        elif row.error:
            text.append("✗", "bold red")
        elif not row.complete:
            text.append("…", "yellow")
        else:
            text.append(" ")
        text.append(" ")
        title_w = 14 if width >= 56 else 10
        title = row.title if len(row.title) <= title_w else row.title[: title_w - 1] + "…"
        text.append(f"{title:<{title_w}} ", _title_style(row))
        right = ""
        if width >= 56:
            tokens = f"{row.tokens}t" if row.tokens is not None else ""
            dur = _duration(row.duration_ms)
            right = f" {tokens:>7} {dur:>6}"
        room = max(0, width - text.cell_len - len(right))
        gist = row.gist if len(row.gist) <= room else row.gist[: max(0, room - 1)] + "…"
        text.append(f"{gist:<{room}}", "red" if row.error else "")
        text.append(right, "dim")
        return text

    # -- movement ------------------------------------------------------------------------

    def watch_cursor(self, old: int, new: int) -> None:
        for pos in (old, new):
            self.refresh(Region(0, pos - self.scroll_offset.y, self.size.width, 1))
        self.scroll_to_region(Region(0, new, 1, 1), animate=False, force=True)
        self.border_subtitle = f"step {self.row(new).number} · {new + 1}/{len(self.index)}"
        self.post_message(self.StepSelected(self, new))

    def move_to(self, pos: int) -> None:
        """Put the cursor on ``pos`` (clamped to the steps that exist)."""
        if len(self.index) == 0:
            return
        self.cursor = max(0, min(pos, len(self.index) - 1))

    def action_cursor_down(self) -> None:
        self.move_to(self.cursor + 1)

    def action_cursor_up(self) -> None:
        self.move_to(self.cursor - 1)

    def action_page_down(self) -> None:
        self.move_to(self.cursor + max(1, self.size.height - 1))

    def action_page_up(self) -> None:
        self.move_to(self.cursor - max(1, self.size.height - 1))

    def action_first(self) -> None:
        self.move_to(0)

    def action_last(self) -> None:
        self.move_to(len(self.index) - 1)

    def on_click(self, event: events.Click) -> None:
        self.move_to(self.scroll_offset.y + event.y)


def _title_style(row: Row) -> str:
    return {"model": "cyan", "tool": "green", "compaction": "magenta"}.get(row.kind, "")


def _duration(ms: float | None) -> str:
    if ms is None:
        return ""
    if ms < 1000:
        return f"{ms:.0f}ms"
    return f"{ms / 1000:.1f}s"
