"""``create_app``: the Starlette app behind ``regista serve``.

Adding routes: write a module with ``routes(ctx: ServerContext) -> list[BaseRoute]`` and
add its dotted name to :data:`ROUTE_MODULES`. Routes read bodies with
:func:`~regista.server.context.read_json` and raise
:class:`~regista.server.context.HttpError`; the app answers those as JSON (and anything
unexpected as a one-line 500), never with a traceback. The context is also on
``request.app.state.ctx``.

Authentication: with a token, every request must carry it as ``Authorization: Bearer
TOKEN``, ``x-api-key: TOKEN`` or ``x-regista-token: TOKEN`` (the first two are what the
Anthropic and OpenAI SDKs send as their API key, so an SDK pointed at a replay passes the
token as its key). Without one, the server must be bound to a loopback address
(:func:`~regista.server.runner.check_bind`). Every request first passes
:class:`~regista.server.guard.Guard` (Host, Origin, declared body type): see
``docs/threat-model.md``.
"""

from __future__ import annotations

import hmac
import importlib
from collections.abc import Sequence
from pathlib import Path

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route
from starlette.types import ASGIApp, Receive, Scope, Send

import regista.importers  # noqa: F401 - the runs a server reads may be other tools' sessions
from regista.diff.masks import MaskSet
from regista.server.context import DEFAULT_MAX_BODY, DEFAULT_REPLAY_TTL, ServerContext
from regista.server.guard import Guard
from regista.wire.errors import HttpError

__all__ = ["ROUTE_MODULES", "create_app"]

#: The modules whose ``routes(ctx)`` make up the app, in matching order.
ROUTE_MODULES: list[str] = [
    "regista.server.replays",
    "regista.server.record",
    "regista.server.live",
    "regista.server.runs",
    "regista.server.recall",
    "regista.server.otlp",
]


def create_app(
    store_dir: str | Path,
    token: str | None = None,
    *,
    max_body: int = DEFAULT_MAX_BODY,
    replay_ttl: float = DEFAULT_REPLAY_TTL,
    upstreams: dict[str, str] | None = None,
    session_idle: float | None = None,
    modules: Sequence[str] | None = None,
    extra_routes: Sequence[BaseRoute] = (),
    masks: MaskSet | None = None,
    allow_hosts: Sequence[str] = (),
    cors: Sequence[str] = (),
) -> Starlette:
    """The regista server app over the traces in ``store_dir``.

    Args:
        store_dir: The folder of traces (created on first write, not here).
        token: When set, every request must carry it.
        max_body: The largest request body accepted, in bytes (larger: 413).
        replay_ttl: Seconds a replay lives in memory.
        upstreams: The real providers' base URLs (``{"anthropic": …, "openai": …}``);
            default: the public APIs.
        session_idle: End a recorded session no call has continued for this many seconds
            (``None``: only when the recording stops; see :mod:`regista.server.lifecycle`).
        modules: The route modules to mount (default: :data:`ROUTE_MODULES`).
        extra_routes: More routes, mounted after the modules' (tests, embedding).
        masks: The volatile spans SDK replays ignore in a strict match (default: the
            built-in set; see :mod:`regista.diff.masks`).
        allow_hosts: Names a request's ``Host`` may carry besides the address it came in
            on (``"*"``: any; see :mod:`regista.server.guard`).
        cors: Origins that may call the server from a web page (``"*"``: any).

    Raises:
        UserError: The token is weaker than 128 bits.
    """
    from regista.server.runner import check_token

    check_token(token or None)
    ctx = ServerContext(
        store=Path(store_dir),
        token=token or None,
        max_body=max_body,
        replay_ttl=replay_ttl,
        upstreams=dict(upstreams or {}),
        session_idle=session_idle,
        masks=masks,
    )
    routes: list[BaseRoute] = [Route("/v1/health", _health, methods=["GET"])]
    for name in ROUTE_MODULES if modules is None else modules:
        routes.extend(importlib.import_module(name).routes(ctx))
    routes.extend(extra_routes)
    app = Starlette(
        routes=routes,
        exception_handlers={
            HttpError: _http_error,
            404: _not_found,
            405: _not_allowed,
            Exception: _unexpected,
        },
    )
    app.state.ctx = ctx
    if ctx.token:
        app.add_middleware(_TokenCheck, token=ctx.token)
    # outermost: a page's request is refused before anything else looks at it
    app.add_middleware(Guard, allow_hosts=allow_hosts, cors=cors)
    return app


async def _health(request: Request) -> Response:
    return JSONResponse({"ok": True})


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HttpError)
    return JSONResponse(exc.body(), status_code=exc.status, headers=exc.headers)


async def _not_found(request: Request, exc: Exception) -> Response:
    return await _http_error(request, HttpError(404, f"no route {request.url.path}"))


async def _not_allowed(request: Request, exc: Exception) -> Response:
    return await _http_error(
        request, HttpError(405, f"{request.method} is not allowed on {request.url.path}")
    )


async def _unexpected(request: Request, exc: Exception) -> Response:
    message = f"internal error: {type(exc).__name__}: {exc}".splitlines()[0][:500]
    return JSONResponse(HttpError(500, message).body(), status_code=500)


class _TokenCheck:
    """Refuses (401) every request that does not carry the server's token."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self.token = token.encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or self._carries_token(scope):
            await self.app(scope, receive, send)
            return
        error = HttpError(401, "this server needs its token (Authorization: Bearer TOKEN)")
        await JSONResponse(error.body(), status_code=401)(scope, receive, send)

    def _carries_token(self, scope: Scope) -> bool:
        headers: list[tuple[bytes, bytes]] = scope.get("headers", [])
        for name, value in headers:
            if name == b"authorization" and value[:7].lower() == b"bearer ":
                value = value[7:].strip()
            elif name not in (b"x-api-key", b"x-regista-token"):
                continue
            if hmac.compare_digest(value, self.token):
                return True
        return False
