"""The providers' streaming grammars, written from one complete answer.

Text, thinking and tool-call arguments are re-chunked; what an SDK reassembles from the
stream equals the answer it was written from (ids, argument strings, stop or finish
reason, usage).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import orjson

__all__ = ["CHUNK", "anthropic_events", "openai_chunks"]

#: Characters per delta.
CHUNK = 24


def _chunks(text: str, size: int = CHUNK) -> Iterator[str]:
    for i in range(0, len(text), size):
        yield text[i : i + size]


def _event(name: str, data: dict[str, Any]) -> bytes:
    return b"event: " + name.encode() + b"\ndata: " + orjson.dumps(data) + b"\n\n"


def anthropic_events(message: dict[str, Any]) -> Iterator[bytes]:
    """The Messages API stream of ``message`` (a complete response body)."""
    usage = dict(message.get("usage") or {})
    start = {k: v for k, v in message.items() if k not in ("content", "stop_reason")}
    start.update(content=[], stop_reason=None, stop_sequence=None)
    yield _event("message_start", {"type": "message_start", "message": start})
    for index, block in enumerate(message.get("content") or []):
        head, deltas = _block_stream(block)
        yield _event(
            "content_block_start",
            {"type": "content_block_start", "index": index, "content_block": head},
        )
        for delta in deltas:
            yield _event(
                "content_block_delta",
                {"type": "content_block_delta", "index": index, "delta": delta},
            )
        yield _event("content_block_stop", {"type": "content_block_stop", "index": index})
    yield _event(
        "message_delta",
        {
            "type": "message_delta",
            "delta": {
                "stop_reason": message.get("stop_reason"),
                "stop_sequence": message.get("stop_sequence"),
            },
            "usage": usage,
        },
    )
    yield _event("message_stop", {"type": "message_stop"})


def _block_stream(block: dict[str, Any]) -> tuple[dict[str, Any], Iterable[dict[str, Any]]]:
    """A content block as the stream gives it: its head (``content_block_start``) and the
    deltas that fill it in."""
    kind = block.get("type")
    if kind == "text":
        pieces = _chunks(block.get("text", ""))
        return {**block, "text": ""}, ({"type": "text_delta", "text": p} for p in pieces)
    if kind == "thinking":
        deltas = [
            {"type": "thinking_delta", "thinking": p} for p in _chunks(block.get("thinking", ""))
        ]
        if block.get("signature"):
            deltas.append({"type": "signature_delta", "signature": block["signature"]})
        return {"type": "thinking", "thinking": "", "signature": ""}, deltas
    if kind in ("tool_use", "server_tool_use"):
        pieces = _chunks(orjson.dumps(block.get("input", {})).decode())
        return {**block, "input": {}}, (
            {"type": "input_json_delta", "partial_json": p} for p in pieces
        )
    return block, ()  # a block the stream carries whole (redacted thinking, …)


def _data(chunk: dict[str, Any]) -> bytes:
    return b"data: " + orjson.dumps(chunk) + b"\n\n"


def openai_chunks(body: dict[str, Any], include_usage: bool) -> Iterator[bytes]:
    """The chat completions stream of ``body`` (a complete ``chat.completion``)."""
    base = {
        "id": body.get("id"),
        "object": "chat.completion.chunk",
        "created": body.get("created", 0),
        "model": body.get("model"),
    }
    for key in ("system_fingerprint", "service_tier"):
        if key in body:
            base[key] = body[key]

    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        choice = {"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}
        return _data({**base, "choices": [choice]})

    choice = (body.get("choices") or [{}])[0]
    message = choice.get("message") or {}
    yield chunk({"role": "assistant", "content": ""})
    for piece in _chunks(message.get("content") or ""):
        yield chunk({"content": piece})
    if message.get("refusal"):
        yield chunk({"refusal": message["refusal"]})
    for i, call in enumerate(message.get("tool_calls") or []):
        fn = call.get("function") or {}
        yield chunk(
            {
                "tool_calls": [
                    {
                        "index": i,
                        "id": call.get("id"),
                        "type": "function",
                        "function": {"name": fn.get("name"), "arguments": ""},
                    }
                ]
            }
        )
        for piece in _chunks(fn.get("arguments") or ""):
            yield chunk({"tool_calls": [{"index": i, "function": {"arguments": piece}}]})
    yield chunk({}, choice.get("finish_reason") or "stop")
    if include_usage:
        yield _data({**base, "choices": [], "usage": body.get("usage")})
    yield b"data: [DONE]\n\n"
