"""A sweep's N-way view: the parent and its K forks in columns (``regista-tui SWEEP``).

The rows are the parent's steps, with each fork's step aligned to them by step signatures
as the two-run view aligns two runs (:func:`regista.engine.align_many`), and rows for the
steps only forks have. Each fork's edited step is marked ``✎`` and its first divergence
``◆`` (where it first behaved differently from the parent); a step that differs from the
parent's only in masked values (ids, timestamps) is ``≈``, as in the two-run view. The
sweep's table is the header.

While the sweep runs (in another terminal: ``regista sweep …``), the view follows the sweep
file and the forks' traces; ``x`` cancels the sweep (it writes the sweep's ``cancel`` file,
which the sweep watches: finished forks are kept, the others are marked cut short).
Enter opens the parent and the fork under the cursor in the two-run view.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, ClassVar

from rich.table import Table
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static

from regista import engine
from regista_tui.screens.compare import CompareScreen
from regista_tui.screens.help import HelpScreen, key_table
from regista_tui.widgets.diff.pair_list import KIND_STYLE, MASKED_MARK

__all__ = ["SweepCompare", "SweepScreen"]

_FOLLOW_S = 0.5
#: Characters of a step's description in a cell, at most and at least (columns share the
#: screen's width).
_CELL = 34
_MIN_CELL = 10
FIRST_MARK = "◆"
EDIT_MARK = "✎"


class SweepCompare(CompareScreen):
    """The two-run view of the parent and one fork, opened from the sweep (Esc: back)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "app.pop_screen", "Back", id="sweep.back"),
    ]


def _mtime(path: Path | None) -> float:
    if path is None:
        return -1.0
    try:
        st = path.stat()
    except OSError:
        return -1.0
    return st.st_mtime + st.st_size


class SweepView:
    """What the view shows, made in a worker: the table, the column names and the cells."""

    def __init__(self, sweep: Any, width: int = 160) -> None:
        self.sweep = sweep
        #: Characters of a step's description, so that every column fits the screen.
        self.width = max(_MIN_CELL, min(_CELL, (width - 4) // (len(sweep.forks) + 1) - 8))
        self.rows: list[Any] = engine.sweep_rows(sweep)
        self.traces: list[Path | None] = [sweep.fork_trace(f) for f in sweep.forks]
        edited = [set() if f.variant.kind == "model" else {f.variant.at_step} for f in sweep.forks]
        self.masks = engine.sweep_masks(sweep)
        self.nway = engine.align_many(sweep.parent_path(), self.traces, edited, self.masks)
        self.cells: list[list[Text]] = [self._row(i, r) for i, r in enumerate(self.nway.rows)]

    def _row(self, i: int, row: Any) -> list[Text]:
        parent = Text(no_wrap=True, overflow="ellipsis")
        pair = next((c for c in row.cells if c is not None and c.a_step is not None), None)
        if row.parent_step is not None and pair is not None:
            parent.append(f"{row.parent_step:>3} ", "dim")
            parent.append(_short(engine.step_summary(pair.a), self.width))
        out = [parent]
        for n, cell in enumerate(row.cells):
            out.append(self._cell(n, i, cell))
        return out

    def _cell(self, n: int, i: int, pair: Any) -> Text:
        text = Text(no_wrap=True, overflow="ellipsis")
        fork = self.sweep.forks[n]
        first = self.nway.first[n] == i if n < len(self.nway.first) else False
        edited = (
            pair is not None
            and fork.variant.kind != "model"
            and pair.b_step == fork.variant.at_step
            and pair.a_step == fork.variant.at_step
        )
        kind = pair.kind if pair is not None else "same"
        masked = (
            pair is not None
            and not (first or edited)
            and kind != "same"
            and _verdict(pair, self.masks) == engine.MASKED
        )
        if first or edited:
            mark = FIRST_MARK if first else EDIT_MARK
        else:
            mark = MASKED_MARK if masked else engine.KIND_MARKS[kind]
        style = "bold red reverse" if first else "bold yellow" if edited else ""
        text.append(f"{mark} ", style or ("dim" if masked else KIND_STYLE[kind]))
        if pair is None:
            return text
        if pair.b_step is None:
            text.append("    (not in this fork)", KIND_STYLE["delete"])
            return text
        text.append(f"{pair.b_step:>3} ", "dim")
        kind_style = "dim" if kind == "same" or masked else KIND_STYLE[kind]
        text.append(_short(engine.step_summary(pair.b), self.width), kind_style)
        return text


def _verdict(pair: Any, masks: Any) -> str:
    """The pair's verdict through the masks (a pair that cannot be read: diverged)."""
    try:
        return str(engine.pair_verdict(pair, masks))
    except engine.RegistaError:
        return "diverged"


def _short(text: str, width: int = _CELL) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def _table(view: SweepView) -> Table:
    headers, cells = engine.table_cells(view.rows)
    table = Table(box=None, padding=(0, 1), show_edge=False, header_style="bold")
    keep = [i for i in range(len(headers)) if i < 4 or any(c[i] for c in cells)]
    # what a narrow screen must still show whole: the run, how it ended, and where
    least = {0: 6, 2: 9, len(headers) - 1: 16}
    for i in keep:
        table.add_column(
            headers[i],
            no_wrap=True,
            overflow="ellipsis",
            max_width=36 if i == 1 else None,
            min_width=least.get(i),
        )
    for row, c in zip(view.rows, cells, strict=True):
        style = "red" if row.status == "failed" else "yellow" if row.status == "cut_short" else ""
        table.add_row(*(c[i] for i in keep), style=style)
    return table


class SweepScreen(Screen[None]):
    """``regista-tui SWEEP``: the N-way view of a sweep (see the module docs)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "enter",
            "compare",
            "Compare",
            id="sweep.compare",
            tooltip="Open the parent and this column's fork side by side",
        ),
        Binding(
            "n",
            "next_first",
            "Next ◆",
            id="sweep.next",
            tooltip="Go to the next fork's first divergence",
        ),
        Binding(
            "x",
            "cancel",
            "Cancel sweep",
            id="sweep.cancel",
            tooltip="Cancel the running sweep (finished forks are kept)",
        ),
        Binding("question_mark", "help", "Help", id="sweep.help"),
        Binding("q", "app.quit", "Quit", id="sweep.quit"),
    ]

    def __init__(self, path: Path) -> None:
        super().__init__()
        self.path = Path(path)
        self.view: SweepView | None = None
        self._stamp: tuple[float, ...] = ()
        self._loading = False
        self._cancelled = False

    def compose(self) -> ComposeResult:
        yield Static(Text("Reading the sweep…", "dim"), id="sweep-header")
        yield DataTable(id="sweep-grid", cursor_type="cell", zebra_stripes=False)
        yield Static(id="status", markup=False)
        yield Footer(compact=True)

    @property
    def grid(self) -> DataTable[Any]:
        return self.query_one("#sweep-grid", DataTable)

    def on_mount(self) -> None:
        self.grid.focus()
        self.reload()
        # a sweep that is starting (no file yet) or running: follow it (a few stat calls)
        self.set_interval(_FOLLOW_S, self._follow)

    # -- loading -------------------------------------------------------------------------

    def _files(self) -> list[Path | None]:
        view = self.view
        if view is None:
            return [self.path]
        return [view.sweep.path, *view.traces]

    def reload(self) -> None:
        if self._loading:
            return
        self._loading = True
        self._load(self.size.width or 160)

    @work(thread=True, exclusive=True, group="sweep")
    def _load(self, width: int) -> None:
        try:
            sweep = engine.load_sweep(self.path)
            view = SweepView(sweep, width)
        except (engine.RegistaError, OSError) as exc:  # (a file the sweep was replacing)
            self.app.call_from_thread(self._failed, str(exc))
            return
        self.app.call_from_thread(self._loaded, view)

    def _failed(self, message: str) -> None:
        self._loading = False
        if not self.is_attached:
            return
        self.set_status(message, True)
        if self.view is None:
            self.query_one("#sweep-header", Static).update(
                Text(f"Cannot read the sweep: {message}", "bold red")
            )

    def _loaded(self, view: SweepView) -> None:
        self._loading = False
        if not self.is_attached:
            return
        first_time = self.view is None
        self.view = view
        self._stamp = tuple(_mtime(p) for p in self._files())
        self.query_one("#sweep-header", Static).update(_table(view))
        grid = self.grid
        where = grid.cursor_coordinate
        grid.clear(columns=True)
        # fixed widths: every column fits the screen whatever its steps say
        grid.add_column("parent", key="parent", width=view.width + 4)
        for fork in view.sweep.forks:
            label = _short(f"{fork.n} {fork.variant.label}", view.width + 6)
            grid.add_column(label, key=f"fork-{fork.n}", width=view.width + 6)
        for i, cells in enumerate(view.cells):
            grid.add_row(*cells, key=str(i))
        if first_time:
            first = next((r for r in view.nway.first if r is not None), None)
            col = next((n for n, r in enumerate(view.nway.first) if r is not None), 0)
            if first is not None:
                grid.move_cursor(row=first, column=col + 1)
        elif view.cells:
            grid.move_cursor(
                row=min(where.row, len(view.cells) - 1),
                column=min(where.column, len(view.sweep.forks)),
            )
        self._say(view)

    def _say(self, view: SweepView) -> None:
        sweep = view.sweep
        done = sum(1 for f in sweep.forks if f.shown_status in ("done", "failed"))
        cut = [f"fork {f.n}" for f in sweep.forks if f.cut_short]
        if sweep.running:
            what = "cancelling…" if self._cancelled else "x cancels"
            self.set_status(f"Sweep running: {done} of {len(sweep.forks)} forks ended  ({what})")
        elif cut:
            how = "cancelled" if sweep.cancelled else "stopped before its end"
            self.set_status(f"The sweep was {how}: {', '.join(cut)} cut short.")
        else:
            firsts = sum(1 for r in view.nway.first if r is not None)
            self.set_status(
                f"{len(sweep.forks)} forks of step {sweep.at_step}; {firsts} diverged from "
                f"the parent ({FIRST_MARK} first divergence, {EDIT_MARK} the edit). "
                "Enter: compare with the parent."
            )

    def _follow(self) -> None:
        view = self.view
        if view is not None and view.sweep.ended is not None:
            return  # an ended sweep changes no more
        stamp = tuple(_mtime(p) for p in self._files())
        if stamp != self._stamp or view is None:
            self.reload()

    def set_status(self, text: str, error: bool = False) -> None:
        if not self.is_attached or not self.query("#status"):
            return
        status = self.query_one("#status", Static)
        status.set_class(error, "-error")
        status.update(text)

    # -- keys ----------------------------------------------------------------------------

    @on(DataTable.CellSelected)
    def _chosen(self, event: DataTable.CellSelected) -> None:
        event.stop()
        self.action_compare()

    def action_compare(self) -> None:
        view = self.view
        if view is None:
            return
        column = self.grid.cursor_coordinate.column
        if column == 0:
            self.set_status("Move to a fork's column to compare it with the parent.")
            return
        n = column - 1
        trace = view.traces[n] if n < len(view.traces) else None
        if trace is None:
            self.set_status(f"Fork {n + 1} has no trace yet.", True)
            return
        names = ("parent", f"fork {view.sweep.forks[n].n}")
        self.app.push_screen(SweepCompare(view.sweep.parent_path(), trace, names=names))

    def action_next_first(self) -> None:
        view = self.view
        if view is None:
            return
        here = self.grid.cursor_coordinate
        marks = sorted((r, n + 1) for n, r in enumerate(view.nway.first) if r is not None)
        after = [m for m in marks if m > (here.row, here.column)]
        target = after[0] if after else (marks[0] if marks else None)
        if target is None:
            self.set_status("No fork diverged from the parent.")
            self.app.bell()
            return
        self.grid.move_cursor(row=target[0], column=target[1])

    def action_cancel(self) -> None:
        view = self.view
        if view is None or not view.sweep.running:
            self.set_status("The sweep is not running: nothing to cancel.")
            self.app.bell()
            return
        try:
            (view.sweep.folder / engine.CANCEL_FILE).write_text(f"{os.getpid()}\n")
        except OSError as exc:
            self.set_status(f"Cannot cancel the sweep: {exc.strerror}", True)
            return
        self._cancelled = True
        self.set_status("Cancelling the sweep: the running forks are being stopped…")

    def action_help(self) -> None:
        self.app.push_screen(HelpScreen(key_table(self)))
