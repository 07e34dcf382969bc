"""Tape tests: a golden trace becomes a $0 regression test of the *current* agent.

``play_tape(path, agent)`` runs the agent's current code, prompts and tool schemas through
a strict replay of the recording: every model call must hash-match the recorded one, every
tool call must have its recorded result, and the run must end where the recording ended.
Anything else raises :class:`TapeMismatch` naming the step, the field and the character
where the run left the path. No key, no network, no side effects: tools are served their
recorded results.

The pytest plugin (:mod:`regista.testing.plugin`) and ``regista test`` are built on it.
"""

from __future__ import annotations

import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Any

from regista.aio import run_sync
from regista.errors import ReplayDivergence, TraceError
from regista.loading import resolve_agent
from regista.loop import RunResult, run_session
from regista.providers.replay import ReplayMode, ReplayProvider
from regista.replay import RecordedTools
from regista.trace.reader import Trace
from regista.trace.verify import check_rebuilt
from regista.types import AgentSpec

__all__ = ["BrokenTape", "TapeMismatch", "play_tape", "play_tape_sync", "resolve_tape_agent"]


class TapeMismatch(ReplayDivergence):
    """The current agent no longer walks the recorded path."""


class BrokenTape(TraceError):
    """A golden trace that cannot be a test: its session was cut short or never ended."""


def check_tape(trace: Trace) -> None:
    """Refuse a tape that does not say how its run ended (a broken tape must not pass).

    Raises:
        BrokenTape: The last line is half-written, or there is no ``session.end``.
    """
    label = trace.path.name if trace.path else "tape"
    if trace.truncated:
        why = "its last line is half-written (the recording was cut short)"
    elif trace.end is None:
        why = "its session never ended (no session.end: it crashed or is still running)"
    else:
        return
    raise BrokenTape(
        f"{label}: not a usable tape: {why}, so it cannot say how the run must end; record it again"
    )


def resolve_tape_agent(trace: Trace, agent: AgentSpec | None = None) -> Any:
    """The agent to test: ``agent`` (an Agent or ``module:attr``), else the trace's
    ``agent_ref``."""
    name = trace.path.name if trace.path else "the trace"
    return resolve_agent(
        agent,
        trace.start.agent_ref,
        f"{name} records no agent_ref: give the agent to test (--agent module:attr, or "
        "agent= in Python)",
    )


async def play_tape(
    path: str | Path | Trace, agent: AgentSpec | None = None, *, trace_dir: str | Path | None = None
) -> RunResult:
    """Play a golden trace against ``agent`` under a strict replay.

    Raises:
        TapeMismatch: The agent left the recorded path (message: file, step, field, …).
        BrokenTape: The tape was cut short or its session never ended.
    """
    trace = path if isinstance(path, Trace) else Trace.load(path)
    check_tape(trace)
    check_rebuilt(trace)
    live = resolve_tape_agent(trace, agent)
    label = trace.path.name if trace.path else "tape"
    provider = ReplayProvider(trace, ReplayMode.STRICT, name_of=label)
    tools = RecordedTools(trace, ReplayMode.STRICT, label=label)
    with tempfile.TemporaryDirectory(prefix="regista-tape-") as tmp:
        config = replace(
            live.config(), session_id=None, trace_dir=Path(trace_dir or tmp), clock=None
        )
        try:
            result = await run_session(
                config, trace.start.task, provider, tool_tape=tools, replay_of=trace.session_id
            )
        except ReplayDivergence as exc:
            raise TapeMismatch(
                str(exc), step=exc.step, kind=exc.kind, diffs=exc.diffs, trace_path=trace.path
            ) from None
    recorded = trace.summary()
    recorded_steps = len(trace.steps())
    if trace.end is not None and (
        result.stop_reason != recorded.stop_reason or result.steps != recorded_steps
    ):
        raise TapeMismatch(
            f"{label}: diverged at step {min(result.steps, recorded_steps)} (end of run): the "
            f"run ended with {result.stop_reason!r} after {result.steps} steps; the recording "
            f"ended with {recorded.stop_reason!r} after {recorded_steps} steps",
            step=min(result.steps, recorded_steps),
            kind="end",
            trace_path=trace.path,
        )
    return result


def play_tape_sync(path: str | Path | Trace, agent: AgentSpec | None = None) -> RunResult:
    """:func:`play_tape` for synchronous code (runs its own event loop)."""
    return run_sync(play_tape(path, agent))
