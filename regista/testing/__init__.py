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
from regista.diff.masks import DIVERGED, MaskSet, load_mask_file
from regista.errors import ReplayDivergence, TraceError
from regista.loading import resolve_agent
from regista.loop import RunResult, run_session
from regista.providers.replay import ReplayMode, ReplayProvider
from regista.replay import RecordedTools, step_verdicts
from regista.trace.reader import Trace
from regista.trace.verify import check_rebuilt
from regista.types import AgentSpec

__all__ = ["BrokenTape", "TapeMismatch", "play_tape", "play_tape_sync", "resolve_tape_agent"]


class TapeMismatch(ReplayDivergence):
    """The current agent no longer walks the recorded path.

    Attributes:
        verdicts: The verdict of each step played before it left the path (``exact``,
            ``masked``), and ``diverged`` where it left.
    """

    verdicts: dict[int, str] = {}  # noqa: RUF012 (set per instance by play_tape)


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
    path: str | Path | Trace,
    agent: AgentSpec | None = None,
    *,
    trace_dir: str | Path | None = None,
    masks: MaskSet | str | Path | None = None,
) -> RunResult:
    """Play a golden trace against ``agent`` under a strict replay.

    ``masks`` (a :class:`~regista.diff.masks.MaskSet`, or the path of a mask file) are the
    volatile spans the match ignores: a request equal to the recorded one once masked
    passes, with the verdict ``masked``. The result's ``verdicts`` give each step's.

    Raises:
        TapeMismatch: The agent left the recorded path (message: file, step, field, …).
        BrokenTape: The tape was cut short or its session never ended.
    """
    trace = path if isinstance(path, Trace) else Trace.load(path)
    check_tape(trace)
    check_rebuilt(trace)
    live = resolve_tape_agent(trace, agent)
    label = trace.path.name if trace.path else "tape"
    if isinstance(masks, str | Path):
        masks = MaskSet(load_mask_file(masks), [str(masks)])
    provider = ReplayProvider(trace, ReplayMode.STRICT, name_of=label, masks=masks)
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
            mismatch = TapeMismatch(
                str(exc), step=exc.step, kind=exc.kind, diffs=exc.diffs, trace_path=trace.path
            )
            mismatch.verdicts = step_verdicts(provider, tools)
            raise mismatch from None
    result.verdicts = step_verdicts(provider, tools)
    recorded = trace.summary()
    recorded_steps = len(trace.steps())
    if trace.end is not None and (
        result.stop_reason != recorded.stop_reason or result.steps != recorded_steps
    ):
        mismatch = TapeMismatch(
            f"{label}: diverged at step {min(result.steps, recorded_steps)} (end of run): the "
            f"run ended with {result.stop_reason!r} after {result.steps} steps; the recording "
            f"ended with {recorded.stop_reason!r} after {recorded_steps} steps",
            step=min(result.steps, recorded_steps),
            kind="end",
            trace_path=trace.path,
        )
        mismatch.verdicts = {**result.verdicts, min(result.steps, recorded_steps): DIVERGED}
        raise mismatch
    return result


def play_tape_sync(
    path: str | Path | Trace,
    agent: AgentSpec | None = None,
    *,
    masks: MaskSet | str | Path | None = None,
) -> RunResult:
    """:func:`play_tape` for synchronous code (runs its own event loop)."""
    return run_sync(play_tape(path, agent, masks=masks))
