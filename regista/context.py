"""Context management: compact older turns into a summary when the conversation grows.

Before each model call, the conversation's size is estimated (characters / 4 of its
canonical JSON: deterministic, so a replay compacts at exactly the same point). Past
``max_tokens``, everything but the last ``keep_last`` assistant turns is replaced by a
summary written by a model call of its own, recorded as ``context.compaction``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import orjson

from regista.types import LlmRequest, Message, text_of

__all__ = [
    "ContextConfig",
    "compaction_request",
    "estimate_tokens",
    "is_compaction_request",
    "plan_compaction",
]

SUMMARY_SYSTEM = (
    "You summarise the earlier part of an agent's conversation so the agent can carry on. "
    "Keep every fact, decision, identifier and open question the agent will need; drop "
    "chit-chat. Answer with the summary only."
)
SUMMARY_PREFIX = "[Summary of the earlier conversation]\n"


@dataclass(frozen=True)
class ContextConfig:
    """When and how to compact.

    Attributes:
        max_tokens: Estimated conversation size that triggers a compaction.
        keep_last: Assistant turns (with their tool results) kept verbatim.
        summary_max_tokens: ``max_tokens`` of the summarising call.
    """

    max_tokens: int = 100_000
    keep_last: int = 2
    summary_max_tokens: int = 1024

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None) -> ContextConfig | None:
        if not data:
            return None
        return cls(**{k: v for k, v in data.items() if k in cls.__dataclass_fields__})


def estimate_tokens(messages: list[Message]) -> int:
    """A deterministic size estimate: characters of the canonical JSON / 4."""
    return len(orjson.dumps(messages)) // 4


def plan_compaction(messages: list[Message], keep_last: int) -> int | None:
    """The index where the kept messages start, or ``None`` if nothing can be compacted.

    The kept part starts at an assistant message, so every ``tool_use`` it holds keeps its
    ``tool_result`` and the conversation still alternates after the summary (a user
    message) is put in front.
    """
    assistant_idx = [i for i, m in enumerate(messages) if m.get("role") == "assistant"]
    if len(assistant_idx) <= keep_last:
        return None
    cut = assistant_idx[-keep_last] if keep_last > 0 else len(messages)
    if cut < 2:
        return None
    return cut


def _render(messages: list[Message]) -> str:
    lines = []
    for m in messages:
        content = m.get("content")
        if isinstance(content, str):
            lines.append(f"{m['role']}: {content}")
            continue
        for block in content or []:
            kind = block.get("type")
            if kind == "text":
                lines.append(f"{m['role']}: {block.get('text', '')}")
            elif kind == "tool_use":
                args = orjson.dumps(block.get("input", {})).decode()
                lines.append(f"{m['role']} called {block.get('name')}({args})")
            elif kind == "tool_result":
                inner = block.get("content", "")
                text = inner if isinstance(inner, str) else text_of(inner)
                err = " (error)" if block.get("is_error") else ""
                lines.append(f"tool result{err}: {text}")
    return "\n".join(lines)


def compaction_request(model: str, replaced: list[Message], config: ContextConfig) -> LlmRequest:
    """The model request that summarises ``replaced``."""
    return LlmRequest(
        model=model,
        system=SUMMARY_SYSTEM,
        messages=[{"role": "user", "content": [{"type": "text", "text": _render(replaced)}]}],
        max_tokens=config.summary_max_tokens,
    )


def is_compaction_request(request: LlmRequest) -> bool:
    """Whether ``request`` is a summarising call made by :func:`compaction_request`."""
    return request.system == SUMMARY_SYSTEM and not request.tools


def summary_message(summary: str) -> Message:
    return {"role": "user", "content": [{"type": "text", "text": SUMMARY_PREFIX + summary}]}
