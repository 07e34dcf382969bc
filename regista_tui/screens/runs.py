"""The run list: ``regista-tui DIR`` (or no argument: the default traces folder).

The same columns as ``regista runs``; ``s`` cycles the sort column, ``/`` filters as you
type, Enter opens a run in the browser (Escape comes back), space marks a run and ``d``
compares the two marked runs, ``R`` recalls the runs that dealt with some words (the last
column then shows the path each one's tools took), ``r`` starts a replay of a run and
shows what to paste into a terminal (:mod:`regista_tui.screens.replay`), Home / End go to
the first / last run, Escape clears the filter. A run's
forks, rewinds, replays and resumes show under it, indented, as a tree (each level sorted
like the list).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Input, Static

from regista import RegistaError
from regista.engine import (
    OUTCOME_COLOURS,
    ReplayDesk,
    ReplayHandoff,
    RunInfo,
    RunList,
    cost_amount,
    families_of,
)
from regista_tui.screens.compare import CompareScreen

__all__ = ["SORTS", "ListedCompareScreen", "RunsScreen", "tree_order"]

#: Sort columns, in the order ``s`` cycles them: (name, key, newest/largest first).
SORTS: list[tuple[str, Callable[[RunInfo], Any], bool]] = [
    ("when", lambda r: (r.started, r.mtime), True),
    ("cost", lambda r: -1.0 if r.cost_usd is None else r.cost_usd, True),
    ("steps", lambda r: -1 if r.steps is None else r.steps, True),
    ("outcome", lambda r: (r.outcome, r.started), False),
    ("task", lambda r: (r.task.lower(), r.started), False),
    ("id", lambda r: r.session_id, False),
]

#: Every column but the id, the task and the last one, with the cells' padding (two per
#: column) and the border: mark 1, outcome 10, steps 5, cost 7, when 16.
_FIXED_WIDTH = 57
#: The last column's heading: a run's links; on a recall's answer, the path its tools took.
_LINKS_HEADING = "LINKS"
_PATH_HEADING = "TOOL PATH"
#: The task column's bounds; the last column is cut to what the others leave.
_TASK_MIN, _TASK_MAX = 16, 48


def _widths(width: int, id_width: int, last: int, heading: str) -> tuple[int, int]:
    """The task and the last column's widths, so that the table fits ``width``: the task
    gets what the last column leaves (16 to 48 characters), the last column the rest (at
    least its heading: a narrow screen scrolls rather than hide it)."""
    room = width - _FIXED_WIDTH - id_width
    last = max(last, len(heading))
    task = max(_TASK_MIN, min(_TASK_MAX, room - last))
    return task, max(len(heading), min(last, room - task))


def _matches(run: RunInfo, words: list[str]) -> bool:
    hay = f"{run.session_id} {run.task} {run.outcome} {run.link} {run.model}".lower()
    return all(w in hay for w in words)


def tree_order(runs: list[RunInfo], sort: int = 0, query: str = "") -> list[tuple[RunInfo, int]]:
    """The runs that match ``query`` as (run, depth): each run's children (forks, replays,
    resumes whose parent is shown) right under it, every level sorted by ``SORTS[sort]``."""
    words = query.lower().split()
    shown = [r for r in runs if _matches(r, words)]
    roots, children = families_of(shown)
    _, key, reverse = SORTS[sort]
    out: list[tuple[RunInfo, int]] = []
    seen: set[str] = set()

    def walk(level: list[RunInfo], depth: int) -> None:
        for run in sorted(level, key=key, reverse=reverse):
            if run.session_id in seen:  # a loop of links in damaged traces
                continue
            seen.add(run.session_id)
            out.append((run, depth))
            walk(children.get(run.session_id, []), depth + 1)

    walk(roots, 0)
    for run in shown:  # runs only reachable through a loop of parents
        if run.session_id not in seen:
            walk([run], 0)
    return out


def _cut(text: str, width: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: max(0, width - 1)] + "…"


def _short_link(run: RunInfo) -> str:
    """How a run is linked to the parent shown above it: ``fork at step 3``, ``replay``."""
    if run.kind in ("fork", "rewind"):
        return f"{run.kind} at step {run.fork_step}"
    return "resume" if run.kind == "resume" else "replay"


class RunsTable(DataTable[Any]):
    """The runs' table: Home and End go to the first and last run (a row cursor has no
    column to go to), and the id and task columns stay in view."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("home", "first", "First run", show=False),
        Binding("end", "last", "Last run", show=False),
    ]

    def action_first(self) -> None:
        self.move_cursor(row=0)
        self.scroll_x = 0

    def action_last(self) -> None:
        self.move_cursor(row=max(0, self.row_count - 1))
        self.scroll_x = 0


class ListedCompareScreen(CompareScreen):
    """The two-run comparison opened from the run list: Escape goes back to the list."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "app.pop_screen", "Back", id="compare.back"),
    ]


class RunsScreen(Screen[None]):
    """Every run of a traces folder, as a sortable, filterable tree."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "open", "Open", id="runs.open", tooltip="Open the run in the browser"),
        Binding("space", "mark", "Mark", id="runs.mark", tooltip="Mark a run (two: d compares)"),
        Binding("d", "compare", "Compare", id="runs.compare", tooltip="Compare the two marks"),
        Binding("s", "sort", "Sort", id="runs.sort", tooltip="Sort by the next column"),
        Binding("slash", "filter", "Filter", id="runs.filter", tooltip="Filter as you type"),
        Binding("R", "recall", "Recall", id="runs.recall", tooltip="Runs that dealt with words"),
        Binding(
            "r",
            "replay",
            "Replay",
            id="runs.replay",
            tooltip="Start a replay of the run: what to paste into a terminal",
        ),
        Binding("q", "app.quit", "Quit", id="runs.quit"),
        Binding("j", "move(1)", show=False),
        Binding("k", "move(-1)", show=False),
    ]

    def __init__(
        self,
        listing: RunList,
        folder: str,
        *,
        recalled: tuple[str, list[Any]] | None = None,
        back: bool = False,
    ) -> None:
        """``recalled``: show that recall's answer from the start; ``back``: Escape goes
        back to the screen below (the browser's "runs like this one")."""
        super().__init__()
        self.listing = listing
        self.folder = folder
        self.sort = 0
        self.query_text = ""
        #: Marked run ids, oldest mark first (at most two).
        self.marks: list[str] = []
        #: A recall's answer: (words, hits in its order: successful first); ``None``: all runs.
        self.recalled = recalled
        self.back = back
        #: What the table shows, row by row.
        self.rows: list[tuple[RunInfo, int]] = []
        #: The whole of each row's last cell, and how wide that column is.
        self.links: list[str] = []
        self.link_width = 0
        self._heading = _LINKS_HEADING
        #: The servers of the replays ``r`` started (made on first use, stopped on exit).
        self.desk: ReplayDesk | None = None

    def compose(self) -> ComposeResult:
        yield Static(id="runs-header", markup=False)
        yield Input(placeholder="filter: words of the id, task, outcome or links", id="runs-filter")
        yield RunsTable(id="runs-table", cursor_type="row", zebra_stripes=False)
        yield Static(id="runs-whole", markup=False)
        yield Static(id="status", markup=False)
        yield Footer(compact=True)

    @property
    def table(self) -> DataTable[Any]:
        return self.query_one(DataTable)

    def on_mount(self) -> None:
        self.table.border_title = f"Runs of {self.folder}"
        self.refill()
        self.table.focus()
        if self.recalled is not None:
            self._show_recall(*self.recalled)
            return
        skipped = self.listing.skipped
        if skipped:
            path, why = skipped[0]
            more = f" (and {len(skipped) - 1} more)" if len(skipped) > 1 else ""
            self.set_status(f"Skipped, not readable as a run: {path.name}: {why}{more}")
        elif not self.listing.runs:
            self.set_status(
                f"No runs in {self.folder} yet: every agent run writes its trace there; "
                "or name another folder: regista-tui DIR"
            )

    def refill(self) -> None:
        """Rebuild the rows from the listing, the filter and the sort; keep the cursor's run."""
        table = self.table
        current = self.current()
        # The last column's heading says what it holds: links, or a recall's tool paths.
        table.clear(columns=True)
        if self.recalled is None:
            self.rows = tree_order(self.listing.runs, self.sort, self.query_text)
            links = [self._link(run, depth) for run, depth in self.rows]
            heading = _LINKS_HEADING
        else:
            by_id = {r.session_id: r for r in self.listing.runs}
            hits = [h for h in self.recalled[1] if h.session_id in by_id]
            self.rows = [(by_id[h.session_id], 0) for h in hits]
            links = [h.skeleton_text(100) for h in hits]
            heading = _PATH_HEADING
        table.add_columns(" ", "ID", "TASK", "OUTCOME", "STEPS", "COST", "WHEN", heading)
        sids = [
            ("  " * (depth - 1) + "└ " if depth else "") + r.session_id for r, depth in self.rows
        ]
        task_width, link_width = _widths(
            self.app.size.width,
            max(map(len, sids), default=26),
            max(map(len, links), default=0),
            heading,
        )
        self.links = links
        self._heading = heading
        self.link_width = link_width
        for (run, _depth), sid, link in zip(self.rows, sids, links, strict=True):
            mark = Text("●", "bold yellow") if run.session_id in self.marks else Text(" ")
            outcome = Text(run.outcome, OUTCOME_COLOURS[run.status])
            steps = "?" if run.steps is None else str(run.steps)
            when = run.started[:16].replace("T", " ") if run.started else "?"
            table.add_row(
                mark,
                sid,
                _cut(run.task, task_width),
                outcome,
                Text(steps, justify="right"),
                Text(cost_amount(run.cost_usd), justify="right"),
                when,
                Text(_cut(link, link_width), "dim"),
                key=run.session_id,
            )
        if current is not None:
            for i, (run, _) in enumerate(self.rows):
                if run.session_id == current.session_id:
                    table.move_cursor(row=i)
                    break
        self._header()

    @staticmethod
    def _link(run: RunInfo, depth: int) -> str:
        if depth and run.parent is not None:  # its parent is the row above it
            link = _short_link(run)
        elif run.link and run.parent is not None:
            link = f"{run.link} (parent: {run.parent.outcome}, {cost_amount(run.parent.cost_usd)})"
        else:
            link = run.link
        if run.savings is not None:
            link = f"{link} · {run.savings.describe()}" if link else run.savings.describe()
        return link

    def _header(self) -> None:
        name = SORTS[self.sort][0]
        n, total = len(self.rows), len(self.listing.runs)
        shown = f"{n} of {total} runs" if n != total else f"{total} run{'s' if total != 1 else ''}"
        marks = f" · marked: {len(self.marks)}" if self.marks else ""
        if self.recalled is not None:
            shown = f"recall {self.recalled[0]!r}: {n} runs, successful first (Escape: all runs)"
        if self.recalled is not None and self.back:
            shown = f"runs like it, recalled by {self.recalled[0]!r}: {n}, successful first"
            shown += " (Escape: back to the step)"
        order = "" if self.recalled is not None else f" · sorted by {name}"
        self.query_one("#runs-header", Static).update(f" {self.folder} · {shown}{order}{marks}")

    def current(self) -> RunInfo | None:
        """The run under the cursor."""
        row = self.table.cursor_row if self.rows else -1
        return self.rows[row][0] if 0 <= row < len(self.rows) else None

    def set_status(self, text: str, *, error: bool = False) -> None:
        status = self.query_one("#status", Static)
        status.update(text)
        status.set_class(error, "-error")

    # -- keys ----------------------------------------------------------------------------

    def action_move(self, delta: int) -> None:
        if delta > 0:
            self.table.action_cursor_down()
        else:
            self.table.action_cursor_up()

    def action_sort(self) -> None:
        self.sort = (self.sort + 1) % len(SORTS)
        self.refill()

    def action_filter(self) -> None:
        self.query_one("#runs-filter", Input).focus()

    @on(Input.Changed, "#runs-filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        self.query_text = event.value
        self.refill()

    @on(Input.Submitted, "#runs-filter")
    def _filter_done(self) -> None:
        self.table.focus()

    def key_escape(self) -> None:
        """Escape clears the filter first (and goes back to the list); then, opened from
        the browser, back to it; on a recall's answer, back to all runs."""
        box = self.query_one("#runs-filter", Input)
        if self.query_text or box.value:
            box.value = ""
            self.query_text = ""
            self.refill()
            self.table.focus()
        elif self.focused is box:
            self.table.focus()
        elif self.back:
            self.app.pop_screen()
        elif self.recalled is not None:
            self.recalled = None
            self.refill()

    def action_recall(self) -> None:
        from regista_tui.screens.prompt import RecallPrompt

        self.app.push_screen(RecallPrompt(), self._recall)

    def _recall(self, words: str | None) -> None:
        if words:
            self.set_status(f"Recalling {words!r}…")
            self.run_worker(lambda: self._recall_in_thread(words), thread=True, group="recall")

    def _recall_in_thread(self, words: str) -> None:
        from regista.engine import recall

        try:
            hits: Any = recall(words, Path(self.folder), limit=50)
        except (RegistaError, OSError) as exc:
            self.app.call_from_thread(self.set_status, f"Recall failed: {exc}", error=True)
            return
        self.app.call_from_thread(self._show_recall, words, hits)

    def _show_recall(self, words: str, hits: list[Any]) -> None:
        self.recalled = (words, hits)
        self.refill()
        self.table.move_cursor(row=0)
        self.set_status(
            f"{len(self.rows)} runs dealt with {words!r}: TOOL PATH shows what each did"
            if self.rows
            else f"No run dealt with {words!r}"
        )

    def key_down(self) -> None:
        if self.focused is not None and self.focused.id == "runs-filter":
            self.table.focus()

    @on(DataTable.RowHighlighted)
    def _row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        """A link (or tool path) cut to fit the screen is shown whole under the table."""
        row = event.cursor_row
        whole = self.query_one("#runs-whole", Static)
        cut = 0 <= row < len(self.links) and len(self.links[row]) > self.link_width
        whole.update(f"{self._heading}: {self.links[row]}" if cut else "")
        whole.set_class(cut, "-on")

    @on(DataTable.RowSelected)
    def _row_selected(self) -> None:
        self.action_open()

    def action_open(self) -> None:
        run = self.current()
        if run is None:
            return
        from regista_tui.__main__ import open_index
        from regista_tui.screens.browser import BrowserScreen

        try:
            index, notice = open_index(run.path)
        except RegistaError as exc:
            self.set_status(f"Cannot open {run.path.name}: {exc}", error=True)
            return
        back = "Escape: back to the run list"
        self.app.push_screen(
            BrowserScreen(index, notice=f"{notice} · {back}" if notice else back, parent=back)
        )

    def action_replay(self) -> None:
        run = self.current()
        if run is None:
            return
        self.set_status(f"Starting a replay of {run.session_id}…")
        if self.desk is None:
            self.desk = ReplayDesk()
        self._start_replay(self.desk, run.path)

    @work(thread=True, exclusive=True, group="replay")
    def _start_replay(self, desk: ReplayDesk, path: Path) -> None:
        try:
            handoff = desk.start(path)
        except RegistaError as exc:
            self.app.call_from_thread(
                self.set_status, f"Cannot replay {path.name}: {exc}", error=True
            )
            return
        self.app.call_from_thread(self._show_replay, handoff)

    def _show_replay(self, handoff: ReplayHandoff) -> None:
        from regista_tui.screens.replay import ReplayPaste

        self.set_status(f"Replay {handoff.id} of {handoff.run}: served until you quit")
        self.app.push_screen(ReplayPaste(handoff))

    def on_unmount(self) -> None:
        if self.desk is not None:
            self.desk.close()

    def action_mark(self) -> None:
        run = self.current()
        if run is None:
            return
        if run.session_id in self.marks:
            self.marks.remove(run.session_id)
        else:
            self.marks.append(run.session_id)
            del self.marks[:-2]  # a third mark replaces the oldest
        self.refill()
        if len(self.marks) == 2:
            self.set_status("Two runs marked: d compares them")

    def action_compare(self) -> None:
        if len(self.marks) != 2:
            self.set_status("Mark two runs with space, then d compares them")
            return
        by_id = {r.session_id: r for r in self.listing.runs}
        a, b = (by_id[m] for m in self.marks)
        self.app.push_screen(ListedCompareScreen(a.path, b.path))
