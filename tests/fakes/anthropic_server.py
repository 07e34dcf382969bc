"""A fake Anthropic Messages API on 127.0.0.1, for tests that go through the real SDK.

``FakeAnthropicServer`` answers ``POST /v1/messages`` from a script, as JSON or, when the
request says ``"stream": true``, as the SSE stream the API sends (``message_start``,
``ping``, ``content_block_start`` / ``_delta`` / ``_stop``, ``message_delta``,
``message_stop``), and records every request it gets, headers included.

Script items (answered in order, one per request):

- a response dict in the Messages shape; only ``content`` is needed, the rest is filled
  in (``id``, ``model`` = the request's, ``stop_reason`` = ``tool_use`` when there is a
  tool_use block else ``end_turn``, ``usage``);
- a :class:`FakeError` (an HTTP error with Anthropic's error JSON, or an SSE ``error``
  event in the middle of a stream with ``mid_stream=True``);
- a :class:`FakeDisconnect` (the connection drops: before any answer, or part-way
  through a stream);
- a callable taking the request body (dict) and returning any of the above.

``answer_with(fn)`` answers every request with ``fn(body)`` instead. A request beyond the
script gets a 500 ``api_error`` saying so.

It takes the requests as Claude Code sends them: ``system`` given as text blocks, messages
of role ``system`` inside ``messages`` (any other role than ``user``, ``assistant`` and
``system`` is a 400, as the API says), ``cache_control`` on any block, ``thinking`` and
other parameters, and ``?beta=true``. ``POST /v1/messages/count_tokens`` answers
``{"input_tokens": N}`` (N from the body's size: :func:`count_tokens`) without using the
script; it is recorded in ``requests`` too.

Usage::

    with FakeAnthropicServer() as server:
        server.script({"content": [{"type": "text", "text": "hi"}]})
        client = anthropic.AsyncAnthropic(api_key="k", base_url=server.url)
        ...
        server.requests[0].body["messages"]; server.requests[0].headers["x-api-key"]
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from fakes import FakeServer

__all__ = [
    "ROLES",
    "FakeAnthropicServer",
    "FakeDisconnect",
    "FakeError",
    "RecordedRequest",
    "count_tokens",
]


@dataclass(frozen=True)
class RecordedRequest:
    """One request the server received.

    Attributes:
        method: ``"POST"``.
        path: The path, query string included.
        headers: Header names in lower case → value.
        body: The decoded JSON body (``{}`` when it was not JSON).
    """

    method: str
    path: str
    headers: dict[str, str]
    body: dict[str, Any]

    @property
    def streamed(self) -> bool:
        return bool(self.body.get("stream"))


@dataclass(frozen=True)
class FakeError:
    """An error the server answers with.

    Args:
        status: The HTTP status (401, 429, 500, 529, …).
        type: The API's ``error.type`` (``authentication_error``, ``rate_limit_error``, …);
            derived from ``status`` when omitted.
        message: The API's ``error.message``.
        mid_stream: For a streaming request: answer 200, start the message, then send an
            SSE ``error`` event (as the API does when it is overloaded mid-answer).
        headers: Extra response headers (e.g. ``{"retry-after-ms": "1"}``).
    """

    status: int
    type: str | None = None
    message: str = "fake error"
    mid_stream: bool = False
    headers: dict[str, str] = field(default_factory=dict)

    @property
    def error_type(self) -> str:
        return self.type or _ERROR_TYPES.get(self.status, "api_error")

    def body(self, request_id: str) -> dict[str, Any]:
        return {
            "type": "error",
            "error": {"type": self.error_type, "message": self.message},
            "request_id": request_id,
        }


@dataclass(frozen=True)
class FakeDisconnect:
    """The connection drops.

    Args:
        answer: For a streaming request, the response whose stream is cut; ``None`` cuts
            before anything is sent (a JSON request always gets nothing).
        after_events: SSE events sent before the cut.
    """

    answer: dict[str, Any] | None = None
    after_events: int = 3


Answer = dict[str, Any] | FakeError | FakeDisconnect
ScriptItem = Answer | Callable[[dict[str, Any]], Any]

_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}


class FakeAnthropicServer(FakeServer):
    """A scripted Messages API on an ephemeral port of 127.0.0.1.

    Args:
        text_chunk: Characters per ``text_delta`` / ``thinking_delta`` when streaming.
        json_chunk: Characters per ``input_json_delta`` when streaming.
        keep_alive: Keep connections open between JSON answers (HTTP/1.1, as the real API
            does) instead of closing each one; a stream still ends its connection.
    """

    def __init__(
        self, *, text_chunk: int = 4, json_chunk: int = 7, keep_alive: bool = False
    ) -> None:
        self.text_chunk = text_chunk
        self.json_chunk = json_chunk
        self.keep_alive = keep_alive
        super().__init__()
        self.requests: list[RecordedRequest] = []
        self._items: list[ScriptItem] = []
        self._fn: Callable[[dict[str, Any]], Any] | None = None
        self._served = 0
        self._lock = threading.Lock()

    # -- lifecycle -----------------------------------------------------------------------

    name = "fake Anthropic"

    def handler(self) -> type[BaseHTTPRequestHandler]:
        return _Handler

    def handler_attrs(self) -> dict[str, Any]:
        attrs = super().handler_attrs()
        if self.keep_alive:
            attrs.update(protocol_version="HTTP/1.1", disable_nagle_algorithm=True)
        return attrs

    # -- the script ----------------------------------------------------------------------

    def script(self, *items: ScriptItem) -> FakeAnthropicServer:
        """Answer the next requests with ``items``, in order (replaces any script left)."""
        with self._lock:
            self._items = list(items)
            self._fn = None
            self._served = 0
        return self

    def answer_with(self, fn: Callable[[dict[str, Any]], Any]) -> FakeAnthropicServer:
        """Answer every request with ``fn(body)`` (a response dict or a :class:`FakeError`)."""
        with self._lock:
            self._fn = fn
            self._items = []
        return self

    @property
    def bodies(self) -> list[dict[str, Any]]:
        """The JSON bodies of the requests received, in order."""
        return [r.body for r in self.requests]

    def _next(self, request: RecordedRequest) -> Answer:
        with self._lock:
            self.requests.append(request)
            if self._fn is not None:
                item: ScriptItem = self._fn
            elif self._served < len(self._items):
                item = self._items[self._served]
                self._served += 1
            else:
                return FakeError(
                    500,
                    message=f"fake Anthropic server: the script has {len(self._items)} "
                    f"answers and request {len(self.requests)} asked for another",
                )
        answer = item(request.body) if callable(item) else item
        return answer

    # -- building answers ----------------------------------------------------------------

    def complete_message(self, partial: dict[str, Any], body: dict[str, Any]) -> dict[str, Any]:
        """A full Messages response from a partial one (defaults as the module says)."""
        n = len(self.requests)
        content = [dict(b) for b in partial.get("content", [])]
        has_tool = any(b.get("type") == "tool_use" for b in content)
        usage = {
            "input_tokens": 10,
            "output_tokens": 5,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
            **partial.get("usage", {}),
        }
        return {
            "id": f"msg_fake_{n:04d}",
            "type": "message",
            "role": "assistant",
            "model": body.get("model", "claude-fake"),
            "stop_reason": "tool_use" if has_tool else "end_turn",
            "stop_sequence": None,
            **{k: v for k, v in partial.items() if k not in ("content", "usage")},
            "content": content,
            "usage": usage,
        }

    def sse_events(self, message: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
        """The (event name, data) pairs that stream ``message``."""
        usage = dict(message["usage"])
        start_usage = {**usage, "output_tokens": min(1, int(usage.get("output_tokens", 0)))}
        head = {k: v for k, v in message.items() if k not in ("content", "usage")}
        yield (
            "message_start",
            {
                "type": "message_start",
                "message": {
                    **head,
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": start_usage,
                },
            },
        )
        yield "ping", {"type": "ping"}
        for index, block in enumerate(message["content"]):
            yield from self._block_events(index, block)
        yield (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {
                    "stop_reason": message.get("stop_reason"),
                    "stop_sequence": message.get("stop_sequence"),
                },
                "usage": {"output_tokens": usage.get("output_tokens", 0)},
            },
        )
        yield "message_stop", {"type": "message_stop"}

    def _block_events(
        self, index: int, block: dict[str, Any]
    ) -> Iterator[tuple[str, dict[str, Any]]]:
        kind = block.get("type")
        deltas: list[dict[str, Any]] = []
        if kind == "text":
            start = {k: v for k, v in block.items() if k != "citations"} | {"text": ""}
            deltas = [
                {"type": "text_delta", "text": piece}
                for piece in _chunks(str(block.get("text", "")), self.text_chunk)
            ]
            # as the API streams them: each citation in a delta of its own
            deltas += [
                {"type": "citations_delta", "citation": c} for c in block.get("citations") or []
            ]
        elif kind in ("tool_use", "server_tool_use"):
            start = {**block, "input": {}}
            raw = json.dumps(block.get("input", {})) if block.get("input") else ""
            deltas = [
                {"type": "input_json_delta", "partial_json": piece}
                for piece in _chunks(raw, self.json_chunk)
            ] or [{"type": "input_json_delta", "partial_json": ""}]
        elif kind == "thinking":
            start = {"type": "thinking", "thinking": "", "signature": ""}
            deltas = [
                {"type": "thinking_delta", "thinking": piece}
                for piece in _chunks(str(block.get("thinking", "")), self.text_chunk)
            ]
            deltas.append({"type": "signature_delta", "signature": block.get("signature", "")})
        else:  # redacted_thinking, server tool blocks, …: sent whole
            start = dict(block)
        yield (
            "content_block_start",
            {
                "type": "content_block_start",
                "index": index,
                "content_block": start,
            },
        )
        for delta in deltas:
            yield (
                "content_block_delta",
                {"type": "content_block_delta", "index": index, "delta": delta},
            )
        yield "content_block_stop", {"type": "content_block_stop", "index": index}


#: The roles the Messages API takes inside ``messages`` (``system``: mid-conversation
#: system messages, as Claude Code sends them).
ROLES = ("user", "assistant", "system")


def count_tokens(body: dict[str, Any]) -> int:
    """The fake's token count of a request: a token per four characters of its system
    prompt, messages and tools as JSON (at least 1)."""
    counted = {k: body.get(k) for k in ("system", "messages", "tools")}
    return max(1, len(json.dumps(counted, sort_keys=True)) // 4)


def _bad_roles(body: dict[str, Any]) -> str | None:
    messages = body.get("messages")
    if not isinstance(messages, list):
        return "messages: Field required"
    for i, m in enumerate(messages):
        if not isinstance(m, dict) or m.get("role") not in ROLES:
            role = m.get("role") if isinstance(m, dict) else None
            return f"messages.{i}.role: Input should be 'user', 'assistant' or 'system' ({role!r})"
    return None


def _chunks(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), max(size, 1))]


class _Handler(BaseHTTPRequestHandler):
    fake: FakeAnthropicServer
    server_version = "fake-anthropic/1"

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = None
        request = RecordedRequest(
            method="POST",
            path=self.path,
            headers={k.lower(): v for k, v in self.headers.items()},
            body=body if isinstance(body, dict) else {},
        )
        request_id = f"req_fake_{len(self.fake.requests) + 1:04d}"
        route = self.path.split("?")[0]
        if route == "/v1/messages/count_tokens" and isinstance(body, dict):
            with self.fake._lock:
                self.fake.requests.append(request)
            problem = _bad_roles(body)
            if problem is not None:
                self._error(FakeError(400, message=problem), request_id)
                return
            self._send_json(200, {"input_tokens": count_tokens(body)}, {"request-id": request_id})
            return
        if isinstance(body, dict) and route == "/v1/messages":
            problem = _bad_roles(body)
            if problem is not None:
                self.fake.requests.append(request)
                self._error(FakeError(400, message=problem), request_id)
                return
        if route != "/v1/messages":
            self.fake.requests.append(request)
            self._error(FakeError(404, message=f"no route {self.path}"), request_id)
            return
        if not isinstance(body, dict):
            self.fake.requests.append(request)
            self._error(FakeError(400, message="the body is not a JSON object"), request_id)
            return
        try:
            answer = self.fake._next(request)
        except Exception as exc:  # a bad script should fail the test loudly, not hang it
            answer = FakeError(500, message=f"fake script raised {type(exc).__name__}: {exc}")
        if isinstance(answer, FakeDisconnect):
            if request.streamed and answer.answer is not None:
                self._stream(answer.answer, body, request_id, limit=answer.after_events)
            self.close_connection = True
            return
        if isinstance(answer, FakeError) and not (answer.mid_stream and request.streamed):
            self._error(answer, request_id)
            return
        if request.streamed:
            self._stream(answer, body, request_id)
        else:
            assert isinstance(answer, dict)
            message = self.fake.complete_message(answer, body)
            self._send_json(200, message, {"request-id": request_id})

    def _error(self, error: FakeError, request_id: str) -> None:
        self._send_json(
            error.status, error.body(request_id), {"request-id": request_id, **error.headers}
        )

    def _send_json(self, status: int, payload: dict[str, Any], headers: dict[str, str]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def _stream(
        self,
        answer: dict[str, Any] | FakeError,
        body: dict[str, Any],
        request_id: str,
        limit: int | None = None,
    ) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("request-id", request_id)
        if self.fake.keep_alive:  # no length: the stream ends with the connection
            self.send_header("connection", "close")
            self.close_connection = True
        self.end_headers()
        if isinstance(answer, FakeError):
            message = self.fake.complete_message({"content": []}, body)
            events = list(self.fake.sse_events(message))[:2]
            events.append(("error", answer.body(request_id)))
        else:
            events = list(self.fake.sse_events(self.fake.complete_message(answer, body)))
        for name, data in events[:limit]:
            self.wfile.write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())
            self.wfile.flush()
