"""Rebuilding a complete answer from a provider's stream, as the recording proxy passes it
through untouched."""

from __future__ import annotations

import contextlib
from typing import Any

import orjson

__all__ = ["AnthropicStream", "OpenAIStream", "SseParser", "StreamAnswer", "stream_for"]


class SseParser:
    """Splits a byte stream into the JSON ``data`` of its SSE events."""

    def __init__(self) -> None:
        self._buf = b""
        #: Whether ``data: [DONE]`` was seen.
        self.done = False

    def feed(self, chunk: bytes) -> list[Any]:
        self._buf += chunk.replace(b"\r\n", b"\n")
        out: list[Any] = []
        while b"\n\n" in self._buf:
            raw, self._buf = self._buf.split(b"\n\n", 1)
            data = b"\n".join(
                line[5:].lstrip() for line in raw.split(b"\n") if line.startswith(b"data:")
            )
            if data == b"[DONE]":
                self.done = True
            if not data or data == b"[DONE]":
                continue
            try:
                out.append(orjson.loads(data))
            except orjson.JSONDecodeError:
                continue
        return out


class StreamAnswer:
    """The answer a provider's SSE stream adds up to, fed its bytes (:meth:`feed`) or its
    already-parsed events (:meth:`add`)."""

    def __init__(self) -> None:
        self.parser = SseParser()

    def feed(self, chunk: bytes) -> None:
        for ev in self.parser.feed(chunk):
            if isinstance(ev, dict):
                self.add(ev)

    def add(self, ev: dict[str, Any]) -> None:
        """Take one already-parsed event."""
        raise NotImplementedError

    @property
    def done(self) -> bool:
        """Whether the stream said it ended."""
        raise NotImplementedError

    @property
    def complete(self) -> bool:
        """Whether the stream added up to a whole answer (a stream cut short does not)."""
        raise NotImplementedError

    def result(self) -> dict[str, Any] | None:
        """The answer's body (``None``: the stream gave none)."""
        raise NotImplementedError


def stream_for(api: str | None) -> StreamAnswer:
    """What the stream of a call to ``api`` adds up to: ``anthropic`` (the Messages API),
    ``openai-responses``, else OpenAI's chat completions."""
    if api == "anthropic":
        return AnthropicStream()
    if api == "openai-responses":
        from regista.wire.openai_responses import ResponsesStream

        return ResponsesStream()
    return OpenAIStream()


class AnthropicStream(StreamAnswer):
    """The Messages API response a stream of events adds up to."""

    def __init__(self) -> None:
        super().__init__()
        self.message: dict[str, Any] | None = None
        self.error: dict[str, Any] | None = None
        self._json: dict[int, str] = {}
        self.stopped = False

    def add(self, ev: dict[str, Any]) -> None:
        """Take one already-parsed event."""
        kind = ev.get("type")
        if kind == "message_start":
            self.message = dict(ev.get("message") or {})
            self.message["content"] = []
        elif self.message is None:
            if kind == "error":
                self.error = ev.get("error")
            return
        elif kind == "content_block_start":
            self.message["content"].append(dict(ev.get("content_block") or {}))
        elif kind == "content_block_delta":
            i = ev.get("index", 0)
            blocks = self.message["content"]
            if not isinstance(i, int) or not 0 <= i < len(blocks):
                return
            block, delta = blocks[i], ev.get("delta") or {}
            dtype = delta.get("type")
            if dtype == "text_delta":
                block["text"] = block.get("text", "") + delta.get("text", "")
            elif dtype == "thinking_delta":
                block["thinking"] = block.get("thinking", "") + delta.get("thinking", "")
            elif dtype == "signature_delta":
                block["signature"] = delta.get("signature", "")
            elif dtype == "citations_delta":
                cited = block.get("citations")
                block["citations"] = [*(cited or []), delta.get("citation")]
            elif dtype == "input_json_delta":
                self._json[i] = self._json.get(i, "") + delta.get("partial_json", "")
        elif kind == "content_block_stop":
            i = ev.get("index", 0)
            if i in self._json:
                raw = self._json.pop(i)
                with contextlib.suppress(orjson.JSONDecodeError, IndexError):
                    self.message["content"][i]["input"] = orjson.loads(raw) if raw else {}
        elif kind == "message_stop":
            self.stopped = True
        elif kind == "message_delta":
            self.message.update(ev.get("delta") or {})
            usage = dict(self.message.get("usage") or {})
            usage.update(ev.get("usage") or {})
            self.message["usage"] = usage
        elif kind == "error":
            self.error = ev.get("error")

    @property
    def done(self) -> bool:
        """Whether ``message_stop`` was seen."""
        return self.stopped

    @property
    def complete(self) -> bool:
        """Whether the stream added up to a whole message (a stream cut short does not)."""
        return self.stopped and self.result() is not None

    def result(self) -> dict[str, Any] | None:
        return self.message if self.message is not None and self.error is None else None


class OpenAIStream(StreamAnswer):
    """The chat completion a stream of chunks adds up to."""

    def __init__(self) -> None:
        super().__init__()
        self.body: dict[str, Any] | None = None
        self.content: list[str] = []
        self.refusal: list[str] = []
        self.calls: dict[int, dict[str, Any]] = {}
        self.finish: str | None = None
        self.usage: Any = None

    def add(self, ev: dict[str, Any]) -> None:
        """Take one already-parsed chunk."""
        if self.body is None:
            self.body = {k: v for k, v in ev.items() if k not in ("choices", "usage")}
            self.body["object"] = "chat.completion"
        if ev.get("usage") is not None:
            self.usage = ev["usage"]
        for choice in ev.get("choices") or []:
            if not isinstance(choice, dict) or choice.get("index", 0) != 0:
                continue
            delta = choice.get("delta") or {}
            if delta.get("content"):
                self.content.append(delta["content"])
            if delta.get("refusal"):
                self.refusal.append(delta["refusal"])
            for call in delta.get("tool_calls") or []:
                slot = self.calls.setdefault(
                    call.get("index", 0), {"id": "", "type": "function", "name": "", "args": ""}
                )
                if call.get("id"):
                    slot["id"] = call["id"]
                fn = call.get("function") or {}
                if fn.get("name"):
                    slot["name"] = fn["name"]
                slot["args"] += fn.get("arguments") or ""
            if choice.get("finish_reason"):
                self.finish = choice["finish_reason"]

    @property
    def done(self) -> bool:
        """Whether ``data: [DONE]`` was seen."""
        return self.parser.done

    @property
    def complete(self) -> bool:
        """Whether the stream added up to a whole completion: it said how it finished (a
        stream cut short does not)."""
        return self.finish is not None and self.body is not None

    def result(self) -> dict[str, Any] | None:
        if self.body is None:
            return None
        message: dict[str, Any] = {
            "role": "assistant",
            "content": "".join(self.content) if self.content or not self.calls else None,
            "refusal": "".join(self.refusal) or None,
        }
        if self.calls:
            message["tool_calls"] = [
                {
                    "id": c["id"],
                    "type": "function",
                    "function": {"name": c["name"], "arguments": c["args"]},
                }
                for _, c in sorted(self.calls.items())
            ]
        body = dict(self.body)
        body["choices"] = [
            {"index": 0, "message": message, "finish_reason": self.finish, "logprobs": None}
        ]
        if self.usage is not None:
            body["usage"] = self.usage
        return body
