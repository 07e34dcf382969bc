"""Trace events: one small pydantic class per ``type``, sharing the envelope.

Every line of a trace is one event. The envelope (``schema_version``, ``session_id``,
``seq``, ``ts``, ``type``) comes first on every line, then ``step`` on events that belong to
a step, so a reader can index a huge trace from the first bytes of each line.
Timestamps are made when an event is created, never when it is loaded.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

__all__ = [
    "SCHEMA_VERSION",
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
    "now_ts",
]

#: The trace schema this regista writes (and the newest it reads). See docs/trace-format.md.
SCHEMA_VERSION = 2

Source = Literal["live", "recorded", "edit"]


#: The last millisecond and whole second formatted, each as one tuple (replaced whole:
#: safe across threads). Formatting a date costs more than writing a small event.
_milli: list[tuple[int, str]] = [(-1, "")]
_second: list[tuple[int, str]] = [(-1, "")]


def now_ts() -> str:
    """UTC timestamp with milliseconds, e.g. ``2026-07-02T18:04:11.123Z``."""
    ms = time.time_ns() // 1_000_000
    last = _milli[0]
    if last[0] == ms:
        return last[1]
    second, milli = divmod(ms, 1000)
    cached = _second[0]
    if cached[0] != second:
        cached = (second, datetime.fromtimestamp(second, UTC).strftime("%Y-%m-%dT%H:%M:%S"))
        _second[0] = cached
    text = f"{cached[1]}.{milli:03d}Z"
    _milli[0] = (ms, text)
    return text


class EventBase(BaseModel):
    """The envelope every event shares."""

    # Unknown fields are kept (and written back) so that a minor addition inside one
    # schema version never loses data.
    model_config = ConfigDict(extra="allow")

    schema_version: int = SCHEMA_VERSION
    session_id: str
    seq: int
    ts: str = Field(default_factory=now_ts)


class SessionStart(EventBase):
    """The configuration a session ran with: enough to rebuild it without its code."""

    type: Literal["session.start"] = "session.start"
    task: str
    instructions: str | None = None
    model: str
    provider: str
    tools: list[dict[str, Any]] = Field(default_factory=list)
    policy: str | None = None
    context: dict[str, Any] | None = None
    max_turns: int = 20
    max_tokens: int = 4096
    params: dict[str, Any] = Field(default_factory=dict)
    agent_ref: str | None = None
    replay_of: str | None = None
    forked_from: dict[str, Any] | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    regista_version: str = ""


class LlmRequestEvent(EventBase):
    """A model request. ``messages`` holds only what is new since the previous request:
    the full list is the previous request's first ``messages_prefix`` messages followed by
    ``messages`` (``request_hash`` proves the rebuild).

    Loaded events hold ``system``, ``tools`` and every tool result in full; the line on
    disk leaves out what earlier lines hold (``regista.trace.compact``)."""

    type: Literal["llm.request"] = "llm.request"
    step: int
    turn: int
    request_hash: str
    model: str
    system: str | None = None
    tools: list[dict[str, Any]] = Field(default_factory=list)
    tool_choice: dict[str, Any] | None = None
    max_tokens: int
    params: dict[str, Any] = Field(default_factory=dict)
    messages_prefix: int = 0
    messages: list[dict[str, Any]]


class LlmResponseEvent(EventBase):
    """The full normalised response: the replay payload."""

    type: Literal["llm.response"] = "llm.response"
    step: int
    turn: int
    response: dict[str, Any]
    provider: str
    source: Source = "live"
    cost_usd: float | None = None
    duration_ms: float = 0.0
    #: Loose fork playback: whether the live request still matched the recorded one.
    matched: bool | None = None


class ToolCall(EventBase):
    type: Literal["tool.call"] = "tool.call"
    step: int
    turn: int
    tool_use_id: str
    name: str
    input: dict[str, Any] = Field(default_factory=dict)


class PermissionDecision(EventBase):
    type: Literal["permission.decision"] = "permission.decision"
    step: int
    tool_use_id: str
    allowed: bool
    reason: str | None = None
    by: Literal["policy", "default", "recorded"] = "policy"


class ToolResult(EventBase):
    type: Literal["tool.result"] = "tool.result"
    step: int
    tool_use_id: str
    name: str
    content: str | list[dict[str, Any]]
    is_error: bool = False
    source: Source = "live"
    duration_ms: float = 0.0


class ContextCompaction(EventBase):
    """Older turns replaced by a summary, written by a model call of its own."""

    type: Literal["context.compaction"] = "context.compaction"
    step: int
    turn: int
    replaced: list[dict[str, Any]]
    summary: str
    request_hash: str
    tokens_before: int
    provider: str
    source: Source = "live"
    usage: dict[str, Any] = Field(default_factory=dict)
    cost_usd: float | None = None
    duration_ms: float = 0.0


class ErrorEvent(EventBase):
    type: Literal["error"] = "error"
    step: int | None = None
    where: Literal["provider", "tool", "agent", "replay"] = "agent"
    error_type: str
    message: str


class SessionEnd(EventBase):
    type: Literal["session.end"] = "session.end"
    stop_reason: str
    output: str | None = None
    turns: int = 0
    steps: int = 0
    tool_calls: int = 0
    usage: dict[str, Any] = Field(default_factory=dict)
    cost_usd: float | None = None
    duration_ms: float = 0.0
    error: str | None = None
    replay: dict[str, Any] | None = None


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

EventAdapter: TypeAdapter[Event] = TypeAdapter(Event)
