"""Anthropic-shaped messages to the OpenTelemetry GenAI message format.

The GenAI conventions record content as ``[{"role": …, "parts": [{"type": …}]}]``
(``gen_ai.input.messages``, ``gen_ai.output.messages``, ``gen_ai.system_instructions``).
regista stores the Anthropic Messages shape; this module converts one to the other. It is
pure Python: it neither imports OpenTelemetry nor is imported by ``import regista``.

Mapping of content blocks to parts:

- ``text`` → ``{"type": "text", "content": …}``
- ``tool_use`` → ``{"type": "tool_call", "id", "name", "arguments"}``
- ``tool_result`` → ``{"type": "tool_call_response", "id", "response"}``, in a message of
  role ``tool`` (Anthropic carries tool results in ``user`` messages; the convention gives
  them a role of their own). A result of one text block is shown as its text, marked
  ``"regista.shape": "blocks"`` so that it is read back as the block; other lists are kept
- ``thinking`` → ``{"type": "reasoning", "content": …}`` (with its ``signature``)
- ``image`` / ``document`` with a base64 source → ``blob``; with a URL source → ``uri``
- anything else → the block itself (a "generic part": it has a ``type``)
"""

from __future__ import annotations

from typing import Any

import orjson

__all__ = ["finish_reason", "input_messages", "output_messages", "system_instructions", "to_json"]

#: Anthropic ``stop_reason`` → the convention's well-known ``finish_reason`` values.
_FINISH_REASONS = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "max_tokens": "length",
    "tool_use": "tool_call",
    "refusal": "content_filter",
}

_MODALITY = {"image": "image", "document": "document"}


def to_json(value: Any) -> str:
    """Compact, deterministic JSON (insertion order, UTF-8 kept as is)."""
    return orjson.dumps(value).decode()


def finish_reason(stop_reason: str | None) -> str:
    """The convention's finish reason for an Anthropic ``stop_reason`` (unknown ones kept)."""
    if stop_reason is None:
        return "stop"
    return _FINISH_REASONS.get(stop_reason, stop_reason)


def _tool_response(content: Any) -> Any:
    # One text block is shown as its text (and marked, see _part); other lists as they are.
    if (
        isinstance(content, list)
        and len(content) == 1
        and isinstance(content[0], dict)
        and content[0].get("type") == "text"
    ):
        return str(content[0].get("text", ""))
    return content


def _part(block: dict[str, Any]) -> dict[str, Any]:
    kind = block.get("type")
    if kind == "text":
        return {"type": "text", "content": block.get("text", "")}
    if kind == "tool_use":
        return {
            "type": "tool_call",
            "id": block.get("id"),
            "name": block.get("name"),
            "arguments": block.get("input") or {},
        }
    if kind == "tool_result":
        content = block.get("content", "")
        part: dict[str, Any] = {
            "type": "tool_call_response",
            "id": block.get("tool_use_id"),
            "response": _tool_response(content),
        }
        if isinstance(content, list) and isinstance(part["response"], str):
            part["regista.shape"] = "blocks"  # the text was one text block: it comes back so
        if block.get("is_error"):
            part["is_error"] = True
        return part
    if kind == "thinking":
        part = {"type": "reasoning", "content": block.get("thinking", "")}
        if block.get("signature"):  # kept so that the block can be sent back to the model
            part["signature"] = block["signature"]
        return part
    if kind in _MODALITY and isinstance(block.get("source"), dict):
        source = block["source"]
        if source.get("type") == "base64":
            return {
                "type": "blob",
                "modality": _MODALITY[str(kind)],
                "mime_type": source.get("media_type"),
                "content": source.get("data", ""),
            }
        if source.get("type") == "url":
            return {"type": "uri", "modality": _MODALITY[str(kind)], "uri": source.get("url", "")}
    return dict(block)


def _blocks(content: str | list[dict[str, Any]]) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content if isinstance(b, dict)]


def _convert(message: dict[str, Any]) -> list[dict[str, Any]]:
    """One Anthropic message → one or more GenAI messages (tool results get role ``tool``)."""
    role = str(message.get("role", "user"))
    out: list[dict[str, Any]] = []
    for block in _blocks(message.get("content", "")):
        part_role = "tool" if block.get("type") == "tool_result" else role
        if out and out[-1]["role"] == part_role:
            out[-1]["parts"].append(_part(block))
        else:
            out.append({"role": part_role, "parts": [_part(block)]})
    return out or [{"role": role, "parts": []}]


def input_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A request's ``messages`` as ``gen_ai.input.messages``.

    A message that the parts alone would not give back on import (one with fields besides
    ``role`` and ``content``, a role other than ``user`` / ``assistant``, or one of the same
    role as the message before it) has ``"regista.message"`` on its first GenAI message: its
    other fields, so that an import rebuilds it as it was.
    """
    out: list[dict[str, Any]] = []
    previous: Any = None
    for message in messages:
        converted = _convert(message)
        role = message.get("role")
        extra = {k: v for k, v in message.items() if k not in ("role", "content")}
        if extra or role not in ("user", "assistant") or role == previous:
            converted[0]["regista.message"] = extra
        out.extend(converted)
        previous = role
    return out


def output_messages(content: list[dict[str, Any]], stop_reason: str | None) -> list[dict[str, Any]]:
    """A response as ``gen_ai.output.messages`` (one choice, as Anthropic returns)."""
    return [
        {
            "role": "assistant",
            "parts": [_part(b) for b in _blocks(content)],
            "finish_reason": finish_reason(stop_reason),
        }
    ]


def system_instructions(system: str | list[dict[str, Any]] | None) -> list[dict[str, Any]] | None:
    """The system prompt as ``gen_ai.system_instructions`` (``None`` when there is none)."""
    if not system:
        return None
    return [_part(b) for b in _blocks(system)]
