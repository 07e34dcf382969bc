"""Helpers for the fork tests: the sample traces, opening the app, waiting for a fork."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual.pilot import Pilot
from textual.widgets import TextArea
from waits import settle, until

from regista.trace.reader import Trace
from regista_tui.__main__ import open_index
from regista_tui.app import RegistaApp
from regista_tui.screens.edit import EditStep
from regista_tui.screens.fork import ForkScreen

SAMPLES = Path(__file__).parents[2] / "sample_traces"
LOOP = SAMPLES / "refund_search_loop.jsonl"
HAPPY = SAMPLES / "refund_happy.jsonl"


def search_hit() -> str:
    """The happy run's step 1 result: the search that finds ORD-1042."""
    result = Trace.load(HAPPY).steps()[1].result
    assert result is not None and isinstance(result.content, str)
    return result.content


def browser(path: Path, trace_dir: Path, agent: Any = None) -> RegistaApp:
    index, notice = open_index(path)
    return RegistaApp(index, notice=notice, settle_s=0, agent=agent, trace_dir=trace_dir)


async def open_editor(app: RegistaApp, pilot: Pilot[Any], *keys: str) -> EditStep:
    """Press ``keys`` then ``e``; wait for the live half to be found and the editor to open."""
    await pilot.press(*keys, "e")
    await app.workers.wait_for_complete()
    await settle(pilot)
    assert isinstance(app.screen, EditStep), app.screen
    # The cursor blinks every 0.5 s: a picture taken later on a busy machine would catch
    # it hidden. Without blinking it stays drawn while the editor has focus.
    editor = app.screen.query_one(TextArea)
    editor.cursor_blink = False
    await until(pilot, lambda: editor.has_focus, "the editor has the focus")
    # A line drawn in the blink's dark phase stays cached under the same key once blinking
    # stops (the key holds the cursor only while it blinks): draw the lines again.
    editor._line_cache.clear()
    editor.refresh()
    await settle(pilot)
    return app.screen


async def fork_with(app: RegistaApp, pilot: Pilot[Any], text: str) -> ForkScreen:
    """Put ``text`` in the open editor and confirm it; answer the fork screen."""
    app.screen.query_one(TextArea).load_text(text)
    await pilot.press("ctrl+s")
    await settle(pilot)
    assert isinstance(app.screen, ForkScreen), app.screen
    return app.screen


async def finished(app: RegistaApp, pilot: Pilot[Any]) -> ForkScreen:
    """Wait until the fork has ended and its last events are aligned on screen."""
    screen = app.screen
    assert isinstance(screen, ForkScreen)
    for _ in range(200):
        await app.workers.wait_for_complete()
        await settle(pilot)
        diff = screen.diff
        if (
            screen.progress.finished
            and not screen._loading
            and (screen.progress.path is None or (diff is not None and diff.b.end is not None))
        ):
            return screen
    raise AssertionError(f"the fork did not finish: {screen.progress}")
