"""A scrolling pane of rich text drawn on Textual's line API.

A ``Static`` in a ``VerticalScroll`` renders its text twice per update (once to measure its
height, once to draw it) and a new height re-lays out the whole screen. This pane renders
its text once, at its own width, keeps the lines, and draws only the visible ones; a new
text changes its scrollable height without a layout of the screen (only a scroll bar that
appears or disappears costs one). The lines of the last few texts are kept by key, so
going back to a step shown a moment ago costs no rendering at all.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable

from rich.console import RenderableType
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.selection import Selection
from textual.strip import Strip
from textual.widget import Widget

__all__ = ["StepBody"]

#: Rendered texts kept per pane (a step's lines at one width: a few hundred KB at most).
_KEPT = 8

#: A text rendered: its lines of segments, of plain text (for selections), and the strips
#: drawn from them so far (made once per line, and ahead of time for a text kept unseen).
_Lines = tuple[list[list[Segment]], list[str], list[Strip | None]]


class StepBody(ScrollView, can_focus=True):
    """Shows one rich renderable, scrolled vertically, wrapped to the pane's width.

    It has no scroll bar: :meth:`where` says which lines are in view, for a border to show
    (a scroll bar is drawn again, every line of it, each time a step is shown).
    """

    class Moved(Message):
        """The lines in view changed: another text, or a scroll."""

        def __init__(self, body: StepBody) -> None:
            super().__init__()
            self.body = body

        @property
        def control(self) -> StepBody:
            return self.body

    # overflow-y: scroll with a bar of no width: the (invisible) bar is always "shown". With
    # auto, a step whose text fits after one that did not would show or hide it, and that
    # is a layout of the whole screen in a step move.
    DEFAULT_CSS = """
    StepBody {
        width: 1fr; height: 1fr; overflow-x: hidden; overflow-y: scroll;
        scrollbar-size-vertical: 0;
    }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._content: RenderableType = Text("")
        self._key: Hashable | None = None
        self._lines: list[list[Segment]] = []
        self._plain: list[str] = []
        self._strips: list[Strip | None] = []
        self._width = -1
        self._kept: OrderedDict[tuple[Hashable, int], _Lines] = OrderedDict()

    @property
    def content(self) -> RenderableType:
        """What the pane shows (as given to :meth:`update`)."""
        return self._content

    def update(self, content: RenderableType, key: Hashable | None = None) -> None:
        """Show ``content``, from its top; ``key`` names it for reuse (``None``: never
        reused, e.g. a step still being written)."""
        self._content = content
        self._key = key
        self._width = -1
        self._relayout()
        self.scroll_to(0, 0, animate=False, immediate=True)
        self.refresh()

    def has(self, key: Hashable) -> bool:
        """Whether the lines of ``key`` at the current width are kept."""
        return (key, self._width_now()) in self._kept

    def keep(self, key: Hashable, content: RenderableType) -> None:
        """Render ``content`` and keep its lines under ``key`` without showing it (what the
        pane is likely to show next, drawn while the screen is idle)."""
        width = self._width_now()
        if width > 0 and (key, width) not in self._kept:
            kept = self._lines_of(content, width)
            for row in range(min(len(kept[0]), self.size.height)):
                self._strip(kept, row, width)
            self._store(key, width, kept)

    def show_kept(self, key: Hashable) -> bool:
        """Show the kept lines of ``key`` again (False when none are kept)."""
        kept = self._kept.get((key, self._width_now()))
        if kept is None:
            return False
        self._kept.move_to_end((key, self._width_now()))
        self._key = key
        self._lines, self._plain, self._strips = kept
        self._width = self._width_now()
        self._set_height(len(self._lines))
        self.scroll_to(0, 0, animate=False, immediate=True)
        self.refresh()
        return True

    def where(self) -> str:
        """Which lines are in view, as "lines 1–30 of 120" ("" when they all are)."""
        total, height = len(self._lines), self.scrollable_content_region.height
        if height <= 0 or total <= height:
            return ""
        top = min(self.scroll_offset.y, total - 1)
        return f"lines {top + 1}–{min(top + height, total)} of {total}"

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        if round(old_value) != round(new_value):
            self.post_message(self.Moved(self))

    # -- rendering -----------------------------------------------------------------------

    def _width_now(self) -> int:
        return self.scrollable_content_region.width

    def _relayout(self) -> None:
        """Render the content at the pane's width into lines (once per content and width)."""
        width = self._width_now()
        if width <= 0 or width == self._width:
            return
        self._width = width
        kept = self._kept.get((self._key, width)) if self._key is not None else None
        if kept is None:
            kept = self._lines_of(self._content, width)
            if self._key is not None:
                self._store(self._key, width, kept)
        self._lines, self._plain, self._strips = kept
        self._set_height(len(self._lines))

    def _lines_of(self, content: RenderableType, width: int) -> _Lines:
        app = self.app
        options = app.console_options.update(highlight=False, width=width, height=None)
        renderable = self.post_render(content, self.visual_style.rich_style)
        segments = app.console.render(renderable, options.update_width(width))
        lines = list(
            Segment.split_and_crop_lines(segments, width, include_new_lines=False, pad=False)
        )
        return lines, ["".join(seg.text for seg in line) for line in lines], [None] * len(lines)

    @staticmethod
    def _strip(kept: _Lines, row: int, width: int) -> Strip:
        """Line ``row`` of a rendered text, as a strip (made once)."""
        strip = kept[2][row]
        if strip is None:
            # Offsets (for selecting text) on the text only; Textual pads the line to the
            # pane's width in the pane's background, as it does a Static's.
            strip = Strip(kept[0][row]).crop(0, width).simplify().apply_offsets(0, row)
            kept[2][row] = strip
        return strip

    def _store(self, key: Hashable, width: int, lines: _Lines) -> None:
        self._kept[(key, width)] = lines
        self._kept.move_to_end((key, width))
        while len(self._kept) > _KEPT:
            self._kept.popitem(last=False)

    def _set_height(self, height: int) -> None:
        """The scrollable size, without a layout of the screen (the pane's own size does not
        change; only its scroll bars are updated)."""
        size = Size(self._width, height)
        if size != self.virtual_size:
            self.set_reactive(Widget.virtual_size, size)
            self._scroll_update(size)
        self.post_message(self.Moved(self))

    def on_resize(self, event: events.Resize) -> None:
        self._relayout()
        self.post_message(self.Moved(self))

    def render_line(self, y: int) -> Strip:
        width = self._width_now()
        if self._width != width:
            self._relayout()
        row = self.scroll_offset.y + y
        if row >= len(self._lines):
            return Strip([], 0)
        selection = self.text_selection
        if selection is not None and (span := selection.get_span(row)) is not None:
            segments = self._selected(row, self._lines[row], span)
            return Strip(segments).crop(0, width).simplify().apply_offsets(0, row)
        return self._strip((self._lines, self._plain, self._strips), row, width)

    def _selected(self, row: int, segments: list[Segment], span: tuple[int, int]) -> list[Segment]:
        start, end = span
        text = Text.assemble(*((seg.text, seg.style or Style.null()) for seg in segments))
        if end == -1:
            end = len(text)
        text.stylize(self.screen.get_component_rich_style("screen--selection"), start, end)
        text.end = ""
        return list(text.render(self.app.console))

    # -- selection -----------------------------------------------------------------------

    def get_selection(self, selection: Selection) -> tuple[str, str] | None:
        return selection.extract("\n".join(self._plain)), "\n"

    def selection_updated(self, selection: Selection | None) -> None:
        self.refresh()
