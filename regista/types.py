"""Normalised model I/O: the request a provider receives and the response it returns.

Messages and content blocks use the Anthropic Messages shape (``{"role": "user",
"content": [{"type": "text", "text": "…"}]}``) as plain JSON-able dicts: every provider
converts to and from it at its edge, and the trace stores exactly this.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, Literal, Self, TypeAlias

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, field_validator

from regista.trace.canonical import request_hash

if TYPE_CHECKING:
    from regista.agent import Agent

__all__ = [
    "AgentSpec",
    "ContentBlock",
    "LlmRequest",
    "LlmResponse",
    "Message",
    "OnEvent",
    "OnText",
    "Usage",
    "text_of",
    "tool_results_of",
    "tool_uses_of",
]

ContentBlock = dict[str, Any]
Message = dict[str, Any]

#: Called with each event of a trace once it is on disk (the event classes of
#: :mod:`regista.trace.events`).
OnEvent: TypeAlias = Callable[[Any], object]
#: Called with ``(step, delta)`` as a streaming model writes text; may be async.
OnText: TypeAlias = Callable[[int, str], "object | Awaitable[object]"]
#: An agent, or the ``"module:attr"`` reference that makes one (see :mod:`regista.loading`).
AgentSpec: TypeAlias = "Agent | str"


_SPLIT = frozenset(("cache_creation", "reasoning_output_tokens"))


class Usage(BaseModel):
    """Token counts of one model call."""

    model_config = ConfigDict(extra="allow")

    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0

    @field_validator(
        "input_tokens",
        "output_tokens",
        "cache_creation_input_tokens",
        "cache_read_input_tokens",
        mode="before",
    )
    @classmethod
    def _none_is_zero(cls, value: Any) -> Any:
        # the API sends null for a count it has nothing to say of (no cache use)
        return 0 if value is None else value

    def __add__(self, other: Usage) -> Usage:
        from regista.tokens import tokens_of

        if _SPLIT.intersection(self.model_extra or ()) or _SPLIT.intersection(
            other.model_extra or ()
        ):  # keep the split of cache writes (priced apart) and the reasoning count
            return Usage(**(tokens_of(self) + tokens_of(other)).usage_dict())
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cache_creation_input_tokens=self.cache_creation_input_tokens
            + other.cache_creation_input_tokens,
            cache_read_input_tokens=self.cache_read_input_tokens + other.cache_read_input_tokens,
        )

    @property
    def total_tokens(self) -> int:
        return (
            self.input_tokens
            + self.output_tokens
            + self.cache_creation_input_tokens
            + self.cache_read_input_tokens
        )


class LlmRequest(BaseModel):
    """Everything sent to the model for one call (never headers or credentials).

    ``params`` holds every sampling parameter that was set (temperature, top_p, top_k,
    stop_sequences, thinking, …); unset parameters are absent, not ``None``.
    """

    model_config = ConfigDict(extra="forbid")

    model: str
    system: str | None = None
    messages: list[Message]
    tools: list[dict[str, Any]] = Field(default_factory=list)
    tool_choice: dict[str, Any] | None = None
    max_tokens: int = 4096
    params: dict[str, Any] = Field(default_factory=dict)
    _hash: str | None = PrivateAttr(default=None)

    def canonical(self) -> dict[str, Any]:
        """The dict that ``request_hash`` is computed over."""
        return {
            "model": self.model,
            "system": self.system,
            "messages": self.messages,
            "tools": self.tools,
            "tool_choice": self.tool_choice,
            "max_tokens": self.max_tokens,
            "params": self.params,
        }

    @property
    def hash(self) -> str:
        """SHA-256 hex of the canonical JSON of the full request.

        Computed once: the loop, the provider and a replay all ask for it, and hashing a
        long history is the costliest part of a call that never leaves the machine. A
        request is not changed once it has been made.
        """
        if self._hash is None:
            self._hash = request_hash(self.canonical())
        return self._hash

    def hash_by(self, hasher: Callable[[dict[str, Any]], str]) -> str:
        """:attr:`hash`, computed by ``hasher`` when not known yet.

        ``hasher`` must give :func:`~regista.trace.canonical.request_hash`'s value (the recorder
        passes a :class:`~regista.trace.canonical.PrefixHasher`).
        """
        if self._hash is None:
            self._hash = hasher(self.canonical())
        return self._hash

    def __setattr__(self, name: str, value: Any) -> None:
        if not name.startswith("_"):
            self._hash = None  # a field changed: the cached hash is stale
        super().__setattr__(name, value)

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Self:
        copy = super().model_copy(update=update, deep=deep)
        copy._hash = None if update else self._hash
        return copy


StopReason = Literal["end_turn", "tool_use", "max_tokens", "stop_sequence", "pause_turn", "refusal"]


class LlmResponse(BaseModel):
    """A model's complete answer in the Anthropic Messages shape."""

    model_config = ConfigDict(extra="allow")

    id: str | None = None
    model: str | None = None
    role: Literal["assistant"] = "assistant"
    content: list[ContentBlock] = Field(default_factory=list)
    stop_reason: str | None = "end_turn"
    stop_sequence: str | None = None
    usage: Usage = Field(default_factory=Usage)

    def payload(self) -> dict[str, Any]:
        """The JSON form stored in the trace and served back on replay."""
        return self.model_dump(mode="json", exclude_none=False)

    @property
    def text(self) -> str:
        return text_of(self.content)

    @property
    def captured(self) -> bool:
        """False for an answer recorded without its content (``"content_captured": false``:
        spans whose instrumentation did not capture content), which cannot be replayed."""
        return (self.model_extra or {}).get("content_captured") is not False

    @property
    def tool_uses(self) -> list[ContentBlock]:
        return tool_uses_of(self.content)


def text_of(content: str | list[ContentBlock]) -> str:
    """The concatenated text blocks of a message's content."""
    if isinstance(content, str):
        return content
    return "".join(b.get("text", "") for b in content if b.get("type") == "text")


def tool_uses_of(content: list[ContentBlock]) -> list[ContentBlock]:
    """The ``tool_use`` blocks of a message's content, in order."""
    return [b for b in content if b.get("type") == "tool_use"]


def tool_results_of(messages: list[Message]) -> dict[str, ContentBlock]:
    """The ``tool_result`` blocks the user messages of ``messages`` carry, by
    ``tool_use_id`` (a later one of an id wins)."""
    out: dict[str, ContentBlock] = {}
    for m in messages:
        content = m.get("content")
        if m.get("role") != "user" or not isinstance(content, list):
            continue
        for b in content:
            if isinstance(b, dict) and b.get("type") == "tool_result":
                out[str(b.get("tool_use_id"))] = b
    return out
