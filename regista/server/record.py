"""The recording proxy, and the live half of replays that go on past their live point.

``/v1/record/anthropic/…`` and ``/v1/record/openai/…`` forward every call to the upstream
(default: the public APIs), with the client's own headers (its API key included: forwarded,
never written), and stream the answer back untouched. Messages, chat completions and
Responses API calls are written as traces right after each answer is passed on (see
:mod:`regista.wire.sessions`, and docs/faults.md for what `kill -9` may lose).

The SDKs' base URLs for recording::

    ANTHROPIC_BASE_URL=http://127.0.0.1:PORT/v1/record/anthropic
    OPENAI_BASE_URL=http://127.0.0.1:PORT/v1/record/openai
"""

from __future__ import annotations

import socket
import sys
import time
from collections.abc import AsyncIterator
from typing import Any

import httpcore2
import httpx2
import orjson
from starlette.background import BackgroundTask
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import BaseRoute, Route

from regista.providers.base import server_of
from regista.server.context import ServerContext, read_body
from regista.server.replays import registry
from regista.server.sdk_replay import SdkReplay
from regista.types import LlmRequest, LlmResponse
from regista.wire.accumulate import stream_for
from regista.wire.errors import ErrorShape, HttpError
from regista.wire.openai_responses import (
    responses_request,
    responses_response,
)
from regista.wire.sessions import SessionBook, substitute_tool_results
from regista.wire.shapes import (
    anthropic_request,
    openai_request,
    openai_response,
)

__all__ = ["DEFAULT_UPSTREAMS", "Upstream", "routes"]

#: Where calls go when the environment named no other base URL.
DEFAULT_UPSTREAMS = {
    "anthropic": "https://api.anthropic.com",
    "openai": "https://api.openai.com/v1",
}
_HOP = {
    "host",
    "content-length",
    "connection",
    "accept-encoding",
    "transfer-encoding",
    "x-regista-token",
    "keep-alive",
}
_HOP_RAW = {h.encode() for h in _HOP}
_DEFAULT_PORTS = {b"http": 80, b"https": 443}
#: Connect within 10 s; an answer may take up to 10 minutes (long generations, slow streams).
_TIMEOUTS = {"timeout": {"connect": 10.0, "read": 600.0, "write": 600.0, "pool": 600.0}}
_UPSTREAM_ERRORS = (
    httpcore2.TimeoutException,
    httpcore2.NetworkError,
    httpcore2.ProtocolError,
    httpcore2.UnsupportedProtocol,
    httpcore2.ProxyError,
    OSError,
)
_RECORDED_PATHS = {"anthropic": "v1/messages", "openai": "chat/completions"}
#: The OpenAI Responses API's path (under the OpenAI base URL).
RESPONSES_PATH = "responses"


def api_of(provider: str, rest: str) -> str | None:
    """Which recorded API a path under a provider's base URL is (``None``: not recorded)."""
    rest = rest.strip("/")
    if provider == "openai" and rest == RESPONSES_PATH:
        return "openai-responses"
    return provider if rest == _RECORDED_PATHS.get(provider) else None


#: The Messages API's token count: recorded as a side step of its conversation.
COUNT_TOKENS = "count_tokens"
_COUNT_PATH = "v1/messages/count_tokens"


class Upstream:
    """The real providers' base URLs, and one pool of connections to reach them.

    The proxy speaks to the upstream with httpcore (what httpx runs on) directly: it passes
    bytes through and needs none of httpx's request building, redirects or decoding.
    """

    def __init__(self, urls: dict[str, str] | None = None) -> None:
        self.urls = {**DEFAULT_UPSTREAMS, **(urls or {})}
        self._pool: httpcore2.AsyncConnectionPool | None = None

    @property
    def pool(self) -> httpcore2.AsyncConnectionPool:
        if self._pool is None:
            self._pool = httpcore2.AsyncConnectionPool(
                ssl_context=httpx2.create_ssl_context(),
                max_connections=100,
                max_keepalive_connections=20,
                keepalive_expiry=5.0,
                # TCP_NODELAY: a request's headers and body go out at once, not 40 ms apart
                socket_options=[(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)],
            )
        return self._pool

    def url(self, provider: str, rest: str, query: str) -> str:
        url = self.urls[provider].rstrip("/") + "/" + rest.lstrip("/")
        return f"{url}?{query}" if query else url


def upstream(ctx: ServerContext) -> Upstream:
    """The app's upstream (the public APIs unless configured)."""
    up = ctx.state.get("upstream")
    if up is None:
        up = ctx.state["upstream"] = Upstream(ctx.upstreams)
    assert isinstance(up, Upstream)
    return up


def book(ctx: ServerContext) -> SessionBook:
    """Where the recording proxy writes its sessions (the store, unless configured)."""
    b = ctx.state.get("record_book")
    if b is None:
        b = ctx.state["record_book"] = SessionBook(ctx.store, idle_seconds=ctx.session_idle)
    assert isinstance(b, SessionBook)
    return b


def _forward_headers(
    request: Request, url: httpcore2.URL, body: bytes
) -> list[tuple[bytes, bytes]]:
    """The client's headers (its API key included), less the hop-by-hop ones; the body is
    passed on as it came (``accept-encoding: identity``: no compressed answer to undo)."""
    port = url.port
    host = (
        url.host
        if port is None or port == _DEFAULT_PORTS.get(url.scheme)
        else b"%b:%d" % (url.host, port)
    )
    headers = [(b"host", host)]
    headers += [(k, v) for k, v in request.headers.raw if k.lower() not in _HOP_RAW]
    headers += [(b"accept-encoding", b"identity"), (b"content-length", b"%d" % len(body))]
    return headers


def _answer_headers(raw: list[tuple[bytes, bytes]]) -> dict[str, str]:
    """The upstream's answer headers to pass on (repeated ones joined, as HTTP allows)."""
    headers: dict[str, str] = {}
    for k, v in raw:
        name = k.decode("latin-1").lower()
        if name in _HOP:
            continue
        value = v.decode("latin-1")
        headers[name] = f"{headers[name]}, {value}" if name in headers else value
    return headers


def _normalise(
    api: str, body: dict[str, Any], target: SessionBook | None = None
) -> LlmRequest | None:
    try:
        if api == "openai-responses":
            prev = body.get("previous_response_id")
            prior = target.conversation_of(prev) if target and isinstance(prev, str) else None
            return responses_request(body, prior)
        return anthropic_request(body) if api == "anthropic" else openai_request(body)
    except HttpError:
        return None


def _response(api: str, data: dict[str, Any]) -> LlmResponse | None:
    try:
        if api == "anthropic":
            return LlmResponse.model_validate(data)
        if api == "openai-responses":
            return responses_response(data)
        return openai_response(data)
    except Exception:  # an answer regista cannot read is passed on, not recorded
        return None


def count_tokens_response(data: dict[str, Any]) -> LlmResponse | None:
    """A ``count_tokens`` answer as a side step's response: no content and no usage
    (nothing was generated nor billed), the answer whole under ``count_tokens``."""
    if not isinstance(data.get("input_tokens"), int):
        return None
    return LlmResponse(content=[], stop_reason=None, count_tokens=data)


def write_answered(
    ctx: ServerContext,
    target: SessionBook,
    provider: str,
    body: dict[str, Any],
    data: dict[str, Any],
    ms: float,
    api: str | None = None,
    side: str | None = None,
) -> None:
    """Write a forwarded call (request ``body``, answer ``data``) into ``target``, with
    whether it streamed and the upstream it went to; a call regista cannot read is not
    written. ``api``: the provider's API, when not its default one (``openai-responses``);
    ``side="count_tokens"``: a token count (see :mod:`regista.wire.sessions`)."""
    api = api or provider
    req = _normalise(api, body, target)
    if req is None:
        return
    counted = side == COUNT_TOKENS
    response = count_tokens_response(data) if counted else _response(api, data)
    if response is not None:
        target.record(
            provider,
            req,
            response,
            duration_ms=ms,
            stream=body.get("stream") is True,
            server=server_of(upstream(ctx).urls[provider]),
            api=api if api != provider else None,
            side=side,
        )


async def forward(
    ctx: ServerContext,
    request: Request,
    provider: str,
    rest: str,
    raw: bytes,
    on_answer: Any = None,
    book: SessionBook | None = None,
    api: str | None = None,
) -> Response:
    """Send ``raw`` to the upstream and stream its answer back untouched; ``on_answer``
    gets the complete answer (a dict) and the call's duration when it could be read,
    right after the answer's last byte is passed on (``book`` is told, so that closing it
    waits for that write)."""
    up = upstream(ctx)
    url = up.url(provider, rest, request.url.query)
    t0 = time.perf_counter()
    try:
        target = httpcore2.URL(url)
        sent = httpcore2.Request(
            request.method,
            target,
            headers=_forward_headers(request, target, raw),
            content=raw,
            extensions=_TIMEOUTS,
        )
        resp = await up.pool.handle_async_request(sent)
    except _UPSTREAM_ERRORS as exc:
        raise HttpError(
            502, f"the upstream {url} could not be reached: {exc!r}", shape=_shape(provider)
        ) from None
    headers = _answer_headers(resp.headers)
    status = resp.status
    stream: Any = resp.stream
    is_sse = "text/event-stream" in headers.get("content-type", "")
    if is_sse:
        acc = stream_for("anthropic" if provider == "anthropic" else api)

        written = False

        def write() -> None:
            nonlocal written
            if written:
                return
            written = True
            result = acc.result() if acc.complete else None  # not a stream cut short
            if on_answer is not None and result is not None:
                _write_call(on_answer, result, (time.perf_counter() - t0) * 1000)

        async def body() -> AsyncIterator[bytes]:
            if book is not None:
                book.begin()
            try:
                async for chunk in stream:
                    acc.feed(chunk)
                    yield chunk
                    if acc.done:  # the last event is passed on: write before anything else
                        write()
                write()
            finally:
                if book is not None:
                    book.finish()
                await resp.aclose()

        return StreamingResponse(body(), status_code=status, headers=headers)
    try:
        data = b"".join([chunk async for chunk in stream])
    except _UPSTREAM_ERRORS as exc:
        raise HttpError(
            502, f"the upstream {url} broke off its answer: {exc!r}", shape=_shape(provider)
        ) from None
    finally:
        await resp.aclose()
    background = None
    if on_answer is not None and status == 200:
        ms = (time.perf_counter() - t0) * 1000
        answer = on_answer

        async def write_after() -> None:
            # Starlette runs this right after the answer's last byte is handed to the
            # connection, in the same turn of the event loop: nothing else runs between
            try:
                parsed = orjson.loads(data)
                if isinstance(parsed, dict):
                    _write_call(answer, parsed, ms)
            except orjson.JSONDecodeError:
                pass
            finally:
                if book is not None:
                    book.finish()

        if book is not None:
            book.begin()
        background = BackgroundTask(write_after)
    return Response(data, status_code=status, headers=headers, background=background)


def _write_call(on_answer: Any, data: dict[str, Any], ms: float) -> None:
    """Record one answered call; a failure to write is reported, not raised (the agent
    already has its answer)."""
    try:
        on_answer(data, ms)
    except Exception as exc:
        print(f"regista: a call could not be recorded: {exc}", file=sys.stderr)


def _shape(provider: str) -> ErrorShape:
    return "anthropic" if provider == "anthropic" else "openai"


def provider_of(request: Request) -> tuple[str, ErrorShape]:
    """The route's provider (``/{provider}/...``) and the shape of its error answers.

    Raises:
        HttpError: 404 for a provider with no upstream.
    """
    provider = request.path_params["provider"]
    if provider not in DEFAULT_UPSTREAMS:
        raise HttpError(404, f"no upstream {provider!r}: use anthropic or openai")
    return provider, _shape(provider)


def routes(ctx: ServerContext) -> list[BaseRoute]:
    reg = registry(ctx)

    async def record(request: Request) -> Response:
        provider, shape = provider_of(request)
        rest = request.path_params["rest"]
        raw = await read_body(request, ctx, shape=shape)
        on_answer = None
        api = api_of(provider, rest) if request.method == "POST" else None
        path = rest.strip("/")
        side = COUNT_TOKENS if provider == "anthropic" and path == _COUNT_PATH else None
        if request.method == "POST" and side:
            api = provider
        if api is not None:

            def on_answer(data: dict[str, Any], ms: float) -> None:
                # read once the answer is passed on: parsing a long history is not the
                # agent's wait
                try:
                    body = orjson.loads(raw)
                except orjson.JSONDecodeError:
                    return
                if isinstance(body, dict) and target is not None:
                    write_answered(ctx, target, provider, body, data, ms, api, side)

        target = book(ctx) if on_answer is not None else None
        return await forward(ctx, request, provider, rest, raw, on_answer, target, api)

    async def live(
        replay: SdkReplay, provider: str, body: dict[str, Any], request: Request
    ) -> Response:
        responses = provider == "openai" and request.url.path.rstrip("/").endswith(
            "/" + RESPONSES_PATH
        )
        api = "openai-responses" if responses else provider
        if responses:
            replay.expand_chain(body)
        if replay.tool_edits:
            substitute_tool_results(body, provider, replay.tool_edits, replay.tool_errors)
        if replay.spec.model is not None:  # rewind --model NAME -- CMD: what it is sent as,
            body["model"] = replay.spec.model  # and written as (every API names it here)
        raw = orjson.dumps(body)
        fork_book = replay.book

        def on_answer(data: dict[str, Any], ms: float) -> None:
            if fork_book is not None:
                write_answered(ctx, fork_book, provider, body, data, ms, api)

        rest = RESPONSES_PATH if responses else _RECORDED_PATHS[provider]
        return await forward(ctx, request, provider, rest, raw, on_answer, fork_book, api)

    reg.live_handler = live
    methods = ["GET", "POST", "PUT", "PATCH", "DELETE"]
    return [Route("/v1/record/{provider}/{rest:path}", record, methods=methods)]
