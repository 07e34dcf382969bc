"""What a web page must not be able to do to the server, checked before any route runs.

A server on 127.0.0.1 without a token is reachable by every program of this machine, and
by every web page its browser opens. A page cannot read another origin's answers, but it
can *send* requests, and a DNS-rebinding page (a name of the attacker's that resolves to
127.0.0.1) can read them too. :class:`Guard` refuses what only a browser sends:

- a ``Host`` that is not the address the connection came in on (``localhost`` too when it
  is a loopback address), nor a name given with ``--allow-host``: 421, the rebinding case;
- an ``Origin`` (every cross-origin ``fetch`` and form carries one) that is not given with
  ``--cors``: 403; with ``--cors ORIGIN`` that origin is answered with CORS headers and
  its preflights (``OPTIONS``) are answered;
- a body that is not declared as JSON (``application/json``; ``application/x-protobuf``
  too on the OTLP route): 415. ``text/plain``, forms and undeclared bodies are what a page
  can send without a preflight.

A client that hangs up before its body has arrived is let go without a word (it is gone:
there is no one to answer, and nothing for the server's log).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable

from starlette.requests import ClientDisconnect
from starlette.responses import JSONResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from regista.wire.errors import HttpError

__all__ = ["Guard", "host_name"]

#: The media types a body may be declared as, by route (``None``: every other route).
_JSON = frozenset({"application/json"})
_BODY_TYPES: dict[str | None, frozenset[str]] = {
    "/v1/traces": _JSON | {"application/x-protobuf"},
    None: _JSON,
}
_METHODS_WITH_BODY = frozenset({"POST", "PUT", "PATCH", "DELETE"})


def host_name(value: str) -> str:
    """The host of a ``Host`` header value, lower-cased, without its port or brackets."""
    value = value.strip().lower()
    if value.startswith("["):
        return value[1 : value.find("]")] if "]" in value else value[1:]
    if value.count(":") == 1:
        return value.split(":", 1)[0]
    return value  # a bare IPv6 address, or a name


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class Guard:
    """ASGI middleware: the checks of this module, then the app.

    Args:
        app: The app.
        allow_hosts: More names (or addresses) a ``Host`` may carry (``"*"``: any).
        cors: The origins that may call from a browser (``"*"``: any).
    """

    def __init__(
        self, app: ASGIApp, allow_hosts: Iterable[str] = (), cors: Iterable[str] = ()
    ) -> None:
        self.app = app
        self.allow_hosts = frozenset(host_name(h) for h in allow_hosts)
        self.any_host = "*" in self.allow_hosts
        self.cors = frozenset(o.strip().rstrip("/").lower() for o in cors)
        self.any_origin = "*" in self.cors

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = _headers(scope)
        refusal = self._refusal(scope, headers)
        origin = headers.get("origin")
        allowed_origin = origin if origin is not None and refusal is None else None
        if refusal is not None:
            await _answer(refusal, scope, receive, send)
            return
        if allowed_origin is not None and scope["method"] == "OPTIONS":
            await _preflight(allowed_origin, headers)(scope, receive, send)
            return
        if allowed_origin is not None:
            send = _with_cors(send, allowed_origin)
        try:
            await self.app(scope, receive, send)
        except ClientDisconnect:
            return  # the client is gone: no one to answer

    def _refusal(self, scope: Scope, headers: dict[str, str]) -> HttpError | None:
        host = host_name(headers.get("host", ""))
        if not self.any_host and not self._host_allowed(host, scope):
            return HttpError(
                421,
                f"this server does not answer for host {host!r}; give its address, "
                "or start it with --allow-host NAME",
                type="misdirected_request",
            )
        origin = headers.get("origin")
        if origin is not None and not (
            self.any_origin or origin.strip().rstrip("/").lower() in self.cors
        ):
            return HttpError(
                403,
                f"requests from web pages ({origin}) are refused; start the server with "
                "--cors ORIGIN to let that origin call it",
            )
        if scope["method"] in _METHODS_WITH_BODY and _has_body(headers):
            kind = headers.get("content-type", "").split(";")[0].strip().lower()
            allowed = _BODY_TYPES.get(scope["path"], _BODY_TYPES[None])
            if kind not in allowed:
                return HttpError(
                    415,
                    f"the body must be declared as {' or '.join(sorted(allowed))}, "
                    f"not {kind or 'nothing'}",
                    type="unsupported_media_type",
                )
        return None

    def _host_allowed(self, host: str, scope: Scope) -> bool:
        if host in self.allow_hosts:
            return True
        server = scope.get("server")
        bound = host_name(str(server[0])) if server else ""
        if host == bound:
            return True
        # a loopback connection may name itself by any loopback address, or as localhost
        return _is_loopback(bound) and _is_loopback(host)


def _headers(scope: Scope) -> dict[str, str]:
    """The request's headers (the first of each name), decoded as Latin-1."""
    out: dict[str, str] = {}
    for name, value in scope.get("headers", []):
        out.setdefault(name.decode("latin-1"), value.decode("latin-1"))
    return out


def _has_body(headers: dict[str, str]) -> bool:
    if "transfer-encoding" in headers:
        return True
    length = headers.get("content-length", "0").strip()
    return length != "0" and length != ""


async def _answer(error: HttpError, scope: Scope, receive: Receive, send: Send) -> None:
    response = JSONResponse(error.body(), status_code=error.status, headers=error.headers)
    response.headers["connection"] = "close"
    await response(scope, receive, send)


def _preflight(origin: str, headers: dict[str, str]) -> Response:
    return Response(
        status_code=204,
        headers={
            "access-control-allow-origin": origin,
            "access-control-allow-methods": "GET, POST, DELETE, OPTIONS",
            "access-control-allow-headers": headers.get(
                "access-control-request-headers", "content-type, authorization"
            ),
            "access-control-max-age": "600",
            "vary": "Origin",
        },
    )


def _with_cors(send: Send, origin: str) -> Send:
    async def sending(message: Message) -> None:
        if message["type"] == "http.response.start":
            extra = [
                (b"access-control-allow-origin", origin.encode("latin-1")),
                (b"vary", b"Origin"),
            ]
            message = {**message, "headers": [*message.get("headers", []), *extra]}
        await send(message)

    return sending
