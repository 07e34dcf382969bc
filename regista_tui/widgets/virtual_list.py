"""A keyboard- and mouse-driven list that renders only its visible rows.

Built on Textual's line API (``ScrollView.render_line``), as in toolong: a subclass says
how many rows there are and how to draw one; rows are drawn when they scroll into view and
cached as strips. The timeline and the two-run pair list are both this list.
"""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual import events
from textual.binding import Binding, BindingType
from textual.geometry import Region, Size
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.widget import Widget

__all__ = ["VirtualList"]


class VirtualList(ScrollView, can_focus=True, inherit_bindings=False):
    """Rows drawn on demand, a cursor, and the usual movement keys.

    ScrollView's own keys are not inherited: the list never scrolls sideways, so left,
    right and ctrl+PgUp / PgDn would do nothing (and the help would list them).
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("down,j", "cursor_down", "Next", id="list.down", show=False),
        Binding("up,k", "cursor_up", "Previous", id="list.up", show=False),
        Binding("pagedown", "page_down", "Page down", id="list.page_down", show=False),
        Binding("pageup", "page_up", "Page up", id="list.page_up", show=False),
        Binding("home", "first", "First", id="list.first", show=False),
        Binding("end", "last", "Last", id="list.last", show=False),
    ]

    COMPONENT_CLASSES: ClassVar[set[str]] = {"list--cursor"}

    DEFAULT_CSS = """
    VirtualList { background: $surface; overflow-x: hidden; }
    VirtualList > .list--cursor { background: $accent 40%; text-style: bold; }
    VirtualList:focus > .list--cursor { background: $accent; color: $text; }
    """

    # The cursor repaints its two rows itself (watch_cursor), not the whole list.
    cursor: reactive[int] = reactive(0, always_update=True, repaint=False)

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._strips: dict[tuple[int, int, bool], Strip] = {}

    # -- for subclasses ------------------------------------------------------------------

    def row_count(self) -> int:
        """How many rows the list has now."""
        raise NotImplementedError

    def row_text(self, pos: int, width: int) -> Text:
        """Row ``pos`` drawn for ``width`` cells."""
        raise NotImplementedError

    def selected(self, pos: int) -> None:
        """The cursor moved to ``pos`` (post a message from here)."""

    # -- rendering -----------------------------------------------------------------------

    def grow(self) -> None:
        """The rows changed (more of them, or their content): resize and redraw.

        More rows scroll further; no widget changes size, so the screen is not laid out
        again (only a scroll bar that appears costs a layout).
        """
        self._strips.clear()
        size = Size(self.size.width, self.row_count())
        if size != self.virtual_size:
            self.set_reactive(Widget.virtual_size, size)
            self._scroll_update(size)
        self.refresh()

    def on_resize(self, event: events.Resize) -> None:
        self._strips.clear()
        self.virtual_size = Size(event.size.width, self.row_count())

    def render_line(self, y: int) -> Strip:
        pos = self.scroll_offset.y + y
        width = self.scrollable_content_region.width
        if pos >= self.row_count() or width <= 0:
            return Strip.blank(width, self.rich_style)
        selected = pos == self.cursor
        key = (pos, width, selected)
        strip = self._strips.get(key)
        if strip is None:
            text = self.row_text(pos, width)
            style = self.rich_style
            if selected:
                style = style + self.get_component_rich_style("list--cursor")
            text.stylize(style, 0)
            text.end = ""
            strip = Strip(list(text.render(self.app.console))).crop_extend(0, width, style)
            if len(self._strips) > 2000:
                self._strips.clear()
            self._strips[key] = strip
        return strip

    # -- movement ------------------------------------------------------------------------

    def watch_cursor(self, old: int, new: int) -> None:
        for pos in (old, new):
            self.refresh(Region(0, pos - self.scroll_offset.y, self.size.width, 1))
        top = self.scroll_offset.y
        if not top <= new < top + self.scrollable_content_region.height:  # else: no scroll
            self.scroll_to_region(Region(0, new, 1, 1), animate=False, force=True)
        self.selected(new)

    def move_to(self, pos: int) -> None:
        """Put the cursor on ``pos`` (clamped to the rows that exist)."""
        count = self.row_count()
        if count:
            self.cursor = max(0, min(pos, count - 1))

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
        self.move_to(self.row_count() - 1)

    def on_click(self, event: events.Click) -> None:
        self.move_to(self.scroll_offset.y + event.y)
