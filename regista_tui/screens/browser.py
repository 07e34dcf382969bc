"""The browser: one trace's header, timeline, scrubber and step view, with rr-style keys."""

from __future__ import annotations

import asyncio
import bisect
import contextvars
import gc
import os
from collections.abc import Callable
from typing import Any, ClassVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.widgets import Footer, Static
from textual.worker import get_current_worker

from regista import RegistaError
from regista.engine import StepEntry, TraceIndex, paused_gc
from regista_tui.lease import Lease
from regista_tui.navigation import Breakpoints, find, label_of
from regista_tui.screens.browser_forks import ForkActions
from regista_tui.screens.browser_keys import BROWSER_KEYS
from regista_tui.screens.browser_links import LinkActions
from regista_tui.screens.browser_where import RepeatsFound, WhereActions
from regista_tui.screens.help import HelpScreen, key_table
from regista_tui.screens.prompt import GoToStep, SearchPrompt
from regista_tui.widgets.header.session_header import SessionHeader, model_label
from regista_tui.widgets.step.step_view import StepView
from regista_tui.widgets.timeline.scrubber import Scrubber
from regista_tui.widgets.timeline.timeline import Timeline

__all__ = ["BrowserScreen"]

_SCAN_SLICE = 16 * 1024 * 1024
_SCAN_DELAY_S = 0.05
#: After the first screen of a big trace is drawn, the event models load this much later.
_WARM_DELAY_S = 0.02
_FOLLOW_S = 0.5
#: A browser that is gone is collected this much later (once Textual has let go of it).
_COLLECT_AFTER_S = 0.5


def _collect_and_freeze() -> None:
    gc.collect()
    gc.freeze()


class IndexGrown(Message):
    """The scan indexed more of the trace; ``done`` when it reached the end of the file.

    A newer one replaces one still waiting: drawing the latest progress is enough.
    """

    def __init__(self, done: bool) -> None:
        super().__init__()
        self.done = done

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, IndexGrown)


class ScanFailed(Message):
    """The scan met a line it cannot read."""

    def __init__(self, error: str) -> None:
        super().__init__()
        self.error = error


class BrowserScreen(ForkActions, LinkActions, WhereActions):
    """Scrub one trace: timeline on the left, the selected step on the right."""

    BINDINGS: ClassVar[list[BindingType]] = BROWSER_KEYS

    def __init__(self, index: TraceIndex, *, notice: str = "", parent: str = "") -> None:
        super().__init__()
        self.index = index
        #: For a subagent's run: which step of which run started it ("" for the first run).
        self.started_by = parent
        self.label = model_label(index)
        self.breakpoints = Breakpoints()
        self.repeats = {}
        self.matches: list[int] = []
        self.query_text = ""
        self.notice = notice
        #: Follow ticks that found the file grown / still (a still file costs no indexing).
        self.polls_grown = 0
        self.polls_still = 0
        self._following = False
        self._seen: Any = None
        self._diverged_at = self._divergence()
        #: The trace is closed once this screen is gone and its threads stopped reading.
        self.lease = Lease(index.close)

    def compose(self) -> ComposeResult:
        yield SessionHeader(self.index, notice=self._notice(), id="header")
        with Horizontal(id="main"):
            with Vertical(id="left"):
                yield Timeline(
                    self.index,
                    model_label=self.label,
                    marker=self._mark,
                    on_select=self._select,
                    id="timeline",
                )
                yield Scrubber(id="scrubber")
            yield StepView(
                self.index,
                model_label=self.label,
                settle_s=self.regista.settle_s,
                lease=self.lease,
                id="step-view",
            )
        yield Static(id="status", markup=False)
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.timeline.border_title = "Steps"
        self._grown()
        self.timeline.focus()
        self.timeline.move_to(0)
        if self.index.cold:
            # A big trace's first screen is drawn from the scan alone (rows without their
            # gists, no step text): the event models load once it is up.
            self.call_after_refresh(self.set_timer, _WARM_DELAY_S, self._warm)
        else:
            self._index_the_rest()

    def _warm(self) -> None:
        """Load the event models, then draw the steps and index the rest of the trace."""
        try:
            self.index.warm()
        except RegistaError as exc:
            self.set_status(str(exc), error=True)
        self._grown()
        self.query_one(StepView).refresh_active()
        self._index_the_rest()

    def _index_the_rest(self) -> None:
        if not self.index.scanned or self.index.scanned < self.index.size:
            # Index the rest once the first screen is up: the scan is CPU-bound Python and
            # its progress updates would otherwise compete with the first paint.
            self.call_after_refresh(self.set_timer, _SCAN_DELAY_S, self._scan)
        elif self.index.end is None:
            self._start_following()

    def on_resize(self) -> None:
        self.set_class(self.size.width < 100, "-narrow")

    # -- indexing ------------------------------------------------------------------------

    def on_unmount(self) -> None:
        """Gone (back to the run list or the parent run): its trace is closed, and what it
        held can be collected. While it was shown its index was frozen (left out of the
        collector's scans): unfrozen, it is collected once nothing holds it any more."""
        self.lease.end()
        if gc.isenabled():
            gc.unfreeze()
            # Not from a timer of the app's: its task would carry this screen in its context.
            loop = asyncio.get_running_loop()
            loop.call_later(_COLLECT_AFTER_S, gc.collect, context=contextvars.Context())

    @work(thread=True, exclusive=True, group="index")
    def _scan(self) -> None:
        worker = get_current_worker()
        if not self.lease.hold():
            return
        try:
            done = False
            # The index's many long-lived objects pile up: the cyclic collector would walk
            # them again and again while they do (a third of the scan, and pauses in the
            # UI's thread too). It resumes before the last message, whose handler collects
            # once and freezes what survives.
            with paused_gc():
                while not done and not worker.is_cancelled:
                    try:
                        done = self.index.scan(_SCAN_SLICE)
                    except RegistaError as exc:
                        self.post_message(ScanFailed(str(exc)))
                        return
                    if not done:
                        self.post_message(IndexGrown(False))
            self.post_message(IndexGrown(done))
        finally:
            self.lease.release()

    @on(IndexGrown)
    def _index_grown(self, message: IndexGrown) -> None:
        self._grown()
        if message.done and self.index.end is None:
            self._start_following()
        if message.done and gc.isenabled():
            # The scan made the index's many long-lived objects: they are collected once
            # now and the survivors (which live as long as this trace is shown) left out of
            # later full collections, which would otherwise walk them in a key press.
            self.call_after_refresh(_collect_and_freeze)

    @on(ScanFailed)
    def _scan_failed(self, message: ScanFailed) -> None:
        self.set_status(message.error, error=True)

    def _start_following(self) -> None:
        """Watch the file for what a running session appends (one timer, however many
        times the scan finishes)."""
        if not self._following:
            self._following = True
            seen = self._stamp()
            if seen is not None:
                self._seen = seen
            self.set_interval(_FOLLOW_S, self._follow)

    def _stamp(self) -> Any:
        """The file's size and time (and, for a followed transcript, those of the files
        its growth converts: a subagent's); ``None`` if it is gone."""
        watch = getattr(self.index, "watch_stamp", None)
        if watch is not None:
            return watch()
        try:
            st = os.stat(self.index.path)
        except OSError:
            return None
        return (st.st_size, st.st_mtime_ns)

    def _follow(self) -> None:
        """Pick up what a still-running session appended.

        A file that has not grown costs one ``stat`` per tick and no indexing or drawing;
        the header is redrawn only when what it says changes (the age of the last write,
        in whole units, or running → unfinished).
        """
        if self.index.end is not None:
            return
        seen = self._stamp()
        if seen is None:
            return
        if seen != self._seen and not self.workers:
            self._seen = seen
            self.polls_grown += 1
            self._scan()
            return
        self.polls_still += 1
        self.query_one(SessionHeader).refresh_header(self._notice())

    def _grown(self) -> None:
        self._diverged_at = self._divergence()
        self.timeline.grow()
        self.query_one(SessionHeader).refresh_header(self._notice())
        self._update_scrubber()
        if self.timeline.cursor < len(self.index):
            self.query_one(Scrubber).position = self.timeline.cursor
        view = self.query_one(StepView)
        if view.position is None and len(self.index):
            self.timeline.move_to(self.timeline.cursor)  # the first step was just written
        view.grown()
        self.find_repeats()

    def _notice(self) -> str:
        notes = [self.notice] if self.notice else []
        if self.index.truncated and self.index.end is None and "half-written" not in self.notice:
            notes.append("the last line is half-written: showing the rest")
        return " · ".join(notes)

    def _divergence(self) -> int | None:
        end = self.index.end
        replay = end.replay if end is not None else None
        at = replay.get("diverged_at") if replay else None
        return self.index.position_of(at) if isinstance(at, int) else None

    def _update_scrubber(self) -> None:
        entries = self.index.steps
        hits = (
            {p for p, e in enumerate(entries) if self.breakpoints.hits(e)}
            if self.breakpoints
            else set()
        )
        self.query_one(Scrubber).update_marks(entries, hits, self.repeat_marks())

    @on(RepeatsFound)
    def _repeats_found(self, message: RepeatsFound) -> None:
        self._repeats_handled += 1
        self.repeats.update(message.found)
        self.timeline.bar_max = message.largest
        self._update_scrubber()
        self.timeline.forget_marks()

    def _mark(self, pos: int) -> str | None:
        if pos == self._diverged_at:
            return "◆"
        if self.breakpoints and self.breakpoints.hits(self.index.steps[pos]):
            return "●"
        if pos in self.repeats:
            return "↻"
        return None

    # -- selection -----------------------------------------------------------------------

    def _select(self, position: int) -> None:
        """The timeline's cursor moved: the rest of the screen follows, in the same frame."""
        status = self.query_one("#status", Static)
        if status.has_class("-error"):  # it was about the step the cursor has left
            self.set_status("")
        self.query_one(Scrubber).position = position
        view = self.query_one(StepView)
        entry = self.index.steps[position]
        view.set_border_labels(title=f"Step {entry.index} · {entry.tool or entry.kind}")
        view.show(position)

    @on(Scrubber.Scrubbed)
    def _scrubbed(self, event: Scrubber.Scrubbed) -> None:
        self.timeline.move_to(event.position)

    def _jump(self, match: Callable[[StepEntry], bool], direction: int, what: str) -> bool:
        """Move to the next step that matches; False (and a status line) when none does."""
        pos = find(self.index.steps, self.timeline.cursor, direction, match)
        if pos is None:
            where = "after" if direction > 0 else "before"
            self.set_status(f"No {what} {where} this step.")
            self.app.bell()
            return False
        self.set_status("")
        self.timeline.move_to(pos)
        return True

    # -- actions -------------------------------------------------------------------------

    def action_next_error(self) -> None:
        self._jump(lambda e: e.error or e.denied, 1, "error or denial")

    def action_prev_error(self) -> None:
        self._jump(lambda e: e.error or e.denied, -1, "error or denial")

    def action_same_kind(self, direction: int) -> None:
        if not len(self.index):
            return
        kind = self.index.steps[self.timeline.cursor].kind
        self._jump(lambda e: e.kind == kind, direction, f"{kind} step")

    def action_same_tool(self, direction: int) -> None:
        if not len(self.index):
            return
        here = self.index.steps[self.timeline.cursor]
        self._jump(lambda e: label_of(e) == label_of(here), direction, f"{label_of(here)} step")

    def action_toggle_breakpoint(self, kind_only: bool = False) -> None:
        if not len(self.index):
            return
        entry = self.index.steps[self.timeline.cursor]
        label = entry.kind if kind_only else label_of(entry)
        on_ = self.breakpoints.toggle(label)
        self.set_status(
            f"Breakpoint on {label} {'set' if on_ else 'cleared'}. "
            f"c / C: continue / reverse-continue."
        )
        self.timeline.forget_marks()
        self._update_scrubber()

    def action_toggle_kind_breakpoint(self) -> None:
        self.action_toggle_breakpoint(kind_only=True)

    def action_clear_breakpoints(self) -> None:
        if not self.breakpoints:
            self.set_status("No breakpoints to delete.")
            return
        names = ", ".join(sorted(self.breakpoints.labels))
        self.breakpoints.labels.clear()
        self.set_status(f"Deleted the breakpoints on {names}.")
        self.timeline.forget_marks()
        self._update_scrubber()

    def action_continue(self, direction: int) -> None:
        if not self.breakpoints:
            self.set_status("No breakpoints: b sets one on the current step's tool or kind.")
            return
        names = ", ".join(sorted(self.breakpoints.labels))
        if self._jump(self.breakpoints.hits, direction, f"breakpoint ({names})"):
            entry = self.index.steps[self.timeline.cursor]
            hit = entry.kind if entry.kind in self.breakpoints.labels else label_of(entry)
            self.set_status(f"Stopped at step {entry.index}: breakpoint on {hit}  (c / C)")

    def action_goto(self) -> None:
        def answer(value: str | None) -> None:
            if not value:
                return
            pos = self.index.position_of(int(value))
            if pos is None:
                steps = f"steps 0–{len(self.index) - 1}" if len(self.index) else "no steps yet"
                self.set_status(f"There is no step {value} ({steps}).", error=True)
                return
            self.set_status("")
            self.timeline.move_to(pos)

        self.app.push_screen(GoToStep(), answer)

    def action_search(self) -> None:
        def answer(value: str | None) -> None:
            if value:
                self.query_text = value
                self.matches = []
                self.set_status(f"Searching for {value!r}…")
                self._search(value, self.timeline.cursor)

        self.app.push_screen(SearchPrompt(self.query_text), answer)

    @work(thread=True, exclusive=True, group="search")
    def _search(self, query: str, start: int) -> None:
        worker = get_current_worker()
        from regista_tui.search import search_steps

        if not self.lease.hold():
            return
        try:
            matches = search_steps(
                self.index,
                query,
                start=start,
                on_first=lambda pos: self.app.call_from_thread(self._first_found, query, pos),
                cancelled=lambda: worker.is_cancelled,
            )
        finally:
            self.lease.release()
        if not worker.is_cancelled:
            self.app.call_from_thread(self._found, query, matches)

    def _first_found(self, query: str, pos: int) -> None:
        """The first match (from the cursor on): go there while the rest are counted."""
        if query != self.query_text:
            return
        self.set_status(
            f"{query!r}: step {self.index.steps[pos].index}, counting the other matches…"
        )
        self.timeline.move_to(pos)

    def _found(self, query: str, matches: list[int]) -> None:
        if query != self.query_text:
            return
        self.matches = matches
        if not matches:
            self.set_status(f"No step contains {query!r}.", error=True)
            return
        here = self.timeline.cursor
        i = bisect.bisect_left(matches, here)
        if i < len(matches) and matches[i] == here:
            self.set_status(
                f"{query!r}: match {i + 1} of {len(matches)}, "
                f"step {self.index.steps[here].index}  (n / N)"
            )
        else:
            self.set_status(f"{query!r}: {len(matches)} matches  (n / N)")

    def action_next_match(self, wrap_from: int | None = None) -> None:
        self._match(1, self.timeline.cursor if wrap_from is None else wrap_from)

    def action_prev_match(self) -> None:
        self._match(-1, self.timeline.cursor)

    def _match(self, direction: int, here: int) -> None:
        if not self.matches:
            self.set_status(
                "No search yet: / searches the steps."
                if not self.query_text
                else f"No step contains {self.query_text!r}."
            )
            return
        if direction > 0:
            i = bisect.bisect_right(self.matches, here)
            wrapped = i >= len(self.matches)
            i = 0 if wrapped else i
        else:
            i = bisect.bisect_left(self.matches, here) - 1
            wrapped = i < 0
            i = len(self.matches) - 1 if wrapped else i
        pos = self.matches[i]
        note = " (wrapped)" if wrapped else ""
        self.set_status(
            f"{self.query_text!r}: match {i + 1} of {len(self.matches)}, "
            f"step {self.index.steps[pos].index}{note}  (n / N)"
        )
        self.timeline.move_to(pos)

    def action_move(self, direction: int) -> None:
        self.timeline.move_to(self.timeline.cursor + direction)

    def action_step_tab(self) -> None:
        self.query_one(StepView).action_next_tab()

    def action_show_more(self) -> None:
        self.query_one(StepView).action_show_more()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "back":
            return bool(self.started_by)  # Escape goes back only from a subagent's run
        return True

    def action_help(self) -> None:
        self.app.push_screen(HelpScreen(key_table(self)))
