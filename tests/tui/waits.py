"""Waiting for the app's states, never for times.

A key press returns once its message is handled, but what it starts can still be on its
way: the event models load on a timer after the first paint, the rest of the trace is
indexed in a thread, a request diff is computed in another. On a loaded machine those
land later than one ``pilot.pause()``. :func:`settle` waits until they have landed, and
:func:`until` until a named state holds; each fails, saying what it waited for, only
after a bound far beyond any machine's slowness.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from textual.pilot import Pilot
from textual.worker import WorkerState

__all__ = ["busy", "settle", "until"]

#: A bound for a state that should come at once: only a broken app waits this long.
LIMIT_S = 60.0

#: Workers that run for as long as what they follow (a live fork): not waited for.
_LONG_LIVED = {"fork"}


def busy(app: Any) -> str | None:
    """What the app is still doing for what it shows, or None when it has settled."""
    from regista_tui.screens.browser import BrowserScreen
    from regista_tui.widgets.step.step_view import StepView

    for worker in app.workers:
        if worker.group in _LONG_LIVED:
            continue
        if worker.state in (WorkerState.PENDING, WorkerState.RUNNING):
            return f"worker {worker.group or worker.name} is {worker.state.name.lower()}"
    screen = app.screen
    if isinstance(screen, BrowserScreen):
        index = screen.index
        if index.cold:
            return "the event models are not loaded yet"
        if index.scanned < index.size and index.end is not None:
            return "the trace is not indexed yet"
        if screen.repeats_in_flight:
            return "the repeats found are not shown yet"
        for view in screen.query(StepView):
            if view.position is not None and (
                view._drawn != view.position or view._pending is not None
            ):
                return f"step {view.position} is not drawn yet"
    return None


async def settle(pilot: Pilot[Any], limit_s: float = LIMIT_S) -> None:
    """Let the app handle what is queued, then wait until what it started has landed."""
    await pilot.pause()
    deadline = time.monotonic() + limit_s
    while (doing := busy(pilot.app)) is not None:
        if time.monotonic() > deadline:
            raise AssertionError(f"the app never settled: {doing}")
        await pilot.pause(0.01)
    await pilot.pause()


async def until(
    pilot: Pilot[Any], holds: Callable[[], object], what: str, limit_s: float = LIMIT_S
) -> None:
    """Wait until ``holds()`` is true; fail naming ``what`` if it never is."""
    deadline = time.monotonic() + limit_s
    await pilot.pause()
    while not holds():
        if time.monotonic() > deadline:
            raise AssertionError(f"never happened: {what}")
        await pilot.pause(0.01)
