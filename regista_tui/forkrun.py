"""A fork the TUI runs: what was asked for, and what its trace events said so far.

:class:`ForkProgress` is fed every event the fork writes (``fork(on_event=...)``) and the
text the model streams (``on_text``); the fork screen draws its status lines from it.
"""

from __future__ import annotations

import contextlib
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from rich.text import Text

from regista import ModelAnswerEdit, ToolResultEdit
from regista.engine import (
    ContextCompaction,
    ErrorEvent,
    LlmResponseEvent,
    SessionEnd,
    SessionStart,
    Tokens,
    ToolResult,
    add_costs,
    cost_text,
    run_outcome,
    tokens_of,
    trace_path,
)
from regista_tui.live import LiveHalf

__all__ = ["ForkProgress", "ForkRequest", "State"]

State = Literal["starting", "running", "ended", "cancelled", "failed"]


@dataclass(frozen=True)
class ForkRequest:
    """A fork to run.

    Attributes:
        parent: The trace forked from (only read).
        at_step: The edited step, or the first live step of a rewind.
        edit: The edit (``None``: rewind).
        live: The agent for the live half.
        trace_dir: Where the fork's trace goes.
    """

    parent: Path
    at_step: int
    edit: ToolResultEdit | ModelAnswerEdit | None
    live: LiveHalf
    trace_dir: Path

    @property
    def live_after(self) -> int | None:
        """The fork goes live right after the edited step (a rewind: at ``at_step``)."""
        return self.at_step if self.edit is not None else None

    def describe(self) -> str:
        what = f"edit of step {self.at_step}" if self.edit is not None else "rewind"
        return f"{what}: live from step {self.at_step + (self.edit is not None)}"


@dataclass
class ForkProgress:
    """What the fork has done so far, from its own trace events."""

    request: ForkRequest
    state: State = "starting"
    session_id: str | None = None
    path: Path | None = None
    sources: dict[int, str] = field(default_factory=dict)
    #: Every token of the fork's calls (:mod:`regista.tokens`), the cache included.
    tokens: Tokens = field(default_factory=Tokens)
    cost_usd: float | None = 0.0
    stop_reason: str | None = None
    output: str | None = None
    error: str | None = None
    #: The step whose text is streaming, and the text so far.
    stream_step: int | None = None
    stream_text: str = ""
    streaming: bool = False
    #: The original's outcome and cost, once the fork has ended.
    parent: tuple[str | None, float | None] | None = None

    # -- feeding -------------------------------------------------------------------------

    def on_event(self, event: Any) -> bool:
        """Take one event of the fork's trace; ``True`` when the run's steps changed."""
        if isinstance(event, SessionStart):
            self.state = "running"
            self.session_id = event.session_id
            self.path = trace_path(self.request.trace_dir, event.session_id)
            return True
        if isinstance(event, LlmResponseEvent):
            self.sources[event.step] = event.source
            usage = event.response.get("usage") or {}
            self._add(usage, event.cost_usd)
            if event.step == self.stream_step:
                self.streaming = False
            return True
        if isinstance(event, ToolResult):
            self.sources[event.step] = event.source
            return True
        if isinstance(event, ContextCompaction):
            self.sources[event.step] = event.source
            self._add(event.usage, event.cost_usd)
            return True
        if isinstance(event, ErrorEvent):
            where = f"step {event.step}" if event.step is not None else event.where
            self.error = f"{where}: {event.message}"
            return True
        if isinstance(event, SessionEnd):
            self.stop_reason = event.stop_reason
            self.output = event.output
            self.cost_usd = event.cost_usd
            self.streaming = False
            self.state = "cancelled" if event.stop_reason == "cancelled" else "ended"
            if event.error and event.stop_reason != "cancelled":
                self.error = event.error
            return True
        return False

    def on_text(self, step: int, delta: str) -> None:
        """Take a piece of text the model generated for ``step``."""
        if step != self.stream_step:
            self.stream_step, self.stream_text = step, ""
        self.streaming = True
        self.stream_text += delta

    def failed(self, message: str) -> None:
        """The fork stopped with an error (it may not have written a trace)."""
        self.state = "failed"
        self.streaming = False
        self.error = message

    def _add(self, usage: dict[str, Any], cost: float | None) -> None:
        with contextlib.suppress(ValueError):  # an odd usage: not counted, the view goes on
            self.tokens = self.tokens + tokens_of(usage)
        self.cost_usd = add_costs(self.cost_usd, cost)

    # -- showing -------------------------------------------------------------------------

    def count(self, source: str) -> int:
        return sum(1 for s in self.sources.values() if s == source)

    @property
    def finished(self) -> bool:
        return self.state in ("ended", "cancelled", "failed")

    def reopen_command(self) -> str | None:
        """The command that shows this comparison again."""
        if self.path is None:
            return None
        return f"regista-tui {shlex.quote(str(self.request.parent))} {shlex.quote(str(self.path))}"

    def status(self) -> Text:
        """Two lines: state and counts; then the trace path (or how to reopen it)."""
        line = Text(no_wrap=True, overflow="ellipsis")
        if self.state == "starting":
            line.append(" ◌ fork starting… ", "bold yellow")
        elif self.state == "running":
            line.append(" ◌ fork running ", "bold yellow")
        elif self.state == "cancelled":
            line.append(" ■ fork cancelled ", "bold red")
        elif self.state == "failed":
            line.append(" ✗ fork failed ", "bold red")
        else:
            ok = run_outcome(self.stop_reason, ended=True) == "ok"
            line.append(f" ● fork ended: {self.stop_reason} ", "bold green" if ok else "bold red")
        # Most telling first: a narrow screen cuts the end of the line.
        line.append(f"│ {self.count('recorded')} replayed", "")
        if self.request.edit is not None:
            line.append(f" · {self.count('edit')} edited", "magenta")
        line.append(f" · {self.count('live')} live", "cyan")
        line.append(f" │ {cost_text(self.cost_usd)}")
        line.append(f" · {self.tokens.total:,} tokens")
        live = self.request.live
        line.append(" │ live: ", "dim")
        line.append("scripted" if live.scripted else f"{live.model} ({live.provider})", "bold cyan")
        if self.parent is not None:
            reason, cost = self.parent
            line.append(f" │ original: {reason} · {cost_text(cost)}", "dim")
        second = Text(no_wrap=True, overflow="ellipsis")
        failed = self.state == "failed" or self.stop_reason == "error"
        if self.error and failed:
            second.append(f" {self.error}", "bold red")
        elif self.error and not self.finished:  # e.g. a tool raised: the run goes on
            second.append(f" {self.error}", "yellow")
        elif self.finished and (command := self.reopen_command()):
            second.append(" reopen: ", "dim").append(command)
        elif self.path is not None:
            second.append(" trace: ", "dim").append(str(self.path))
        else:
            second.append(f" {self.request.describe()} · {live.describe()}", "dim")
        both = Text("\n").join([line, second])
        both.no_wrap, both.overflow = True, "ellipsis"
        return both

    def stream_line(self) -> Text:
        """The text the model is generating (its last lines), for the streaming panel."""
        text = Text(no_wrap=False)
        if self.stream_step is None:
            return text
        state = "writing…" if self.streaming else "answered"
        text.append(f" step {self.stream_step} · {state} ", "bold reverse cyan")
        text.append(" ")
        tail = self.stream_text[-400:]
        text.append(" ".join(tail.split()) if not self.streaming else tail.replace("\n", " "))
        return text
