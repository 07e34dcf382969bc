"""Where the run went round in circles, and where its time and money went.

- ``o`` / ``O``: the next / previous step that repeats an earlier one (a repeated tool call,
  a retry after the same error, a repeated answer); the scrubber marks them ``↻``. They
  are found step by step in a worker as the run is read (and as it grows).
- ``g``: a bar column in the timeline for the steps' time, tokens or cost (it cycles),
  each bar a share of the run's largest (read by the same worker).
- ``w``: the run's tokens, cost and time per tool, model, turn or subagent
  (:mod:`regista.breakdown`, the table ``regista show --by`` prints).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual import work
from textual.message import Message
from textual.worker import active_worker, get_current_worker

from regista_tui.screens.browser_base import BrowserBase

if TYPE_CHECKING:  # the engine loads after the first screen (a cold start)
    from regista.engine import Repeat, RepeatFinder

__all__ = ["RepeatsFound", "WhereActions"]


class RepeatsFound(Message):
    """The worker read more steps: the repeats it found (by position), and the largest time,
    tokens and cost of a step so far (the bar column's scale)."""

    def __init__(self, found: dict[int, Repeat], largest: dict[str, float]) -> None:
        super().__init__()
        self.found = found
        self.largest = largest


class WhereActions(BrowserBase):
    """Repeats (loops and waste), the bar column and the breakdown table."""

    #: The steps that repeat earlier ones, by position in the run.
    repeats: dict[int, Repeat]
    _finder: RepeatFinder | None = None
    _finder_at = 0
    #: Messages the worker posted / the screen handled (each side writes its own count).
    _repeats_posted = 0
    _repeats_handled = 0

    @property
    def repeats_in_flight(self) -> int:
        """Repeats posted by the worker and not shown yet (the app has not settled)."""
        return self._repeats_posted - self._repeats_handled

    def find_repeats(self) -> None:
        """Read the steps not read yet for repeats (in a worker; the run may still grow)."""
        if self.index.cold or self._finder_at >= len(self.index):
            return
        self._read_repeats()

    @work(thread=True, exclusive=True, group="repeats")
    def _read_repeats(self) -> None:
        worker = get_current_worker()
        try:
            self._read_more(worker)
        finally:
            # Textual runs a thread worker in a pool thread and leaves it marked as that
            # thread's active worker: unmarked, the finished worker (and this screen) can
            # be collected once the screen is gone.
            active_worker.set(None)  # type: ignore[arg-type]

    def _read_more(self, worker: Any) -> None:
        """Feed the steps not read yet to the finder; post what it found."""
        from regista.engine import RegistaError, RepeatFinder
        from regista_tui.rows import row_of

        if self._finder is None:
            self._finder = RepeatFinder()
        finder = self._finder
        found: dict[int, Repeat] = {}
        largest = dict(self.timeline.bar_max)
        end = len(self.index)
        for pos in range(self._finder_at, end):
            if worker.is_cancelled:
                break
            try:
                step = self.index.step(pos)
            except RegistaError:
                step = None
            if step is not None and step.complete:
                for r in finder.add(step):
                    found.setdefault(pos, r)
                row = row_of(step)
                for measure, value in (
                    ("time", row.duration_ms),
                    ("tokens", row.tokens),
                    ("cost", row.cost),
                ):
                    if value is not None and value > largest.get(measure, 0.0):
                        largest[measure] = float(value)
            elif step is not None:
                break  # still being written: read once it is whole
            self._finder_at = pos + 1  # each step is read once, whatever cancels the worker
        # A message, not call_from_thread: nothing of this worker outlives the screen.
        self._repeats_posted += 1
        self.post_message(RepeatsFound(found, largest))

    def repeat_marks(self) -> set[int]:
        return set(self.repeats)

    def action_next_repeat(self, direction: int = 1) -> None:
        positions = sorted(self.repeats)
        here = self.timeline.cursor
        after = [p for p in positions if (p > here if direction > 0 else p < here)]
        if not after:
            where = "after" if direction > 0 else "before"
            self.set_status(f"No step {where} this one repeats an earlier one.")
            self.app.bell()
            return
        pos = after[0] if direction > 0 else after[-1]
        self.timeline.move_to(pos)
        self.set_status(f"↻ step {self.index.steps[pos].index}: {self.repeats[pos].describe()}")

    def action_cycle_bars(self) -> None:
        measure = self.timeline.cycle_bars()
        if measure is None:
            self.set_status("Bars: off (g shows them)")
            return
        scale = (
            "as a share of the run's largest"
            if self.timeline.bar_max.get(measure)
            else "on a log scale until the run is read"
        )
        self.set_status(f"Bars: each step's {measure}, {scale}")

    def action_where(self) -> None:
        from regista_tui.screens.where import WhereScreen

        self.app.push_screen(WhereScreen(self.index))

    def steps_read(self) -> list[Any]:
        """Every step of the run, decoded (for the breakdown)."""
        return [self.index.step(pos) for pos in range(len(self.index))]
