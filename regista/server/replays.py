"""Routes of SDK replays: create, inspect and delete a replay, and the provider endpoints.

``POST /v1/replays`` answers the two base URLs to give the SDKs::

    ANTHROPIC_BASE_URL=http://127.0.0.1:8787/v1/replays/rp_…/anthropic
    OPENAI_BASE_URL=http://127.0.0.1:8787/v1/replays/rp_…/openai/v1

From those the SDKs call ``…/anthropic/v1/messages``, ``…/openai/v1/chat/completions`` and
``…/openai/v1/responses`` (the Responses API), and ``…/anthropic/v1/messages/count_tokens``
(the recorded count of the same request, else an estimate, marked
``x-regista-count-tokens: estimated``); any other endpoint under them answers 400 in that
provider's error shape.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Awaitable, Callable
from typing import Any

from starlette.background import BackgroundTask
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import BaseRoute, Route

from regista.diff.masks import MaskSet, mask_set
from regista.errors import RegistaError
from regista.server.context import ServerContext, read_json
from regista.server.sdk_replay import LIVE, SdkReplay, parse_spec
from regista.trace.reader import Trace
from regista.types import LlmRequest
from regista.wire.errors import ErrorShape, HttpError
from regista.wire.openai_responses import (
    responses_body,
    responses_events,
    responses_request,
)
from regista.wire.shapes import (
    anthropic_body,
    anthropic_request,
    openai_body,
    openai_request,
)
from regista.wire.sse import anthropic_events, openai_chunks

__all__ = ["ReplayRegistry", "registry", "routes"]

#: Called for a call past the live point of a ``live="proxy"`` replay:
#: ``(replay, provider, body, request) -> Response``.
LiveHandler = Callable[[SdkReplay, str, dict[str, Any], Request], Awaitable[Response]]


class ReplayRegistry:
    """The replays of one server, in memory; expired ones are dropped when next touched."""

    def __init__(self, ctx: ServerContext) -> None:
        self.ctx = ctx
        self._replays: dict[str, SdkReplay] = {}
        self._lock = threading.Lock()
        self.live_handler: LiveHandler | None = None

    def create(self, body: dict[str, Any]) -> SdkReplay:
        spec = parse_spec(body)
        path = self.ctx.run_path(spec.run)
        try:
            trace = Trace.load(path)
        except RegistaError as exc:
            raise HttpError(400, f"run {spec.run!r} cannot be read: {exc}") from None
        masks = self.ctx.masks if self.ctx.masks is not None else mask_set()
        replay = SdkReplay(
            trace, spec, self.ctx.replay_ttl, masks=masks if spec.masks else MaskSet()
        )
        if spec.live == "proxy" or spec.trace == "server":
            replay.book = replay.fork_book(self.ctx.store, idle_seconds=self.ctx.session_idle)
        with self._lock:
            self._sweep()
            self._replays[replay.id] = replay
        return replay

    def add(self, replay: SdkReplay) -> SdkReplay:
        with self._lock:
            self._replays[replay.id] = replay
        return replay

    def get(self, replay_id: str, shape: ErrorShape = "regista") -> SdkReplay:
        with self._lock:
            self._sweep()
            replay = self._replays.get(replay_id)
        if replay is None:
            raise HttpError(404, f"no replay {replay_id!r} (unknown or expired)", shape=shape)
        return replay

    def delete(self, replay_id: str) -> None:
        with self._lock:
            replay = self._replays.pop(replay_id, None)
        if replay is None:
            raise HttpError(404, f"no replay {replay_id!r} (unknown or expired)")
        if replay.book is not None:
            replay.book.close()

    def sweep_sessions(self) -> None:
        """Drop expired replays, ending their forks' sessions; end idle fork sessions."""
        with self._lock:
            self._sweep()
            books = [r.book for r in self._replays.values() if r.book is not None]
        for book in books:
            book.sweep()

    def close(self) -> None:
        """End every fork session still open (the server is stopping)."""
        with self._lock:
            books = [r.book for r in self._replays.values() if r.book is not None]
        for book in books:
            book.close()

    def _sweep(self) -> None:
        for key in [k for k, r in self._replays.items() if r.expired]:
            replay = self._replays.pop(key)
            if replay.book is not None:
                replay.book.close()


def registry(ctx: ServerContext) -> ReplayRegistry:
    """The app's replay registry (made on first use)."""
    reg = ctx.state.get("replays")
    if reg is None:
        reg = ctx.state["replays"] = ReplayRegistry(ctx)
    assert isinstance(reg, ReplayRegistry)
    return reg


def routes(ctx: ServerContext) -> list[BaseRoute]:
    reg = registry(ctx)

    async def create(request: Request) -> Response:
        replay = reg.create(await read_json(request, ctx))
        base = str(request.base_url).rstrip("/") + f"/v1/replays/{replay.id}"
        answer = {
            "id": replay.id,
            "anthropic_base_url": f"{base}/anthropic",
            "openai_base_url": f"{base}/openai/v1",
            "expires_at": replay.status()["expires_at"],
        }
        if replay.book is not None and replay.spec.live == "signal":
            # where a client sends what the replay answers 409 replay_live (regista.server.live)
            answer["anthropic_live_url"] = f"{base}/live/anthropic"
            answer["openai_live_url"] = f"{base}/live/openai"
        return JSONResponse(answer, status_code=201)

    async def show(request: Request) -> Response:
        from regista.server.verdict import tape_failure

        replay = reg.get(request.path_params["rid"])
        book = replay.book
        status = replay.status()
        # the fork's runs (their ids in the store), and the run as a tape test would judge it
        status["runs"] = [p.stem for p in book.paths] if book is not None else []
        status["tape_failure"] = tape_failure(replay)
        return JSONResponse(status)

    async def delete(request: Request) -> Response:
        reg.delete(request.path_params["rid"])
        return Response(status_code=204)

    async def tools_next(request: Request) -> Response:
        replay = reg.get(request.path_params["rid"])
        return JSONResponse(replay.tool_result(request.query_params.get("tool_use_id")))

    async def messages(request: Request) -> Response:
        return await _call(reg, request, "anthropic")

    async def count_tokens(request: Request) -> Response:
        replay = reg.get(request.path_params["rid"], "anthropic")
        body = await read_json(request, reg.ctx, shape="anthropic")
        answer, recorded = replay.count_tokens(anthropic_request(body))
        headers = {} if recorded else {"x-regista-count-tokens": "estimated"}
        return JSONResponse(answer, headers=headers)

    async def completions(request: Request) -> Response:
        return await _call(reg, request, "openai")

    async def responses(request: Request) -> Response:
        return await _call(reg, request, "openai", "openai-responses")

    async def unsupported_anthropic(request: Request) -> Response:
        raise HttpError(
            400,
            f"regista replays serve only POST /v1/messages and /v1/messages/count_tokens, not "
            f"{request.method} "
            f"/{request.path_params['rest']}",
            shape="anthropic",
        )

    async def unsupported_openai(request: Request) -> Response:
        raise HttpError(
            400,
            "regista replays serve only POST /v1/chat/completions and POST /v1/responses, not "
            f"{request.method} "
            f"/{request.path_params['rest']}",
            shape="openai",
        )

    any_method = ["GET", "POST", "PUT", "PATCH", "DELETE"]
    return [
        Route("/v1/replays", create, methods=["POST"]),
        Route("/v1/replays/{rid}", show, methods=["GET"]),
        Route("/v1/replays/{rid}", delete, methods=["DELETE"]),
        Route("/v1/replays/{rid}/tools/next", tools_next, methods=["GET"]),
        Route("/v1/replays/{rid}/anthropic/v1/messages", messages, methods=["POST"]),
        Route(
            "/v1/replays/{rid}/anthropic/v1/messages/count_tokens", count_tokens, methods=["POST"]
        ),
        Route("/v1/replays/{rid}/openai/v1/chat/completions", completions, methods=["POST"]),
        Route("/v1/replays/{rid}/openai/chat/completions", completions, methods=["POST"]),
        Route("/v1/replays/{rid}/openai/v1/responses", responses, methods=["POST"]),
        Route("/v1/replays/{rid}/openai/responses", responses, methods=["POST"]),
        Route("/v1/replays/{rid}/anthropic/{rest:path}", unsupported_anthropic, methods=any_method),
        Route("/v1/replays/{rid}/openai/{rest:path}", unsupported_openai, methods=any_method),
    ]


def _responses_request(replay: SdkReplay, body: dict[str, Any]) -> LlmRequest:
    """A Responses API request, its ``previous_response_id`` resolved within the replay."""
    prev = body.get("previous_response_id")
    if prev is None:
        return responses_request(body)
    prior = replay.conversation_of(prev) if isinstance(prev, str) else None
    if prior is None:
        raise HttpError(
            400,
            f"'previous_response_id' {prev!r} is not a response of this replay: a replay "
            "resolves only the ids it served; send the whole conversation in 'input' instead",
            shape="openai",
        )
    return responses_request(body, prior)


async def _call(
    reg: ReplayRegistry, request: Request, provider: ErrorShape, api: str | None = None
) -> Response:
    replay = reg.get(request.path_params["rid"], provider)
    body = await read_json(request, reg.ctx, shape=provider)
    normalised: LlmRequest = (
        anthropic_request(body)
        if provider == "anthropic"
        else _responses_request(replay, body)
        if api == "openai-responses"
        else openai_request(body)
    )
    served = replay.answer(normalised, provider)
    if served == LIVE:
        if reg.live_handler is None:
            raise HttpError(502, "this server has no upstream to go live with", shape=provider)
        return await reg.live_handler(replay, provider, body, request)
    assert not isinstance(served, str)
    response = respond(api or provider, served.response, body)
    book = replay.book
    if book is not None:  # a fork's trace: written right after the answer is passed on

        async def write() -> None:
            try:
                book.record(
                    provider,
                    normalised,
                    served.response,
                    source=served.source,
                    matched=served.matched if served.source == "recorded" else None,
                    api=api,
                )
            except Exception as exc:  # the agent has its answer: say it, do not raise
                print(f"regista: a call could not be recorded: {exc}", file=sys.stderr)
            finally:
                book.finish()

        book.begin()
        response.background = BackgroundTask(write)
    return response


def respond(provider: str, response: Any, body: dict[str, Any]) -> Response:
    """The provider-shaped answer (JSON or SSE) of a normalised ``response``; ``provider``
    names the API (``anthropic``, ``openai``: chat completions, ``openai-responses``)."""
    stream = bool(body.get("stream"))
    if provider == "openai-responses":
        answer = responses_body(response, body)
        if stream:
            return StreamingResponse(responses_events(answer), media_type="text/event-stream")
        return JSONResponse(answer)
    if provider == "anthropic":
        message = anthropic_body(response)
        if stream:
            return StreamingResponse(anthropic_events(message), media_type="text/event-stream")
        return JSONResponse(message)
    completion = openai_body(response, str(body.get("model") or ""))
    if stream:
        options = body.get("stream_options") or {}
        include = bool(options.get("include_usage")) if isinstance(options, dict) else False
        return StreamingResponse(openai_chunks(completion, include), media_type="text/event-stream")
    return JSONResponse(completion)
