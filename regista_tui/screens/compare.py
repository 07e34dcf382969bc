"""Two runs side by side, aligned by ``diff_runs``, with the field-level diff of a pair.

The runs are never loaded whole: each is read once by a :class:`RunFile` (per-step
signatures and digests), aligned from those, and a step is decoded when its row is drawn.
Two big runs are read in slices: after the first slice, the steps that both runs begin
with are shown (those rows are final, whatever comes later) while the rest is read, then
the whole alignment replaces them and the first divergence is selected.

Run B may still be growing (a fork streaming in): while either run has no ``session.end``
the screen watches the files, reads what was appended and re-aligns, keeping the cursor.
Steps still in progress (a model call waiting for its answer, tool calls waiting for their
results) are compared once finished, not as if their missing half were a difference.
"""

from __future__ import annotations

import time
import warnings
from pathlib import Path
from typing import ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Static
from textual.worker import get_current_worker

from regista import RegistaError, RunDiff, Trace, TraceError, diff_runs, open_run
from regista.engine import (
    KINDS,
    LABELS,
    OUTCOME_COLOURS,
    Divergence,
    MaskSet,
    RunFile,
    SessionStart,
    aligned_head,
    cost_text,
    diff_files,
    end_outcome,
    mask_set,
    outcome_text,
)
from regista_tui.screens.help import HelpScreen, key_table
from regista_tui.screens.prompt import GoToStep, SearchPrompt
from regista_tui.search import visible_text
from regista_tui.widgets.diff.pair_detail import PairDetail
from regista_tui.widgets.diff.pair_list import KIND_STYLE, PairList

__all__ = ["CompareScreen"]

_FOLLOW_S = 0.5
#: Bytes of each run read before the first rows are shown: a screen's worth of steps and
#: more (about 370 of a realistic run); 4 MB cost 0.4 s more before the first screen.
_FIRST = 1 << 20
#: Bytes of each run read per slice after that.
_SLICE = 16 << 20
#: How often the rows agreed so far are shown again while big runs are read.
_PROGRESS_S = 0.5


def _settled(trace: Trace) -> Trace:
    """A loaded run still being written, without the steps in progress."""
    if trace.end is not None:
        return trace
    pending = {id(ev) for step in trace.steps() if not step.complete for ev in step.events}
    if not pending:
        return trace
    events = [ev for ev in trace.events if id(ev) not in pending]
    return Trace(events, trace.path, truncated=trace.truncated)


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return -1


def _start(trace: Trace | RunFile) -> SessionStart | None:
    """The run's ``session.start``; ``None`` while its first line is not whole yet (a run
    being written, or a file cut inside its first line)."""
    try:
        return trace.start
    except TraceError:
        return None


def _label(trace: Trace | RunFile) -> str | None:
    start = _start(trace)
    return "scripted" if start is not None and start.provider == "scripted" else None


def _run_line(name: str, trace: Trace | RunFile, *, reading: bool = False) -> Text:
    """One run's line of the header; ``reading``: the file is still being read, so its
    ending and step count are not known yet."""
    start, end = _start(trace), trace.end
    line = Text(no_wrap=True, overflow="ellipsis")
    line.append(f" {name} ", "bold reverse")
    line.append(" ")
    if start is None:
        line.append("◌ not started: its first line is not whole yet", "yellow")
        line.append(f"  {trace.path.name if trace.path else ''}", "bold")
        return line
    line.append("scripted" if start.provider == "scripted" else start.model, "cyan")
    if reading:
        line.append(f"  ◌ reading… · {len(trace.steps())} steps so far", "dim")
        line.append(f"  {trace.path.name if trace.path else trace.session_id}", "bold")
        return line
    if end is None:
        line.append("  ◌ running / unfinished", "yellow")
    else:
        outcome = end_outcome(end)
        style = "bold red" if outcome == "failed" else OUTCOME_COLOURS[outcome]
        line.append(f"  ● {outcome_text(end.stop_reason, outcome)}", style)
        line.append(f" · {cost_text(end.cost_usd)}")
    line.append(f" · {len(trace.steps())} steps")
    if start.replay_of:
        line.append(f"  replay of {start.replay_of}", "magenta")
    if start.forked_from:
        line.append(f"  fork at step {start.forked_from.get('at_step', '?')}", "magenta")
    # Last: a long file name is what a narrow screen cuts (the status line has the path).
    line.append(f"  {trace.path.name if trace.path else trace.session_id}", "bold")
    return line


class CompareScreen(Screen[None]):
    """The two-run visual diff: ``regista-tui A B``."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("n", "next_difference", "Next diff", id="compare.next"),
        Binding("N", "prev_difference", "Prev diff", id="compare.prev"),
        Binding("colon", "goto", "Go to", id="compare.goto", tooltip="Go to step N of run A"),
        Binding(
            "slash",
            "search",
            "Search",
            id="compare.search",
            tooltip="Search the steps of both runs (/ Enter again: next match)",
        ),
        Binding("question_mark", "help", "Help", id="compare.help"),
        Binding("q", "app.quit", "Quit", id="compare.quit"),
        # The pair list's own j / k, for when the pair diff has the focus (a click on it).
        Binding("j", "move(1)", show=False),
        Binding("k", "move(-1)", show=False),
    ]

    def __init__(self, a: Path, b: Path | None, *, names: tuple[str, str] = ("A", "B")) -> None:
        super().__init__()
        #: Run B is ``None`` until it exists (a fork that is starting).
        self.paths: tuple[Path, Path | None] = (Path(a), Path(b) if b is not None else None)
        self.names = names
        self.diff: RunDiff | None = None
        self._sizes: tuple[int, int] = (-1, -1)
        self._following = False
        self._loading = False
        self._reload_again = False
        #: The runs as read so far, by path (read on from where they were).
        self._runs: dict[Path, RunFile] = {}
        #: A full alignment arrived (before it, rows the runs begin with may be shown).
        self._aligned = False
        #: Where the cursor was put while the runs were read (None: not yet shown).
        self._head_cursor: int | None = None
        self._goto_failed = False
        #: The pair the status line is about: it is cleared when the cursor leaves it.
        self._status_pair: int | None = None
        self._query = ""

    def compose(self) -> ComposeResult:
        yield Static(Text("Aligning the two runs…", "dim"), id="compare-header")
        yield PairList(id="pairs")
        with VerticalScroll(id="pair-diff"):
            yield PairDetail(id="pair-detail")
        yield from self.compose_bottom()
        yield Static(id="status", markup=False)
        yield Footer(compact=True)

    def compose_bottom(self) -> ComposeResult:
        """Widgets above the status line (none here; a fork shows its progress there)."""
        yield from ()

    @property
    def pairs(self) -> PairList:
        return self.query_one(PairList)

    def on_mount(self) -> None:
        self.pairs.masks = self._masks()
        self.pairs.border_title = f"{self.names[0]} │ {self.names[1]}"
        self.query_one("#pair-diff").border_title = "Differences of the selected pair"
        self.pairs.focus()
        self.reload()

    def on_resize(self) -> None:
        self.set_class(self.size.width < 100, "-narrow")

    def _masks(self) -> MaskSet | None:
        """The masks a pair's changes are read through: the built-in ones and masks.toml
        beside run A (as regista diff reads them); a mask file that cannot be used is said
        on the status line, and every difference counts."""
        try:
            return mask_set(None, beside=self.paths[0].parent)
        except RegistaError as exc:
            self.set_status(f"masks not used: {exc}", True)
            return None

    # -- loading -------------------------------------------------------------------------

    def reload(self) -> None:
        """Read both runs again and re-align them (in a worker; bursts are coalesced)."""
        if self.paths[1] is None:
            return
        if self._loading:
            self._reload_again = True
            return
        self._loading = True
        self._reload_again = False
        self._load(self.paths[0], self.paths[1])

    @work(thread=True, exclusive=True, group="diff")
    def _load(self, a: Path, b: Path) -> None:
        sizes = (_size(a), _size(b))
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                # Another tool's session is converted and read whole, as it always was; a
                # pipe's bytes were read to tell its format.
                oa, ob = open_run(a), open_run(b)
                if not (oa.in_place and ob.in_place):
                    diff = diff_runs(_settled(oa.trace()), _settled(ob.trace()))
                    self.app.call_from_thread(self._loaded, diff, sizes)
                    return
                ra, rb = self._reader(a, sizes[0]), self._reader(b, sizes[1])
                shown = 0.0 if self._aligned else time.monotonic()
                head: RunDiff | None = None
                size = min(_FIRST, _SLICE)
                worker = get_current_worker()
                while True:
                    done = ra.read(size)
                    done = rb.read(size) and done
                    size = _SLICE
                    if done:
                        break
                    if worker.is_cancelled:  # the screen was closed while reading
                        return
                    if shown and time.monotonic() >= shown:
                        head = aligned_head(ra, rb, head)
                        read = (ra.scanned + rb.scanned) / max(1, ra.size + rb.size)
                        self.app.call_from_thread(self._head, head, read)
                        shown = time.monotonic() + _PROGRESS_S
                diff = diff_files(ra, rb, settled=True)
        except RegistaError as exc:
            self.app.call_from_thread(self._failed, str(exc))
            return
        self.app.call_from_thread(self._loaded, diff, sizes)

    def _reader(self, path: Path, size: int) -> RunFile:
        """The run at ``path`` as read so far (read again from the start if it shrank)."""
        run = self._runs.get(path)
        if run is not None and size < run.scanned:
            run.close()
            run = None
        if run is None:
            run = self._runs[path] = RunFile(path)
        return run

    def on_unmount(self) -> None:
        for run in self._runs.values():
            run.close()

    @property
    def _widgets_gone(self) -> bool:
        """Closed while it read, or being closed: its widgets are gone, or going (they are
        removed before the screen itself is detached)."""
        return not self.is_attached or not self.query("#compare-header")

    def _head(self, diff: RunDiff, read: float) -> None:
        """Show the steps both runs begin with while the rest is read."""
        if self._aligned or self._widgets_gone:
            return
        self.diff = diff
        self.pairs.set_diff(diff, (_label(diff.a), _label(diff.b)))
        self._header(f"  aligning… {read:.0%}", reading=True)
        if self._head_cursor is None:
            first = diff.first_divergence
            self.pairs.move_to(first.index if first is not None else 0)
            self._head_cursor = self.pairs.cursor
        n = len(diff.pairs)
        first = diff.first_divergence
        if first is not None:
            self.set_status(f"First divergence: {first.describe(*self.names)}  (aligning the rest)")
        else:
            self.set_status(f"Aligning… the two runs begin with the same {n} steps so far.")

    def _failed(self, message: str) -> None:
        self._loading = False
        if self._widgets_gone:
            return
        self.set_status(message, True)
        if self.diff is None:
            header = Text(f"Cannot align the two runs: {message}", "bold red", no_wrap=True)
            header.overflow = "ellipsis"
            self.query_one("#compare-header", Static).update(header)

    def _loaded(self, diff: RunDiff, sizes: tuple[int, int]) -> None:
        self._loading = False
        if self._widgets_gone:
            return
        first_time = not self._aligned
        self._aligned = True
        moved = self._head_cursor is not None and self.pairs.cursor != self._head_cursor
        self.diff = diff
        self._sizes = sizes
        self.pairs.set_diff(diff, (_label(diff.a), _label(diff.b)))
        self._header()
        if not diff.pairs:
            self.query_one(PairDetail).show(None, *self.names, masks=self.pairs.masks)
        if first_time and not moved:
            self.first_shown(diff)
        else:
            if first_time:  # the cursor was moved while reading: it stays, the line says
                self._say_first(diff)
            self.pairs.move_to(self.pairs.cursor)
        if (diff.a.end is None or diff.b.end is None) and not self._following:
            self._following = True
            self.set_interval(_FOLLOW_S, self._follow)
        if self._reload_again:
            self.reload()

    def first_shown(self, diff: RunDiff) -> None:
        """The first alignment arrived: select the first divergence and say where it is."""
        first = diff.first_divergence
        self.pairs.move_to(first.index if first is not None else 0)
        self._say_first(diff)

    def _say_first(self, diff: RunDiff) -> None:
        first = diff.first_divergence
        if first is None:
            self.set_status("The two runs are the same, step for step.")
        else:
            self.set_status(f"First divergence: {first.describe(*self.names)}  (n / N)")

    def _follow(self) -> None:
        b = self.paths[1]
        if b is None:
            return
        sizes = (_size(self.paths[0]), _size(b))
        if sizes != self._sizes:
            self.reload()

    def _header(self, note: str = "", *, reading: bool = False) -> None:
        diff = self.diff
        if diff is None:
            return
        legend = Text(no_wrap=True, overflow="ellipsis")
        for kind in KINDS:
            n = diff.counts.get(kind, 0)
            if n or kind == "same":
                legend.append(f" {LABELS[kind]} {n} ", KIND_STYLE[kind])
        if note:
            legend.append(note, "dim")
        head = Text("\n").join(
            [
                _run_line(self.names[0], diff.a, reading=reading),
                _run_line(self.names[1], diff.b, reading=reading),
                legend,
            ]
        )
        self.query_one("#compare-header", Static).update(head)

    def set_status(self, text: str, error: bool = False, *, about: int | None = None) -> None:
        """Say ``text`` under the panes; ``about``: the pair it is about (the line is
        cleared when the cursor leaves that pair)."""
        if self._widgets_gone:  # a fork or a reload that ends while the screen closes
            return
        self._goto_failed = False
        self._status_pair = about
        status = self.query_one("#status", Static)
        status.set_class(error, "-error")
        status.update(text)

    # -- selection and keys --------------------------------------------------------------

    @on(PairList.PairSelected)
    def _selected(self, event: PairList.PairSelected) -> None:
        if self.diff is None:
            return  # not aligned yet: there is nothing to say about the pair
        if self._status_pair is not None and event.position != self._status_pair:
            self.set_status("")  # "Difference 3 of 22" is no longer where the cursor is
        self.query_one(PairDetail).show(
            self.pairs.pair(event.position), *self.names, masks=self.pairs.masks
        )

    def _jump(self, target: int | None, what: str) -> None:
        if target is None:
            self.set_status(f"No {what} difference.")
            self.app.bell()
            return
        pair = self.pairs.pair(target)
        if pair is not None and self.diff is not None:
            n = self.diff.differences.index(target) + 1
            where = Divergence(target, pair).describe(*self.names)
            self.set_status(
                f"Difference {n} of {len(self.diff.differences)}: {where}  (n / N)", about=target
            )
        self.pairs.move_to(target)

    def action_next_difference(self) -> None:
        if self.diff is not None:
            self._jump(self.diff.next_difference(self.pairs.cursor), "next")

    def action_prev_difference(self) -> None:
        if self.diff is not None:
            self._jump(self.diff.previous_difference(self.pairs.cursor), "previous")

    def action_move(self, direction: int) -> None:
        self.pairs.move_to(self.pairs.cursor + direction)

    def action_goto(self) -> None:
        def answer(value: str | None) -> None:
            if not value or self.diff is None:
                return
            number = int(value)
            pairs = self.diff.pairs
            a, b = self.names
            target = next((i for i, p in enumerate(pairs) if p.a_step == number), None)
            note = ""
            if target is None:  # a step only run B has
                target = next((i for i, p in enumerate(pairs) if p.b_step == number), None)
                note = f"Step {number} of {b}: {a} has no step {number}."
            if target is None:
                self.set_status(f"There is no step {number} in {a} or {b}.", True)
                self._goto_failed = True
                return
            if note or self._goto_failed:  # the line said the last number was wrong
                self.set_status(note, about=target if note else None)
            self._goto_failed = False
            self.pairs.move_to(target)

        self.app.push_screen(GoToStep(), answer)

    def action_search(self) -> None:
        def answer(value: str | None) -> None:
            if value and self.diff is not None:
                self._search(value, self.diff, self.pairs.cursor)

        self.app.push_screen(SearchPrompt(self._query), answer)

    @work(thread=True, exclusive=True, group="search")
    def _search(self, query: str, diff: RunDiff, cursor: int) -> None:
        """The pairs whose steps (in either run) show ``query``, case-insensitively."""
        needle = query.lower()
        matches = []
        for i, pair in enumerate(diff.pairs):
            for which in ("a", "b"):
                try:
                    step = pair.a if which == "a" else pair.b
                except RegistaError:
                    continue  # its row says it cannot be read
                if step is None:
                    continue
                events = [ev.model_dump() for ev in step.events]
                if needle in visible_text(events).lower():
                    matches.append(i)
                    break
        self.app.call_from_thread(self._found, query, matches, cursor)

    def _found(self, query: str, matches: list[int], cursor: int) -> None:
        """Go to the first match after the cursor (wrapping): ``/`` Enter again goes on."""
        repeat = query == self._query
        self._query = query
        if not matches:
            self.set_status(f"{query!r}: no step of either run shows it.", True)
            return
        after = [m for m in matches if m > cursor or (m == cursor and not repeat)]
        target = after[0] if after else matches[0]
        n = matches.index(target) + 1
        wrapped = " (from the top)" if not after else ""
        self.set_status(
            f"{query!r}: match {n} of {len(matches)}{wrapped}  (/ Enter: next)", about=target
        )
        self.pairs.move_to(target)

    def action_help(self) -> None:
        self.app.push_screen(HelpScreen(key_table(self)))
