"""regista's HTTP server: one Starlette app over a folder of traces.

``create_app(store_dir, token=...)`` builds the app; ``regista serve`` runs it with
uvicorn, and ``regista record|replay|fork -- CMD`` run the same app in-process. Route
groups live in their own modules, each with a ``routes(ctx)`` function, listed once in
:data:`regista.server.app.ROUTE_MODULES` (see that module for how to add one).

Starlette and uvicorn are imported only when a server is built, so ``import regista``
stays as fast as before.
"""

from __future__ import annotations

from regista.server.app import ROUTE_MODULES, create_app
from regista.server.context import ServerContext, read_json
from regista.server.runner import BackgroundServer, check_bind, serve
from regista.wire.errors import HttpError

__all__ = [
    "ROUTE_MODULES",
    "BackgroundServer",
    "HttpError",
    "ServerContext",
    "check_bind",
    "create_app",
    "read_json",
    "serve",
]
