"""The timeline: one row per step, rendered lazily (only visible rows are decoded).

A virtual list on Textual's line API (``ScrollView.render_line``), as in toolong: the widget
knows how many steps the index holds, decodes a row's step only when the row scrolls into
view, and caches the rendered row.
"""

from __future__ import annotations

from collections.abc import Callable

from rich.text import Text

from regista.engine import TraceIndex
from regista_tui.rows import Row, row_of
from regista_tui.widgets.border_label import QuickBorderLabels
from regista_tui.widgets.virtual_list import VirtualList

__all__ = ["Timeline"]

KIND_BADGE = {
    "model": ("M", "bold cyan"),
    "tool": ("T", "bold green"),
    "compaction": ("C", "bold magenta"),
}
SOURCE_MARK = {"recorded": ("R", "cyan"), "edit": ("E", "bold magenta"), "live": (" ", "")}


class Timeline(QuickBorderLabels, VirtualList):
    """The steps of one run, one per line, with a cursor."""

    def __init__(
        self,
        index: TraceIndex,
        *,
        model_label: str | None = None,
        marker: Callable[[int], str | None] | None = None,
        on_select: Callable[[int], None] | None = None,
        id: str | None = None,
    ) -> None:
        super().__init__(id=id)
        self.index = index
        self.model_label = model_label
        #: Extra gutter mark for a position (breakpoints, divergence), set by the screen.
        self.marker = marker
        #: Called at once when the cursor moves (not through a message), so that what the
        #: move changes elsewhere is drawn in the same frame as the cursor.
        self.on_select = on_select
        self._rows: dict[int, Row] = {}
        #: What the bar column draws (``g`` cycles it): None, "time", "tokens" or "cost".
        self.bars: str | None = None
        #: The largest value of each measure in the run (once the steps have been read):
        #: a bar is its share of it; before, a log scale that needs no other row.
        self.bar_max: dict[str, float] = {}

    # -- data ----------------------------------------------------------------------------

    def row(self, pos: int) -> Row:
        """The (cached) summary row of the step at ``pos``."""
        row = self._rows.get(pos)
        if row is None and self.index.cold:
            return self._cold_row(pos)
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

    def _cold_row(self, pos: int) -> Row:
        """The row of a step from the scan alone (number, kind, tool, marks), shown while
        the event models load after the first screen of a big trace; never kept."""
        entry = self.index.steps[pos]
        title = entry.tool if entry.kind == "tool" else self.model_label
        return Row(
            entry.index,
            entry.kind,
            title or "?",
            "",
            None,
            None,
            entry.error,
            entry.denied,
            "live",
            entry.complete,
        )

    def row_count(self) -> int:
        return len(self.index)

    def grow(self) -> None:
        """The index has more steps (or a step grew): resize and redraw."""
        for pos in [p for p, r in self._rows.items() if not r.complete]:
            del self._rows[pos]
        super().grow()
        if self.cursor < len(self.index):
            self._subtitle(self.cursor)

    def forget_marks(self) -> None:
        """Gutter marks changed (e.g. a breakpoint): redraw."""
        self._strips.clear()
        self.refresh()

    # -- rendering -----------------------------------------------------------------------

    def row_text(self, pos: int, width: int) -> Text:
        return self._row_text(self.row(pos), pos, width)

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
        bar = ""
        if width >= 56:
            tokens = f"{row.tokens}t" if row.tokens is not None else ""
            dur = _duration(row.duration_ms)
            right = f" {tokens:>7} {dur:>6}"
            if self.bars is not None:
                bar = " " + bar_of(self.bars, row, self.bar_max.get(self.bars))
        room = max(0, width - text.cell_len - len(right) - len(bar))
        gist = row.gist if len(row.gist) <= room else row.gist[: max(0, room - 1)] + "…"
        text.append(f"{gist:<{room}}", "red" if row.error else "")
        text.append(right, "dim")
        if bar:
            text.append(bar, BAR_STYLE[self.bars or ""])
        return text

    def cycle_bars(self) -> str | None:
        """Draw the next measure in the bar column (time, tokens, cost, none)."""
        order = [None, *BAR_SCALES]
        self.bars = order[(order.index(self.bars) + 1) % len(order)]
        self._strips.clear()
        self.refresh()
        return self.bars

    # -- movement ------------------------------------------------------------------------

    def selected(self, pos: int) -> None:
        if pos >= len(self.index):  # no steps yet (a session that is starting)
            return
        self._subtitle(pos)
        if self.on_select is not None:
            self.on_select(pos)

    def _subtitle(self, pos: int) -> None:
        """Where the cursor is, out of how many steps (the count grows with the index)."""
        where = f"step {self.index.steps[pos].index} · {pos + 1}/{len(self.index)}"
        self.set_border_labels(subtitle=where)


#: The bar column's measures: (smallest, largest) on the log scale used until the run's
#: largest values are known (the lazy list decodes no row it does not show).
BAR_SCALES: dict[str, tuple[float, float]] = {
    "time": (10.0, 100_000.0),  # 10 ms .. 100 s
    "tokens": (10.0, 1_000_000.0),
    "cost": (0.0001, 1.0),  # $0.0001 .. $1
}
BAR_STYLE = {"time": "yellow", "tokens": "cyan", "cost": "green", "": ""}
BAR_CELLS = 6
_EIGHTHS = " ▏▎▍▌▋▊▉"


def bar_of(measure: str, row: Row, largest: float | None = None) -> str:
    """A row's bar for ``measure``: :data:`BAR_CELLS` cells in eighths, its share of the
    run's ``largest`` (when known), else on a log scale."""
    import math

    value = {"time": row.duration_ms, "tokens": row.tokens, "cost": row.cost}[measure]
    low, high = BAR_SCALES[measure]
    if value is None or value <= 0:
        return " " * BAR_CELLS
    if largest:
        share = min(1.0, value / largest)
    else:
        share = math.log(max(value, low) / low) / math.log(high / low)
    eighths = max(1, min(BAR_CELLS * 8, round(share * BAR_CELLS * 8)))
    full, part = divmod(eighths, 8)
    return ("█" * full + (_EIGHTHS[part] if part else "")).ljust(BAR_CELLS)


def _title_style(row: Row) -> str:
    return {"model": "cyan", "tool": "green", "compaction": "magenta"}.get(row.kind, "")


def _duration(ms: float | None) -> str:
    if ms is None:
        return ""
    if ms < 1000:
        return f"{ms:.0f}ms"
    return f"{ms / 1000:.1f}s"
