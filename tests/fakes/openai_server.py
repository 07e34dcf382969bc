"""A fake OpenAI chat completions API on 127.0.0.1, for tests that go through the real SDK.

``FakeOpenAIServer`` answers ``POST /v1/chat/completions`` from a script, as JSON or, when
the request says ``"stream": true``, as ``chat.completion.chunk`` SSE events (role chunk,
content chunks, tool-call deltas, the ``finish_reason`` chunk, the usage chunk when
``stream_options.include_usage``, ``data: [DONE]``). It records every request it gets.

Script items (answered in order): ``{"content": "text"}`` and/or ``{"tool_calls":
[{"id": "call_1", "name": "f", "arguments": "{\\"x\\": 1}"}]}``, or a callable taking the
request body and returning one; ``message`` (more fields of the message), ``finish_reason``,
``usage`` and ``extra`` (more fields of the completion) are optional. Usage::

    with FakeOpenAIServer() as server:
        server.script({"content": "hi"})
        client = openai.OpenAI(api_key="k", base_url=server.url)  # url ends in /v1
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler
from typing import Any

from fakes import FakeServer
from fakes.anthropic_server import RecordedRequest

__all__ = ["FakeOpenAIServer"]

Item = dict[str, Any] | Callable[[dict[str, Any]], dict[str, Any]]


class FakeOpenAIServer(FakeServer):
    """A scripted chat completions API on an ephemeral port of 127.0.0.1."""

    def __init__(self, *, chunk: int = 5) -> None:
        self.chunk = chunk
        self.requests: list[RecordedRequest] = []
        self._items: list[Item] = []
        self._fn: Callable[[dict[str, Any]], dict[str, Any]] | None = None
        self._lock = threading.Lock()
        super().__init__()

    name = "fake OpenAI"
    url_path = "/v1"

    def handler(self) -> type[BaseHTTPRequestHandler]:
        return _Handler

    def script(self, *items: Item) -> FakeOpenAIServer:
        with self._lock:
            self._items = list(items)
            self._fn = None
        return self

    def answer_with(self, fn: Callable[[dict[str, Any]], dict[str, Any]]) -> FakeOpenAIServer:
        with self._lock:
            self._fn = fn
        return self

    def _next(self, request: RecordedRequest) -> dict[str, Any] | None:
        with self._lock:
            self.requests.append(request)
            if self._fn is not None:
                return self._fn(request.body)
            if not self._items:
                return None
            item = self._items.pop(0)
        return item(request.body) if callable(item) else item

    def completion(self, partial: dict[str, Any], body: dict[str, Any]) -> dict[str, Any]:
        n = len(self.requests)
        calls = [
            {
                "id": c["id"],
                "type": "function",
                "function": {"name": c["name"], "arguments": c["arguments"]},
            }
            for c in partial.get("tool_calls", [])
        ]
        message: dict[str, Any] = {
            "role": "assistant",
            "content": partial.get("content"),
            "refusal": None,
        }
        if calls:
            message["tool_calls"] = calls
        message.update(partial.get("message", {}))  # other fields (annotations, audio, …)
        finish = partial.get("finish_reason") or ("tool_calls" if calls else "stop")
        return {
            "id": f"chatcmpl-fake{n:04d}",
            "object": "chat.completion",
            "created": 1_700_000_000 + n,
            "model": body.get("model", "gpt-fake"),
            "system_fingerprint": "fp_fake",
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "finish_reason": finish,
                    "logprobs": None,
                }
            ],
            "usage": partial.get("usage")
            or {"prompt_tokens": 11 + n, "completion_tokens": 7, "total_tokens": 18 + n},
            **partial.get("extra", {}),
        }

    def chunks(self, completion: dict[str, Any], include_usage: bool) -> Iterator[bytes]:
        base = {k: completion[k] for k in ("id", "created", "model", "system_fingerprint")}
        base["object"] = "chat.completion.chunk"
        choice = completion["choices"][0]
        message = choice["message"]

        def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
            c = {"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}
            return b"data: " + json.dumps({**base, "choices": [c]}).encode() + b"\n\n"

        yield chunk({"role": "assistant", "content": ""})
        text = message.get("content") or ""
        for i in range(0, len(text), self.chunk):
            yield chunk({"content": text[i : i + self.chunk]})
        for i, call in enumerate(message.get("tool_calls", [])):
            head = {"index": i, "id": call["id"], "type": "function"}
            head["function"] = {"name": call["function"]["name"], "arguments": ""}
            yield chunk({"tool_calls": [head]})
            args = call["function"]["arguments"]
            for j in range(0, len(args), self.chunk):
                piece = {"index": i, "function": {"arguments": args[j : j + self.chunk]}}
                yield chunk({"tool_calls": [piece]})
        yield chunk({}, choice["finish_reason"])
        if include_usage:
            usage = {**base, "choices": [], "usage": completion["usage"]}
            yield b"data: " + json.dumps(usage).encode() + b"\n\n"
        yield b"data: [DONE]\n\n"


class _Handler(BaseHTTPRequestHandler):
    fake: FakeOpenAIServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        return

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length)
        try:
            body = json.loads(raw)
        except ValueError:
            body = {}
        headers = {k.lower(): v for k, v in self.headers.items()}
        request = RecordedRequest("POST", self.path, headers, body)
        if not self.path.startswith("/v1/chat/completions"):
            return self._json(404, {"error": {"message": "no such route", "type": "x"}})
        partial = self.fake._next(request)
        if partial is None:
            return self._json(500, {"error": {"message": "script exhausted", "type": "x"}})
        completion = self.fake.completion(partial, body)
        if body.get("stream"):
            include = bool((body.get("stream_options") or {}).get("include_usage"))
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("transfer-encoding", "chunked")
            self.end_headers()
            for piece in self.fake.chunks(completion, include):
                self.wfile.write(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
            self.wfile.write(b"0\r\n\r\n")
            return None
        return self._json(200, completion)

    def _json(self, status: int, data: dict[str, Any]) -> None:
        raw = json.dumps(data).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)
