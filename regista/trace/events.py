"""Trace events: one small pydantic class per ``type``, sharing the envelope.

Every line of a trace is one event. The envelope (``schema_version``, ``session_id``,
``seq``, ``ts``, ``type``) comes first on every line, then ``step`` on events that belong to
a step, so a reader can index a huge trace from the first bytes of each line.
Timestamps are made when an event is created, never when it is loaded.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Annotated, Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

# The schema version and the type names live apart from the models (importable without
# pydantic); each class's ``Literal`` below must say the same (a test checks).
from regista.trace.names import (
    CONTEXT_COMPACTION,
    ERROR,
    LLM_REQUEST,
    LLM_RESPONSE,
    PERMISSION_DECISION,
    SCHEMA_VERSION,
    SESSION_END,
    SESSION_START,
    TOOL_CALL,
    TOOL_RESULT,
)

__all__ = [
    "CONTEXT_COMPACTION",
    "ERROR",
    "EVENT_CLASSES",
    "LLM_REQUEST",
    "LLM_RESPONSE",
    "PERMISSION_DECISION",
    "SCHEMA_VERSION",
    "SESSION_END",
    "SESSION_START",
    "TOOL_CALL",
    "TOOL_RESULT",
    "ContextCompaction",
    "ErrorEvent",
    "Event",
    "EventAdapter",
    "EventBase",
    "LlmRequestEvent",
    "LlmResponseEvent",
    "PermissionDecision",
    "SessionEnd",
    "SessionStart",
    "ToolCall",
    "ToolResult",
    "ms_ts",
    "now_ts",
    "second_ts",
]

Source = Literal["live", "recorded", "edit"]


def now_ts() -> str:
    """UTC timestamp with milliseconds, e.g. ``2026-07-02T18:04:11.123Z``."""
    return ms_ts(time.time_ns() // 1_000_000)


def ms_ts(ms: int) -> str:
    """The :func:`now_ts` timestamp of ``ms`` (Unix time in milliseconds)."""
    second, milli = divmod(ms, 1000)
    return _SECOND_MS % (*time.gmtime(second)[:6], milli)


def second_ts(second: int) -> str:
    """A :func:`now_ts` timestamp's whole second (``second``: Unix time), e.g.
    ``2026-07-02T18:04:11``."""
    return _SECOND % time.gmtime(second)[:6]


_SECOND = "%04d-%02d-%02dT%02d:%02d:%02d"
_SECOND_MS = _SECOND + ".%03dZ"


class EventBase(BaseModel):
    """The envelope every event shares."""

    # Unknown fields are kept (and written back) so that a minor addition inside one
    # schema version never loses data. The validators are built when first used (most of
    # the cost of importing this module; a process that only writes events uses none).
    model_config = ConfigDict(extra="allow", defer_build=True)

    schema_version: int = SCHEMA_VERSION
    """The trace schema the line was written with (``SCHEMA_VERSION``)."""
    session_id: str
    """The session's ULID; the same on every line of a file."""
    seq: int
    """The event's position in the trace: 0, 1, 2, … with no gaps; the only ordering key."""
    ts: str = Field(default_factory=now_ts)
    """UTC time the event was created, with milliseconds (``2026-07-02T18:04:11.123Z``);
    informational."""


class SessionStart(EventBase):
    """The configuration a session ran with: enough to rebuild it without its code."""

    type: Literal["session.start"] = "session.start"
    """Always ``session.start``; the first line of every trace."""
    task: str
    """The user's task: the first user message."""
    instructions: str | None = None
    """The system prompt; ``None`` when the agent has none."""
    model: str
    """The model name requests are made with."""
    provider: str
    """The provider's name (``anthropic``, ``openai``, ``scripted``, …)."""
    tools: list[dict[str, Any]] = Field(default_factory=list)
    """The tool schemas (``name``, ``description``, ``input_schema``) offered to the model."""
    policy: str | None = None
    """The permission policy's name; ``None`` when every call is allowed."""
    context: dict[str, Any] | None = None
    """The context compaction settings; ``None`` when compaction is off."""
    max_turns: int = 20
    """The most model calls the session may make."""
    max_tokens: int = 4096
    """The ``max_tokens`` of each request, in output tokens."""
    params: dict[str, Any] = Field(default_factory=dict)
    """Sampling parameters sent with each request (``temperature``, …); empty when none."""
    agent_ref: str | None = None
    """Where the agent is defined, ``module:attr``; ``None`` when it was built in code."""
    replay_of: str | None = None
    """The session id this session replays or resumes; ``None`` for a fresh session."""
    forked_from: dict[str, Any] | None = None
    """``{session_id, at_step, edit, live_after, path}`` (plus ``edits`` for several edits) for
    a fork; ``None`` otherwise."""
    metadata: dict[str, Any] = Field(default_factory=dict)
    """Free-form labels given by the caller or the recorder (``recorded_by``, ``api``, …);
    empty when none."""
    regista_version: str = ""
    """The regista version that wrote the trace; empty in traces written before it was recorded."""


class LlmRequestEvent(EventBase):
    """A model request. ``messages`` holds only what is new since the previous request:
    the full list is the previous request's first ``messages_prefix`` messages followed by
    ``messages`` (``request_hash`` proves the rebuild).

    Loaded events hold ``system``, ``tools`` and every tool result in full; the line on
    disk leaves out what earlier lines hold (``regista.trace.compact``). The events of one
    loaded trace that took their tool schemas from the same line share one ``tools`` list
    (validated once): treat it as read-only."""

    type: Literal["llm.request"] = "llm.request"
    """Always ``llm.request``."""
    step: int
    """The step this model call is, numbered from 0 in trace order."""
    turn: int
    """How many model calls came before this one in the session (from 0)."""
    request_hash: str
    """SHA-256 hex digest of the canonical JSON of the full request (see docs/trace-format.md)."""
    model: str
    """The model the request names."""
    system: str | None = None
    """The system prompt; ``None`` when there is none. On disk, only when it or ``tools``
    changed."""
    tools: list[dict[str, Any]] = Field(default_factory=list)
    """The tool schemas sent; empty when none. On disk, only when they or ``system`` changed."""
    tool_choice: dict[str, Any] | None = None
    """The request's ``tool_choice``; ``None`` when the provider's default applies."""
    max_tokens: int
    """The request's output token limit."""
    params: dict[str, Any] = Field(default_factory=dict)
    """Sampling parameters sent (``temperature``, …); empty when none."""
    messages_prefix: int = 0
    """How many of the previous request's messages come first (0 after a compaction or on the
    first request)."""
    messages: list[dict[str, Any]]
    """The messages after the first ``messages_prefix``, in the Messages API shape."""


class LlmResponseEvent(EventBase):
    """The full normalised response: the replay payload."""

    type: Literal["llm.response"] = "llm.response"
    """Always ``llm.response``."""
    step: int
    """The step of the request this answers."""
    turn: int
    """The turn of the request this answers."""
    response: dict[str, Any]
    """The full normalised Messages response (``content``, ``stop_reason``, ``usage``, …): the
    replay payload."""
    provider: str
    """The name of the provider that answered."""
    source: Source = "live"
    """``live`` (asked of a model), ``recorded`` (served from a trace) or ``edit`` (a fork's
    edit)."""
    cost_usd: float | None = None
    """The call's cost in US dollars; ``None`` when unknown (never a silent 0)."""
    duration_ms: float = 0.0
    """Wall time of the call, in milliseconds."""
    matched: bool | None = None
    """Loose playback only: whether the live request still matched the recorded one; ``None``
    otherwise."""


class ToolCall(EventBase):
    type: Literal["tool.call"] = "tool.call"
    """Always ``tool.call``."""
    step: int
    """The step this tool call is; each tool_use block of a response is a step of its own."""
    turn: int
    """The turn of the model answer that asked for the call."""
    tool_use_id: str
    """The id of the response's ``tool_use`` block (``toolu_…``)."""
    name: str
    """The tool's name."""
    input: dict[str, Any] = Field(default_factory=dict)
    """The arguments the model gave; empty when none."""


class PermissionDecision(EventBase):
    type: Literal["permission.decision"] = "permission.decision"
    """Always ``permission.decision``."""
    step: int
    """The step of the tool call decided on."""
    tool_use_id: str
    """The id of the tool call decided on."""
    allowed: bool
    """Whether the tool ran."""
    reason: str | None = None
    """Why it was denied (or what the policy raised); ``None`` when no reason was given."""
    by: Literal["policy", "default", "recorded"] = "policy"
    """Who decided: the ``policy``, the ``default`` (no policy), or the ``recorded`` decision
    of a replay."""


class ToolResult(EventBase):
    type: Literal["tool.result"] = "tool.result"
    """Always ``tool.result``."""
    step: int
    """The step of the tool call this answers."""
    tool_use_id: str
    """The id of the tool call this answers."""
    name: str
    """The tool's name."""
    content: str | list[dict[str, Any]]
    """What the model is given back: a string, or a list of content blocks."""
    is_error: bool = False
    """Whether the tool raised, was denied or is unknown (``content`` then says why)."""
    source: Source = "live"
    """``live`` (the tool ran), ``recorded`` (served from a trace) or ``edit`` (a fork's edit)."""
    duration_ms: float = 0.0
    """Wall time the tool took, in milliseconds; 0 when it did not run."""


class ContextCompaction(EventBase):
    """Older turns replaced by a summary, written by a model call of its own."""

    type: Literal["context.compaction"] = "context.compaction"
    """Always ``context.compaction``."""
    step: int
    """The step this compaction is (it is a model call of its own)."""
    turn: int
    """How many model calls came before the request it shortened."""
    replaced: list[dict[str, Any]]
    """The messages replaced by the summary."""
    summary: str
    """The summary the model wrote, which takes their place."""
    request_hash: str
    """SHA-256 hex digest of the canonical JSON of the summarising request."""
    tokens_before: int
    """The estimated size of the history before compaction, in tokens."""
    provider: str
    """The name of the provider that wrote the summary."""
    source: Source = "live"
    """``live``, ``recorded`` or ``edit``, as for ``llm.response``."""
    usage: dict[str, Any] = Field(default_factory=dict)
    """The summarising call's token usage (``input_tokens``, ``output_tokens``, …); empty when
    unknown."""
    cost_usd: float | None = None
    """The summarising call's cost in US dollars; ``None`` when unknown."""
    duration_ms: float = 0.0
    """Wall time of the summarising call, in milliseconds."""


class ErrorEvent(EventBase):
    type: Literal["error"] = "error"
    """Always ``error``."""
    step: int | None = None
    """The step the error happened in; ``None`` when it belongs to no step."""
    where: Literal["provider", "tool", "agent", "replay"] = "agent"
    """What failed: the ``provider``, a ``tool``, the ``agent``'s own code, or the ``replay``."""
    error_type: str
    """The exception's class name."""
    message: str
    """The exception's message."""


class SessionEnd(EventBase):
    type: Literal["session.end"] = "session.end"
    """Always ``session.end``; the last line of a trace that was not cut short."""
    stop_reason: str
    """Why the session ended: ``end_turn``, ``max_turns``, ``max_tokens``, ``error``,
    ``cancelled``, ``diverged``, …"""
    output: str | None = None
    """The final answer's text; ``None`` when the session ended without one."""
    turns: int = 0
    """How many model calls the session made."""
    steps: int = 0
    """How many steps the trace holds."""
    tool_calls: int = 0
    """How many tool calls the model asked for."""
    usage: dict[str, Any] = Field(default_factory=dict)
    """Token usage summed over every model call; empty when none was reported."""
    cost_usd: float | None = None
    """The session's cost in US dollars; ``None`` when any call's cost is unknown."""
    duration_ms: float = 0.0
    """Wall time of the whole session, in milliseconds."""
    error: str | None = None
    """The error that ended the session, ``Type: message``; ``None`` when none did."""
    replay: dict[str, Any] | None = None
    """``{recorded, edit, live, diverged_at}`` counts for replays, resumes and forks; ``None``
    otherwise."""


Event = Annotated[
    SessionStart
    | LlmRequestEvent
    | LlmResponseEvent
    | ToolCall
    | PermissionDecision
    | ToolResult
    | ContextCompaction
    | ErrorEvent
    | SessionEnd,
    Field(discriminator="type"),
]

#: The model of each type of event, in :data:`Event`'s order: the one table from a line's
#: ``type`` to its class (a writer of decoded lines and the readers' own model builder use
#: it; pydantic reads the same from :data:`Event`'s discriminator).
EVENT_CLASSES: dict[str, type[EventBase]] = {
    model.model_fields["type"].default: model for model in get_args(get_args(Event)[0])
}


def __getattr__(name: str) -> Any:
    # ``EventAdapter``, built when first asked for: building it (and the models' validators,
    # ``defer_build``) is a third of this module's import, and a process that only writes
    # events (the debugger opening a transcript) never validates one.
    if name == "EventAdapter":
        adapter: TypeAdapter[Event] = TypeAdapter(Event)
        globals()["EventAdapter"] = adapter
        return adapter
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


if TYPE_CHECKING:
    EventAdapter: TypeAdapter[Event]
