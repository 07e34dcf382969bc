"""Replay and resume: re-run a recorded session through the same loop.

``replay(path)`` rebuilds the session's whole configuration from its ``session.start``
(task, instructions, model, tool schemas, max_tokens, params, context config) and serves
every model call and tool result from the recording: no agent code, no key, no network,
$0.

``resume(agent, path)`` continues an interrupted session: the recorded prefix is served
for $0 (hash-verified), recorded tool calls serve their recorded results (their effects
already happened once), and the first request the recording cannot answer goes to the
agent's real provider; new tool calls run for real under the agent's policy.
"""

from __future__ import annotations

import warnings
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from regista.context import ContextConfig
from regista.defaults import DEFAULT_TRACE_DIR
from regista.diff.masks import DIVERGED, EXACT, MaskSet
from regista.diff.structural import format_changes, structural_diff
from regista.errors import RecordedEnding, ReplayDivergence, ReplayDivergenceWarning
from regista.loop import RecordedOutcome, RunResult, SessionConfig, run_session
from regista.policy import ToolCallInfo
from regista.providers.base import Provider
from regista.providers.replay import (
    ReplayMode,
    ReplayProvider,
    recorded_ending,
    recording_end_note,
)
from regista.tools import Tool, ToolRegistry
from regista.trace.events import LlmRequestEvent, PermissionDecision, ToolCall, ToolResult
from regista.trace.reader import Trace
from regista.trace.verify import check_rebuilt
from regista.types import OnEvent, OnText

if TYPE_CHECKING:
    from regista.agent import Agent

HYBRID = ReplayMode.HYBRID

__all__ = ["RecordedTools", "config_from_trace", "replay", "resume", "step_verdicts"]


class RecordedTools:
    """Answers tool calls from a recording, by ``tool_use_id``.

    Args:
        trace: The recording.
        mode: What a call with no recorded result (or a changed one) means: ``strict``
            raises :class:`ReplayDivergence`; ``warn`` warns and answers with an error
            result; ``hybrid`` runs it live.
        edits: ``tool_use_id -> RecordedOutcome`` answers that replace the recording
            (a fork's edit).

    Attributes:
        verdicts: Each tool step looked up: ``exact`` (the call is the recorded one, its
            result served) or ``diverged``.
    """

    def __init__(
        self,
        trace: Trace,
        mode: ReplayMode = ReplayMode.STRICT,
        *,
        edits: dict[str, RecordedOutcome] | None = None,
        label: str | None = None,
    ) -> None:
        self.mode = mode
        self.edits = dict(edits or {})
        self.label = label or (trace.path.name if trace.path else "recording")
        self.calls = {ev.tool_use_id: ev for ev in trace.events if isinstance(ev, ToolCall)}
        self.results = {ev.tool_use_id: ev for ev in trace.events if isinstance(ev, ToolResult)}
        self.decisions = {
            ev.tool_use_id: ev for ev in trace.events if isinstance(ev, PermissionDecision)
        }
        self.end_note = recording_end_note(trace)
        self.ending = recorded_ending(trace)
        self.verdicts: dict[int, str] = {}

    def mode_at(self, step: int) -> ReplayMode:
        """How a call at ``step`` that leaves the recording is treated."""
        return self.mode

    def lookup(self, call: ToolCallInfo, step: int) -> RecordedOutcome | None:
        mode = self.mode_at(step)
        if call.id in self.edits:
            return self.edits[call.id]
        rec = self.results.get(call.id)
        recorded_call = self.calls.get(call.id)
        if rec is not None and recorded_call is not None:
            live = {"name": call.name, "input": call.input}
            old = {"name": recorded_call.name, "input": recorded_call.input}
            if live == old:
                self.verdicts[step] = EXACT
                dec = self.decisions.get(call.id)
                return RecordedOutcome(
                    content=rec.content,
                    is_error=rec.is_error,
                    allowed=dec.allowed if dec is not None else True,
                    reason=dec.reason if dec is not None else None,
                    seq=rec.seq,
                )
            detail = format_changes(structural_diff(old, live, "tool"))
        else:
            ending = self.ending
            if recorded_call is not None and ending is not None and mode is not HYBRID:
                # The recording stopped here (cancelled, or a callback raised while the tool
                # ran): the replay ends the same way.
                where, message, error_type = ending
                raise RecordedEnding(
                    message,
                    stop_reason="cancelled" if where == "cancelled" else "error",
                    error_type=error_type,
                )
            detail = f"no recorded result for tool call {call.id} ({call.name}){self.end_note}"
        message = f"{self.label}: diverged at step {step} (tool call): {detail}"
        self.verdicts[step] = DIVERGED
        if mode is ReplayMode.HYBRID:
            return None
        if mode is ReplayMode.WARN:
            warnings.warn(message, ReplayDivergenceWarning, stacklevel=2)
            return RecordedOutcome(content=f"(replay) {detail}", is_error=True)
        raise ReplayDivergence(message, step=step, kind="tool")


def config_from_trace(trace: Trace, **overrides: Any) -> SessionConfig:
    """The configuration a recorded session ran with, rebuilt from its trace alone.

    Everything comes from ``session.start``, the session's own record of how it was
    configured; only ``tool_choice``, which ``session.start`` does not hold, is taken from
    the first request. A recording whose requests disagree with its ``session.start``
    therefore diverges at its first model call, with the structural diff.
    """
    start = trace.start
    first = next((ev for ev in trace.events if isinstance(ev, LlmRequestEvent)), None)
    tools = ToolRegistry([Tool.from_schema(s) for s in start.tools])
    config = SessionConfig(
        model=start.model,
        instructions=start.instructions,
        tools=tools,
        max_turns=start.max_turns,
        max_tokens=start.max_tokens,
        params=dict(start.params),
        tool_choice=first.tool_choice if first else None,
        context=ContextConfig.from_dict(start.context),
        agent_ref=start.agent_ref,
        metadata=dict(start.metadata),
        policy_label=start.policy,
    )
    return replace(config, **overrides)


async def replay(
    path: str | Path | Trace,
    mode: str | ReplayMode = "strict",
    fallback: Provider | None = None,
    *,
    trace_dir: str | Path = DEFAULT_TRACE_DIR,
    tools: list[Tool] | None = None,
    on_event: OnEvent | None = None,
    on_text: OnText | None = None,
    masks: MaskSet | None = None,
) -> RunResult:
    """Re-run a recorded session for $0 and write the replay's own trace.

    Args:
        path: The recording.
        mode: ``strict`` (raise on any divergence), ``warn`` or ``hybrid``.
        fallback: Live provider for ``hybrid`` mode.
        trace_dir: Where the replay's trace is written.
        tools: Real tools that ``hybrid`` mode may run for calls the recording lacks.
        masks: Volatile spans a strict match ignores (:mod:`regista.diff.masks`).

    The result's ``verdicts`` give each replayed step's verdict (exact, masked, diverged).

    Raises:
        ReplayDivergence: In ``strict`` mode, when the run leaves the recording.
    """
    trace = _loaded(path)
    replay_mode = ReplayMode.parse(mode)
    provider = ReplayProvider(trace, replay_mode, fallback, masks=masks)
    config = config_from_trace(trace, trace_dir=Path(trace_dir))
    if tools:
        registry = ToolRegistry()
        by_name = {t.name: t for t in tools}
        for t in config.tools:
            registry.add(by_name.get(t.name, t))
        config = replace(config, tools=registry)
    tape = RecordedTools(trace, replay_mode)
    result = await _rerun(trace, config, provider, trace.start.provider, tape, on_event, on_text)
    result.verdicts = step_verdicts(provider, tape)
    return result


def _loaded(path: str | Path | Trace) -> Trace:
    trace = path if isinstance(path, Trace) else Trace.load(path)
    check_rebuilt(trace)
    return trace


async def _rerun(
    trace: Trace,
    config: SessionConfig,
    provider: Provider,
    label: str,
    tape: RecordedTools,
    on_event: OnEvent | None,
    on_text: OnText | None,
) -> RunResult:
    """Run ``trace``'s task again under ``config`` as a replay of it: model calls go to
    ``provider`` (named ``label`` in the new trace), tool calls to ``tape``."""
    return await run_session(
        config,
        trace.start.task,
        provider,
        provider_label=label,
        tool_tape=tape,
        replay_of=trace.session_id,
        on_event=on_event,
        on_text=on_text,
    )


def step_verdicts(provider: ReplayProvider, tools: RecordedTools) -> dict[int, str]:
    """Every replayed step's verdict, model and tool steps together, in step order."""
    both = {**provider.verdicts, **tools.verdicts}
    return {step: both[step] for step in sorted(both)}


async def resume(
    agent: Agent,
    path: str | Path | Trace,
    *,
    trace_dir: str | Path | None = None,
    on_event: OnEvent | None = None,
    on_text: OnText | None = None,
) -> RunResult:
    """Continue an interrupted session with ``agent``'s live provider, tools and policy.

    Args:
        agent: The agent to continue with.
        path: The interrupted session's trace (only read).
        trace_dir: Where the resumed session's trace goes (default: the agent's).

    Returns:
        The result; ``recorded_steps`` were served from the trace, ``live_steps`` ran
        for real. A differently configured agent diverges at its first request and
        simply re-runs the task live.
    """
    trace = _loaded(path)
    provider = ReplayProvider(trace, ReplayMode.HYBRID, agent.provider)
    tape = RecordedTools(trace, ReplayMode.HYBRID)
    config = replace(agent.config(), session_id=None)
    if trace_dir is not None:
        config = replace(config, trace_dir=Path(trace_dir))
    return await _rerun(trace, config, provider, agent.provider.name, tape, on_event, on_text)


__all__ += ["ReplayDivergence", "ReplayDivergenceWarning"]
