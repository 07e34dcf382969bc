"""The step view: the selected step as people read it, its raw JSON, and its request diff.

Only the active tab is rendered; the request diff (which may rebuild part of the
conversation) is computed in a thread worker.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from rich.console import RenderableType
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.timer import Timer
from textual.widgets import Tab, Tabs

from regista import RegistaError
from regista.engine import Change, TraceIndex
from regista_tui.lease import Lease
from regista_tui.widgets.border_label import QuickBorderLabels
from regista_tui.widgets.step.body import StepBody
from regista_tui.widgets.step.render import render_changes, render_raw, render_step

if TYPE_CHECKING:
    from regista.engine import Step

__all__ = ["StepView"]

_BASE_LIMIT = 2000
#: Characters of each value the request diff shows before "show more".
_DIFF_WIDTH = 120
#: How long after a step is drawn its neighbours are drawn (unseen), for the next move.
_PREFETCH_S = 0.03
#: The tabs, each over a pane of its own (``step-body``, ``raw-body``, ``diff-body``).
_TABS = ("tab-step", "tab-raw", "tab-diff")


class StepView(QuickBorderLabels, Vertical):
    """Tabs for the selected step: Step, Raw JSON, Request diff."""

    def __init__(
        self,
        index: TraceIndex,
        *,
        model_label: str | None = None,
        settle_s: float = 0.05,
        lease: Lease | None = None,
        id: str | None = None,
    ) -> None:
        super().__init__(id=id)
        self.index = index
        #: Held while a thread reads the trace (the screen closes it once it is gone).
        self.lease = lease or Lease(lambda: None)
        self.model_label = model_label
        self.position: int | None = None
        self.limit = _BASE_LIMIT
        #: Moves closer together than this are a burst (0 draws every step at once).
        self.settle_s = settle_s
        self._last_show = 0.0
        self._pending: Timer | None = None
        #: The step drawn was still being written (redrawn when the trace grows).
        self._drawn_growing = False
        #: The position drawn last (in the active tab).
        self._drawn: int | None = None
        self._composed = False
        self._prefetch: Timer | None = None

    def compose(self) -> ComposeResult:
        # Tabs over three panes, not a TabbedContent: every widget that overlaps a line is
        # drawn when the line changes, and a TabbedContent puts three more under the pane.
        yield Tabs(
            Tab("Step", id="tab-step"),
            Tab("Raw JSON", id="tab-raw"),
            Tab("Request diff", id="tab-diff"),
        )
        for name in _TABS:
            body = StepBody(id=f"{name.removeprefix('tab-')}-body")
            body.display = name == "tab-step"
            yield body

    # -- showing -------------------------------------------------------------------------

    def show(self, position: int) -> None:
        """Show the step at ``position`` in the active tab.

        While the cursor is moving fast (a held key), the step is drawn once the cursor
        settles for :attr:`settle_s`, so that scrubbing only repaints the timeline.
        """
        if position == self._drawn and self._pending is None:
            return  # already on screen (the cursor was set to where it was)
        if position != self.position:
            self.limit = _BASE_LIMIT
        self.position = position
        if self._pending is not None:
            self._pending.stop()
            self._pending = None
        now = time.monotonic()
        burst = now - self._last_show < self.settle_s
        self._last_show = now
        if burst:
            self._pending = self.set_timer(self.settle_s, self.refresh_active)
        else:
            self.refresh_active()

    def grown(self) -> None:
        """The trace grew: redraw the step shown if it was still being written."""
        if self._drawn_growing and self._pending is None:
            self.refresh_active()

    @property
    def active_tab(self) -> str:
        return self.query_one(Tabs).active or "tab-step"

    def _step(self) -> Step | RenderableType:
        assert self.position is not None
        try:
            return self.index.step(self.position)
        except RegistaError as exc:
            return Text(str(exc), "bold red")

    def refresh_active(self) -> None:
        self._pending = None
        if not self._composed:
            if not self.query(StepBody):  # the screen is still mounting: in a moment
                self.call_after_refresh(self.refresh_active)
                return
            self._composed = True
        if self.index.cold:
            return  # the first screen of a big trace: the step is drawn once the models load
        if self.position is None and len(self.index):
            return  # the timeline selects a step in a moment
        if self.position is None or not len(self.index):
            self._body("#step-body").update(Text("No steps in this trace yet.", "dim"))
            return
        complete = self.index.steps[self.position].complete
        self._drawn_growing = not complete
        self._drawn = self.position
        tab = self.active_tab
        body = self._body(f"#{tab.removeprefix('tab-')}-body")
        # A finished step looks the same every time: its lines are kept for a while.
        key = (self.position, self.limit) if complete and tab != "tab-diff" else None
        if key is not None:
            self._prefetch_soon()
            if body.show_kept(key):
                return
        from regista.engine import Step

        step = self._step()
        if not isinstance(step, Step):
            body.update(step)
            return
        if tab == "tab-step":
            body.update(render_step(step, limit=self.limit, model_label=self.model_label), key)
        elif tab == "tab-raw":
            body.update(render_raw(step, limit=self.limit * 10), key)
        else:
            target = body
            if step.kind != "model":
                target.update(
                    Text(
                        f"Step {step.index} is a {step.kind} step: the request diff "
                        "compares a model request with the previous one.",
                        "dim",
                    )
                )
            else:
                target.update(Text("Computing the diff…", "dim"))
                self._compute_diff(self.position)

    def _body(self, selector: str) -> StepBody:
        return self.query_one(selector, StepBody)

    def _prefetch_soon(self) -> None:
        """Once the step is on screen and the cursor rests, draw the steps either side of it
        (unseen), so that the next move shows its step without rendering it."""
        if self._prefetch is not None:
            self._prefetch.stop()
        self._prefetch = self.set_timer(_PREFETCH_S, self._prefetch_neighbours)

    def _prefetch_neighbours(self) -> None:
        self._prefetch = None
        here, tab = self.position, self.active_tab
        if here is None or tab == "tab-diff" or self.index.cold:
            return
        body = self._body(f"#{tab.removeprefix('tab-')}-body")
        for pos in (here + 1, here - 1):
            key = (pos, _BASE_LIMIT)  # a move shows a step from its first 2,000 characters
            if not 0 <= pos < len(self.index) or not self.index.steps[pos].complete:
                continue
            if body.has(key):
                continue
            try:
                step = self.index.step(pos)
            except RegistaError:
                continue  # said when the cursor gets there
            if tab == "tab-step":
                body.keep(key, render_step(step, limit=_BASE_LIMIT, model_label=self.model_label))
            else:
                body.keep(key, render_raw(step, limit=_BASE_LIMIT * 10))

    @work(thread=True, exclusive=True, group="request-diff")
    def _compute_diff(self, position: int) -> None:
        from regista_tui.requestdiff import request_diff

        if not self.lease.hold():
            return
        try:
            changes: list[Change] | str | None = request_diff(self.index, position)
        except RegistaError as exc:
            changes = str(exc)
        finally:
            self.lease.release()
        self.app.call_from_thread(self._show_diff, position, changes)

    def _show_diff(self, position: int, changes: list[Change] | str | None) -> None:
        if position != self.position:
            return
        target = self._body("#diff-body")
        if changes is None:
            target.update(Text("The first model request: nothing before it to compare.", "dim"))
        elif isinstance(changes, str):
            target.update(Text(changes, "bold red"))
        else:
            prev = self.index.previous_request(position)
            number = self.index.steps[prev].index if prev is not None else "?"
            head = Text(
                f"Request of step {self.index.steps[position].index} vs step {number}: "
                f"{len(changes)} changes\n",
                "bold",
            )
            from rich.console import Group

            width = _DIFF_WIDTH * self.limit // _BASE_LIMIT
            target.update(Group(head, render_changes(changes, width=width)))

    @on(StepBody.Moved)
    def _body_moved(self, event: StepBody.Moved) -> None:
        event.stop()
        if event.body.display:
            self.set_border_labels(subtitle=event.body.where())

    @on(Tabs.TabActivated)
    def _tab_changed(self) -> None:
        active = self.active_tab
        for name in _TABS:
            self._body(f"#{name.removeprefix('tab-')}-body").display = name == active
        self.refresh_active()

    def action_show_more(self) -> None:
        self.limit *= 10
        self.refresh_active()

    def action_next_tab(self) -> None:
        self.query_one(Tabs).active = _TABS[(_TABS.index(self.active_tab) + 1) % len(_TABS)]
