"""The shapes a session is made of: its configuration, its result, and the tool tape seam.

``SessionConfig`` is everything the loop needs (an ``Agent`` is a friendly front for one);
``RunResult`` is how a session ended; a ``ToolTape`` answers tool calls from a recording
(replay, resume, fork) instead of running them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from regista.clock import Clock
from regista.context import ContextConfig
from regista.defaults import DEFAULT_TRACE_DIR
from regista.policy import ToolCallInfo
from regista.savings import Savings
from regista.tools import ToolRegistry
from regista.types import Usage

__all__ = ["RecordedOutcome", "RunResult", "SessionConfig", "ToolTape"]


@dataclass
class SessionConfig:
    """Everything the loop needs to run a session (an ``Agent`` is a friendly front)."""

    model: str
    instructions: str | None = None
    tools: ToolRegistry = field(default_factory=ToolRegistry)
    policy: Callable[[ToolCallInfo], Any] | None = None
    max_turns: int = 20
    max_tokens: int = 4096
    params: dict[str, Any] = field(default_factory=dict)
    tool_choice: dict[str, Any] | None = None
    context: ContextConfig | None = None
    agent_ref: str | None = None
    trace_dir: Path = DEFAULT_TRACE_DIR
    fsync: bool = False
    #: Replace secret shapes in the trace by markers as it is written (``regista.redact``).
    redact: bool | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    policy_label: str | None = None
    #: Deterministic runs (sample traces, golden tests): fixed ids, timestamps, durations.
    session_id: str | None = None
    clock: Clock | None = None


@dataclass
class RecordedOutcome:
    """A tool call answered from a tape (or a fork's edit) instead of being run."""

    content: str | list[dict[str, Any]]
    is_error: bool
    allowed: bool = True
    reason: str | None = None
    source: str = "recorded"
    #: The recorded ``tool.result``'s ``seq``: recorded results are written in this order.
    seq: int | None = None


class ToolTape(Protocol):
    def lookup(self, call: ToolCallInfo, step: int) -> RecordedOutcome | None:
        """The recorded outcome of ``call``, ``None`` to run it live; may raise
        :class:`ReplayDivergence`."""
        ...


@dataclass
class RunResult:
    """How a session ended."""

    trace_path: Path
    session_id: str
    output: str | None
    stop_reason: str
    usage: Usage
    cost_usd: float | None
    #: What the person typed: one, the task (``max_turns`` limits model calls).
    turns: int
    steps: int
    tool_calls: int
    #: Steps served from a recording / answered by an edit / run live (replay, resume, fork).
    recorded_steps: int = 0
    edited_steps: int = 0
    live_steps: int = 0
    error: str | None = None
    diverged_at: int | None = None
    #: What the calls served from a recording did not spend again (``None``: none were).
    savings: Savings | None = None
    #: A replay's verdict per step played: ``exact``, ``masked`` (equal once masked) or
    #: ``diverged`` (see :mod:`regista.diff.masks`); empty for a live run.
    verdicts: dict[int, str] = field(default_factory=dict)

    def trace(self) -> Any:
        from regista.trace.reader import Trace

        return Trace.load(self.trace_path)
