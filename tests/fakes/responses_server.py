"""A fake OpenAI Responses API on 127.0.0.1, for tests that go through the real SDK and CLIs.

``FakeResponsesServer`` answers ``POST /v1/responses`` from a script, as a ``response``
object or, when the request says ``"stream": true``, as the Responses SSE grammar the API
sends, each event with ``type`` and ``sequence_number`` (and an ``event:`` line):

- ``response.created``, ``response.in_progress`` (the response, ``status: in_progress``);
- per output item: ``response.output_item.added``, then
  - a message: ``response.content_part.added``, ``response.output_text.delta`` …,
    ``response.output_text.done``, ``response.content_part.done``;
  - a reasoning item: ``response.reasoning_summary_part.added``,
    ``response.reasoning_summary_text.delta`` …, ``response.reasoning_summary_text.done``,
    ``response.reasoning_summary_part.done`` per summary part;
  - a function call: ``response.function_call_arguments.delta`` …, ``.done``;
  - a custom tool call: ``response.custom_tool_call_input.delta`` …, ``.done``;
  - any other item (``web_search_call``, ``local_shell_call``, …): sent whole;

  and ``response.output_item.done``;
- ``response.completed`` (the whole response, ``usage`` included).

It records every request it gets (``requests``, ``bodies``). A request beyond the script
gets a 500 in OpenAI's error shape.

Script items (one per request, in order), or a callable taking the request body and
returning one:

- shorthand: ``{"text": "hi"}``, ``{"reasoning": "summary"}``, ``{"tool_calls": [{"id":
  "call_1", "name": "f", "arguments": "{\\"x\\": 1}"}]}`` (any mix, in that order), with an
  optional ``"usage"`` that overrides the defaults;
- ``{"output": [ITEM, …]}``: output items in the API's shape, sent as given (an ``id`` and
  ``status`` are filled in where missing);
- a :class:`fakes.anthropic_server.FakeError`: an HTTP error with OpenAI's error JSON.

Usage::

    with FakeResponsesServer() as server:
        server.script({"text": "hi"})
        client = openai.OpenAI(api_key="k", base_url=server.url)  # url ends in /v1
        client.responses.create(model="gpt-x", input="hello").output_text  # "hi"
"""

from __future__ import annotations

import copy
import json
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler
from typing import Any

from fakes import FakeServer
from fakes.anthropic_server import FakeError, RecordedRequest

__all__ = ["FakeResponsesServer", "responses_sse"]

Item = dict[str, Any] | FakeError | Callable[[dict[str, Any]], Any]

_OPENAI_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "invalid_request_error",
    404: "invalid_request_error",
    429: "rate_limit_exceeded",
    500: "server_error",
}


class FakeResponsesServer(FakeServer):
    """A scripted Responses API on an ephemeral port of 127.0.0.1.

    Args:
        chunk: Characters per text / arguments delta when streaming.
    """

    def __init__(self, *, chunk: int = 5) -> None:
        self.chunk = chunk
        self.requests: list[RecordedRequest] = []
        self._items: list[Item] = []
        self._fn: Callable[[dict[str, Any]], Any] | None = None
        self._served = 0
        self._lock = threading.Lock()
        super().__init__()

    name = "fake Responses"
    url_path = "/v1"

    def handler(self) -> type[BaseHTTPRequestHandler]:
        return _Handler

    # -- the script ----------------------------------------------------------------------

    def script(self, *items: Item) -> FakeResponsesServer:
        """Answer the next requests with ``items``, in order (replaces any script left)."""
        with self._lock:
            self._items = list(items)
            self._fn = None
            self._served = 0
        return self

    def answer_with(self, fn: Callable[[dict[str, Any]], Any]) -> FakeResponsesServer:
        """Answer every request with ``fn(body)``."""
        with self._lock:
            self._fn = fn
            self._items = []
        return self

    @property
    def bodies(self) -> list[dict[str, Any]]:
        """The JSON bodies of the requests received, in order."""
        return [r.body for r in self.requests]

    def _next(self, request: RecordedRequest) -> dict[str, Any] | FakeError:
        with self._lock:
            self.requests.append(request)
            if self._fn is not None:
                item: Item = self._fn
            elif self._served < len(self._items):
                item = self._items[self._served]
                self._served += 1
            else:
                return FakeError(
                    500,
                    message=f"fake Responses server: the script has {len(self._items)} "
                    f"answers and request {len(self.requests)} asked for another",
                )
        answer = item(request.body) if callable(item) else item
        assert isinstance(answer, (dict, FakeError))
        return answer

    # -- building answers ----------------------------------------------------------------

    def response(self, partial: dict[str, Any], body: dict[str, Any]) -> dict[str, Any]:
        """A full ``response`` object from a script item (defaults as the module says)."""
        n = len(self.requests)
        output: list[dict[str, Any]] = []
        if "reasoning" in partial:
            output.append(
                {
                    "id": f"rs_fake{n:04d}",
                    "type": "reasoning",
                    "summary": [{"type": "summary_text", "text": partial["reasoning"]}],
                }
            )
        if "text" in partial:
            output.append(
                {
                    "id": f"msg_fake{n:04d}",
                    "type": "message",
                    "role": "assistant",
                    "status": "completed",
                    "content": [
                        {
                            "type": "output_text",
                            "text": partial["text"],
                            "annotations": [],
                            "logprobs": [],
                        }
                    ],
                }
            )
        for i, call in enumerate(partial.get("tool_calls", [])):
            output.append(
                {
                    "id": f"fc_fake{n:04d}_{i}",
                    "type": "function_call",
                    "status": "completed",
                    "call_id": call.get("call_id") or call["id"],
                    "name": call["name"],
                    "arguments": call.get("arguments", "{}"),
                }
            )
        for i, raw in enumerate(partial.get("output", [])):
            item = copy.deepcopy(raw)
            item.setdefault("id", f"item_fake{n:04d}_{i}")
            if item.get("type") != "reasoning":
                item.setdefault("status", "completed")
            output.append(item)
        usage = {
            "input_tokens": 20 + n,
            "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
            "output_tokens": 9,
            "output_tokens_details": {"reasoning_tokens": 3 if "reasoning" in partial else 0},
            "total_tokens": 29 + n,
            **partial.get("usage", {}),
        }
        return {
            "id": f"resp_fake{n:04d}",
            "object": "response",
            "created_at": 1_700_000_000 + n,
            "status": "completed",
            "error": None,
            "incomplete_details": None,
            "instructions": body.get("instructions"),
            "max_output_tokens": body.get("max_output_tokens"),
            "model": body.get("model", "gpt-fake"),
            "output": output,
            "parallel_tool_calls": body.get("parallel_tool_calls", True),
            "previous_response_id": body.get("previous_response_id"),
            "reasoning": body.get("reasoning") or {"effort": None, "summary": None},
            "store": body.get("store", True),
            "temperature": body.get("temperature", 1.0),
            "text": body.get("text") or {"format": {"type": "text"}},
            "tool_choice": body.get("tool_choice", "auto"),
            "tools": body.get("tools", []),
            "top_p": body.get("top_p", 1.0),
            "truncation": body.get("truncation", "disabled"),
            "usage": usage,
            "user": None,
            "metadata": body.get("metadata") or {},
        }


def responses_sse(response: dict[str, Any], chunk: int = 5) -> Iterator[dict[str, Any]]:
    """The Responses SSE events (each with ``type`` and ``sequence_number``) of ``response``."""
    seq = 0

    def event(kind: str, **fields: Any) -> dict[str, Any]:
        nonlocal seq
        out = {"type": kind, "sequence_number": seq, **fields}
        seq += 1
        return out

    def pieces(text: str) -> list[str]:
        return [text[i : i + chunk] for i in range(0, len(text), max(chunk, 1))]

    head = {**response, "status": "in_progress", "output": [], "usage": None}
    yield event("response.created", response=head)
    yield event("response.in_progress", response=head)
    for index, item in enumerate(response["output"]):
        kind = item.get("type")
        item_id = item.get("id", "")
        at = {"item_id": item_id, "output_index": index}
        if kind == "message":
            yield event(
                "response.output_item.added",
                output_index=index,
                item={**item, "status": "in_progress", "content": []},
            )
            for ci, part in enumerate(item.get("content", [])):
                if part.get("type") == "output_text":
                    empty = {**part, "text": ""}
                    yield event("response.content_part.added", **at, content_index=ci, part=empty)
                    for piece in pieces(part.get("text", "")):
                        yield event(
                            "response.output_text.delta",
                            **at,
                            content_index=ci,
                            delta=piece,
                            logprobs=[],
                        )
                    yield event(
                        "response.output_text.done",
                        **at,
                        content_index=ci,
                        text=part.get("text", ""),
                        logprobs=[],
                    )
                elif part.get("type") == "refusal":
                    empty = {**part, "refusal": ""}
                    yield event("response.content_part.added", **at, content_index=ci, part=empty)
                    yield event(
                        "response.refusal.delta",
                        **at,
                        content_index=ci,
                        delta=part.get("refusal", ""),
                    )
                    yield event(
                        "response.refusal.done",
                        **at,
                        content_index=ci,
                        refusal=part.get("refusal", ""),
                    )
                else:
                    yield event("response.content_part.added", **at, content_index=ci, part=part)
                yield event("response.content_part.done", **at, content_index=ci, part=part)
        elif kind == "reasoning":
            yield event(
                "response.output_item.added",
                output_index=index,
                item={**item, "summary": []},
            )
            for si, part in enumerate(item.get("summary", [])):
                empty = {"type": "summary_text", "text": ""}
                yield event(
                    "response.reasoning_summary_part.added", **at, summary_index=si, part=empty
                )
                for piece in pieces(part.get("text", "")):
                    yield event(
                        "response.reasoning_summary_text.delta",
                        **at,
                        summary_index=si,
                        delta=piece,
                    )
                yield event(
                    "response.reasoning_summary_text.done",
                    **at,
                    summary_index=si,
                    text=part.get("text", ""),
                )
                yield event(
                    "response.reasoning_summary_part.done", **at, summary_index=si, part=part
                )
        elif kind == "function_call":
            yield event(
                "response.output_item.added",
                output_index=index,
                item={**item, "status": "in_progress", "arguments": ""},
            )
            args = str(item.get("arguments", ""))
            for piece in pieces(args):
                yield event("response.function_call_arguments.delta", **at, delta=piece)
            yield event("response.function_call_arguments.done", **at, arguments=args)
        elif kind == "custom_tool_call":
            yield event(
                "response.output_item.added",
                output_index=index,
                item={**item, "status": "in_progress", "input": ""},
            )
            raw = str(item.get("input", ""))
            for piece in pieces(raw):
                yield event("response.custom_tool_call_input.delta", **at, delta=piece)
            yield event("response.custom_tool_call_input.done", **at, input=raw)
        else:
            yield event("response.output_item.added", output_index=index, item=item)
        yield event("response.output_item.done", output_index=index, item=item)
    yield event("response.completed", response=response)


def _error_body(error: FakeError) -> dict[str, Any]:
    return {
        "error": {
            "message": error.message,
            "type": error.type or _OPENAI_ERROR_TYPES.get(error.status, "server_error"),
            "param": None,
            "code": None,
        }
    }


class _Handler(BaseHTTPRequestHandler):
    fake: FakeResponsesServer
    protocol_version = "HTTP/1.1"
    server_version = "fake-openai-responses/1"

    def log_message(self, format: str, *args: Any) -> None:
        return

    def do_GET(self) -> None:  # ``/v1/models`` and friends: not served
        self._json(404, _error_body(FakeError(404, message=f"no route {self.path}")))

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = None
        headers = {k.lower(): v for k, v in self.headers.items()}
        request = RecordedRequest(
            "POST", self.path, headers, body if isinstance(body, dict) else {}
        )
        if self.path.split("?")[0] != "/v1/responses":
            self.fake.requests.append(request)
            return self._json(404, _error_body(FakeError(404, message=f"no route {self.path}")))
        if not isinstance(body, dict):
            self.fake.requests.append(request)
            return self._json(400, _error_body(FakeError(400, message="body is not JSON")))
        try:
            answer = self.fake._next(request)
        except Exception as exc:  # a bad script fails the test loudly, not hangs it
            answer = FakeError(500, message=f"fake script raised {type(exc).__name__}: {exc}")
        if isinstance(answer, FakeError):
            return self._json(answer.status, _error_body(answer), answer.headers)
        response = self.fake.response(answer, body)
        if not body.get("stream"):
            return self._json(200, response)
        self.send_response(200)
        self.send_header("content-type", "text/event-stream; charset=utf-8")
        self.send_header("cache-control", "no-cache")
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        for data in responses_sse(response, self.fake.chunk):
            piece = f"event: {data['type']}\ndata: {json.dumps(data)}\n\n".encode()
            self.wfile.write(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
            self.wfile.flush()
        self.wfile.write(b"0\r\n\r\n")
        return None

    def _json(
        self, status: int, data: dict[str, Any], headers: dict[str, str] | None = None
    ) -> None:
        raw = json.dumps(data).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(raw)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(raw)
