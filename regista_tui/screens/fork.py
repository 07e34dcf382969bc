"""A fork running beside its original: the two-run view, fed as the fork writes its trace.

The fork runs in an async worker on the app's loop, so the callbacks it is given
(``on_event`` for each event written, ``on_text`` for each piece of generated text) run
on the UI's own thread: they update :class:`ForkProgress` and schedule a redraw. Bursts
(a replayed prefix writes dozens of events at once) are coalesced into one re-alignment.

A recorded program (``regista-tui TRACE -- CMD``) is forked as ``regista fork TRACE …
-- CMD`` forks it (:func:`regista.cli.sdk_child.fork_child`, in a thread, the program's
output kept off the screen): its trace is shown growing as the server writes it, and its
events counted once the program has ended.
"""

from __future__ import annotations

import asyncio
import shlex
import subprocess
import tempfile
import warnings
from pathlib import Path
from types import SimpleNamespace
from typing import Any, ClassVar

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.widgets import Static

from regista import RegistaError, RunDiff, Trace, UserError
from regista.engine import SessionStart, cost_text, run_outcome
from regista_tui.forkrun import ForkProgress, ForkRequest
from regista_tui.screens.compare import CompareScreen

__all__ = ["ForkScreen"]

#: New steps are re-aligned at most this often; streamed text is redrawn faster.
_STEPS_S = 0.08
_TEXT_S = 0.03
#: A recorded program's fork: how often its trace is looked at while the program runs.
_FOLLOW_S = 0.25


def _load_parent(path: Path) -> Trace:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return Trace.load(path)


def _status_lines(progress: ForkProgress) -> tuple[Text, Text]:
    """The state line (cut at the screen's edge, the most telling first), and the line
    with the trace or the command that reopens it (wrapped: it is meant to be copied)."""
    state, where = progress.status().split("\n")
    where.no_wrap, where.overflow = False, "fold"
    return state, where


def _last_line(output: bytes) -> str:
    lines = output.decode(errors="replace").strip().splitlines()
    return f": {lines[-1][:200]}" if lines else ""


class ForkScreen(CompareScreen):
    """Run a fork and show it growing beside the original, step by step."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("x", "stop", "Stop fork", id="fork.stop", tooltip="Cancel the running fork"),
        Binding("escape", "back", "Back", id="fork.back", tooltip="Back to the browser"),
        Binding(
            "c",
            "copy_reopen",
            "Copy command",
            id="fork.copy",
            tooltip="Copy the command that reopens this comparison",
        ),
    ]

    def __init__(self, request: ForkRequest) -> None:
        super().__init__(request.parent, None, names=("original", "fork"))
        self.request = request
        self.progress = ForkProgress(request)
        self.result: Any = None
        self._steps_due = False
        self._text_due = False
        #: Keep the first divergence selected until the person moves the cursor.
        self._auto_pos: int | None = 0
        #: The status line says how the fork stopped; re-alignments leave it alone.
        self._status_final = False
        #: The program a recorded program's fork runs, while it runs.
        self._proc: subprocess.Popen[bytes] | None = None

    def compose_bottom(self) -> ComposeResult:
        yield Static(id="stream", markup=False)
        state, where = _status_lines(self.progress)
        yield Static(state, id="fork-status", markup=False)
        yield Static(where, id="fork-where", markup=False)

    def on_mount(self) -> None:
        super().on_mount()
        self.set_status(f"Forking: {self.request.describe()}…")
        self._run()

    @property
    def running(self) -> bool:
        return not self.progress.finished

    # -- the fork ------------------------------------------------------------------------

    @work(exclusive=True, group="fork", exit_on_error=False)
    async def _run(self) -> None:
        from regista import fork

        r = self.request
        try:
            if r.live.how == "command":
                self.result = await self._run_program()
                self._done()
                return
            parent = await asyncio.to_thread(_load_parent, r.parent)
            self.result = await fork(
                parent,
                r.at_step,
                r.edit,
                live_after=r.live_after,
                agent=r.live.agent,
                trace_dir=r.trace_dir,
                on_event=self._on_event,
                on_text=self._on_text,
            )
        except asyncio.CancelledError:
            self._stopped()
            raise
        except RegistaError as exc:
            self._failed(str(exc))
        except Exception as exc:  # a bug in user code must not take the app down
            self._failed(f"{type(exc).__name__}: {exc}")
        else:
            self._done()

    async def _run_program(self) -> Any:
        """Run the recorded program against the fork, as ``regista fork … -- CMD`` does;
        then show the fork's trace."""
        from regista.engine import fork_child

        r = self.request
        command = list(r.live.command)
        edits = [(r.at_step, r.edit)] if r.edit is not None else []
        live_after = None if r.edit is not None else r.at_step - 1  # a rewind: live at N
        self.set_status(f"Forking: {self.request.describe()}: running {shlex.join(command)}…")
        before = set(r.trace_dir.glob("*.jsonl")) if r.trace_dir.is_dir() else set()
        follow = self.set_interval(_FOLLOW_S, lambda: self._follow_program(before))
        with tempfile.TemporaryFile() as output:
            try:
                code, _, paths = await asyncio.to_thread(
                    fork_child,
                    r.parent,
                    command,
                    edits,
                    live_after,
                    trace_dir=r.trace_dir,
                    output=output,
                    on_start=self._started,
                )
            finally:
                self._proc = None
                follow.stop()
            output.seek(0)
            said = _last_line(output.read())
        if not paths:
            raise UserError(
                f"{shlex.join(command)} exited {code} before any model call, so no fork "
                f"was written{said}"
            )
        fork, parent = await asyncio.to_thread(
            lambda: (_load_parent(paths[0]), _load_parent(r.parent))
        )
        for event in fork.events:
            self._on_event(event)
        self.progress.path = paths[0]
        self.paths = (self.paths[0], paths[0])
        if code != 0:
            self.progress.error = f"{shlex.join(command)} exited {code}{said}"
        end, parent_end = fork.end, parent.end
        return SimpleNamespace(
            stop_reason=end.stop_reason if end is not None else "unfinished",
            cost_usd=end.cost_usd if end is not None else None,
            parent_stop_reason=parent_end.stop_reason if parent_end is not None else None,
            parent_cost_usd=parent_end.cost_usd if parent_end is not None else None,
        )

    def _follow_program(self, before: set[Path]) -> None:
        """While the program runs: the fork's trace, once the server has begun it, is
        shown beside the original, growing (the comparison follows a growing run; the
        counts come when the program has ended)."""
        trace_dir = self.request.trace_dir
        if self._widgets_gone or self.paths[1] is not None or not trace_dir.is_dir():
            return
        new = set(trace_dir.glob("*.jsonl")) - before
        if new:
            path = min(new, key=lambda p: p.stat().st_mtime)
            self.paths = (self.paths[0], path)
            self.progress.path, self.progress.state = path, "running"
            self._draw_progress()
            self.reload()

    def _started(self, proc: subprocess.Popen[bytes]) -> None:
        """The program has started (in the fork's thread): ``x`` can stop it now."""
        self._proc = proc

    def _on_event(self, event: Any) -> None:
        if not self.progress.on_event(event):
            return
        if isinstance(event, SessionStart):
            self.paths = (self.paths[0], self.progress.path)
        if not self._steps_due:
            self._steps_due = True
            self.set_timer(_STEPS_S, self._steps_tick)

    def _on_text(self, step: int, delta: str) -> None:
        self.progress.on_text(step, delta)
        if not self._text_due:
            self._text_due = True
            self.set_timer(_TEXT_S, self._text_tick)

    def _steps_tick(self) -> None:
        self._steps_due = False
        self._draw_progress()
        self.reload()

    def _text_tick(self) -> None:
        self._text_due = False
        self._draw_stream()

    def _draw_progress(self) -> None:
        if self._widgets_gone:  # a tick after the screen began to close
            return
        state, where = _status_lines(self.progress)
        self.query_one("#fork-status", Static).update(state)
        self.query_one("#fork-where", Static).update(where)
        self._draw_stream()

    def _draw_stream(self) -> None:
        stream = self.query_one("#stream", Static)
        on = self.progress.stream_step is not None and not self.progress.finished
        stream.set_class(on, "-on")
        if on:
            stream.update(self.progress.stream_line())

    def _done(self) -> None:
        result = self.result
        self.progress.parent = (result.parent_stop_reason, result.parent_cost_usd)
        self._steps_tick()
        self.refresh_bindings()
        ok = run_outcome(result.stop_reason, ended=True) == "ok"
        self.notify(
            f"The fork ended {result.stop_reason} ({cost_text(result.cost_usd)}); the original "
            f"ended {result.parent_stop_reason}.",
            title="Fork finished",
            severity="information" if ok else "warning",
            timeout=4,
        )

    def _stopped(self) -> None:
        if self._widgets_gone:  # the app is closing: nothing to show
            return
        if self.progress.state != "cancelled":
            self.progress.state = "cancelled"
        self.progress.streaming = False
        self._steps_tick()
        self.refresh_bindings()
        self.set_status('The fork was cancelled: its trace ends with session.end "cancelled".')
        self._status_final = True

    def _failed(self, message: str) -> None:
        self.progress.failed(message)
        self._steps_tick()
        self.refresh_bindings()
        self.set_status(message, True)
        self._status_final = True
        self.notify(message, title="The fork failed", severity="error", timeout=8)

    # -- following the first divergence --------------------------------------------------

    def _loaded(self, diff: RunDiff, sizes: tuple[int, int]) -> None:
        moved = self._auto_pos is not None and self.pairs.cursor != self._auto_pos
        if moved:
            self._auto_pos = None
        super()._loaded(diff, sizes)
        if self._auto_pos is not None:
            self.first_shown(diff)
            self._auto_pos = self.pairs.cursor

    def first_shown(self, diff: RunDiff) -> None:
        if not self._status_final:
            super().first_shown(diff)
        elif diff.first_divergence is not None:
            self.pairs.move_to(diff.first_divergence.index)

    # -- keys ----------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "stop":
            return self.running
        if action == "copy_reopen":
            return self.progress.reopen_command() is not None
        return True

    def action_copy_reopen(self) -> None:
        """Put the reopen command on the clipboard: a long path wraps over several lines,
        which a terminal's own selection copies with the line breaks in it."""
        command = self.progress.reopen_command()
        if command is None:
            return
        self.app.copy_to_clipboard(command)
        self.set_status(f"Copied: {command}")

    def action_stop(self) -> None:
        if self.running:
            self.set_status("Stopping the fork…")
            if self._proc is not None:  # a recorded program: it stops, then its thread
                self._proc.terminate()
            self.workers.cancel_group(self, "fork")

    def action_back(self) -> None:
        if self.running:
            self.set_status("The fork is still running: x stops it.")
            self.app.bell()
            return
        self.dismiss(None)
