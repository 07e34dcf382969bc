"""Running the app: ``serve`` (foreground, ``regista serve``) and ``BackgroundServer``
(a thread on a free 127.0.0.1 port, for ``regista record|replay -- CMD`` and tests)."""

from __future__ import annotations

import asyncio
import ipaddress
import math
import socket
import threading
import zlib
from collections.abc import Callable
from typing import Any

import uvicorn

from regista.errors import RegistaError, UserError

__all__ = [
    "MIN_TOKEN_BITS",
    "BackgroundServer",
    "check_bind",
    "check_token",
    "is_loopback",
    "serve",
]


def is_loopback(host: str) -> bool:
    """Whether ``host`` only accepts connections from this machine."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


#: The least strength of a server token, in bits (what a guess must overcome).
MIN_TOKEN_BITS = 128

_HEX = frozenset("0123456789abcdefABCDEF")
_ALNUM_LOWER = frozenset("0123456789abcdefghijklmnopqrstuvwxyz")
_ALNUM_UPPER = frozenset("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ")
_BASE64 = frozenset(_ALNUM_LOWER | _ALNUM_UPPER | set("-_+/="))


def token_bits(token: str) -> float:
    """An estimate of ``token``'s strength in bits: its length times the bits of one
    character of the alphabet it looks drawn from (hex 4, lower-case letters and digits
    5.2, base64 6, printable ASCII 6.6), never more than its distinct characters or its
    compressed size allow (``"aaaa…"`` and ``"abab…"`` are weak however long). 32 hex
    digits, or ``secrets.token_urlsafe(16)``, make 128 bits."""
    chars = set(token)
    if len(chars) < 2:
        return 0.0
    if chars <= _HEX and (chars <= set("0123456789abcdef") or chars <= set("0123456789ABCDEF")):
        alphabet = 16
    elif chars <= _ALNUM_LOWER or chars <= _ALNUM_UPPER:
        alphabet = 36
    elif chars <= _BASE64:
        alphabet = 64
    else:
        alphabet = 95
    # a string of few distinct characters is a pattern, not a draw from the whole alphabet
    per_char = min(math.log2(alphabet), 2 * math.log2(len(chars)))
    # a repeated pattern compresses: count what is left of it (zlib adds 11 bytes of its own)
    squeezed = (len(zlib.compress(token.encode("utf-8", "replace"), 9)) - 11) * 8
    return min(len(token) * per_char, max(squeezed, 0))


def check_token(token: str | None) -> None:
    """Refuse a token a guess could find.

    Raises:
        UserError: ``token`` has fewer than :data:`MIN_TOKEN_BITS` bits.
    """
    if token is not None and token_bits(token) < MIN_TOKEN_BITS:
        raise UserError(
            f"the token is too weak (at least {MIN_TOKEN_BITS} bits: 32 hex digits or 22 "
            "random letters and digits); make one with: "
            "python -c 'import secrets; print(secrets.token_urlsafe(32))'"
        )


def check_bind(host: str, token: str | None) -> None:
    """Refuse to listen beyond this machine without a token, or with a weak one.

    Raises:
        UserError: ``host`` is not a loopback address and there is no token, or the token
            is weaker than :data:`MIN_TOKEN_BITS`.
    """
    if not is_loopback(host) and not token:
        raise UserError(
            f"refusing to listen on {host} without a token: anyone who can reach it could "
            "read every trace; pass --token (or REGISTA_TOKEN), or bind to 127.0.0.1"
        )
    check_token(token)


def _config(app: Any, host: str, port: int) -> uvicorn.Config:
    from regista.server.protocol import LimitedHttpProtocol

    return uvicorn.Config(
        app,
        host=host,
        port=port,
        http=LimitedHttpProtocol,
        log_level="warning",
        access_log=False,
        lifespan="off",
        timeout_graceful_shutdown=1,
    )


def listening_socket(host: str, port: int) -> socket.socket:
    """A bound TCP socket whose connections send small answers at once (``TCP_NODELAY``:
    without it a short JSON answer can wait 40 ms for the client's delayed ACK)."""
    family = socket.AF_INET6 if ":" in host.strip("[]") else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    try:
        sock.bind((host.strip("[]"), port))
    except OSError as exc:
        sock.close()
        raise UserError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    return sock


class _StoppingServer(uvicorn.Server):
    """Runs ``on_stop`` once connections are closed, before uvicorn re-raises the signal
    that stopped it (which ends the process without returning to the caller)."""

    def __init__(self, config: uvicorn.Config, on_stop: Callable[[], None] | None) -> None:
        super().__init__(config)
        self.on_stop = on_stop

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        await super().shutdown(sockets)
        if self.on_stop is not None:
            self.on_stop()


def serve(
    app: Any,
    host: str = "127.0.0.1",
    port: int = 8787,
    on_stop: Callable[[], None] | None = None,
    sock: socket.socket | None = None,
    stopper: Callable[[Callable[[], None]], None] | None = None,
) -> None:
    """Serve ``app`` in the foreground until interrupted; then call ``on_stop``. ``sock``:
    a :func:`listening_socket` already bound to ``host:port`` (the caller then knows the
    port is its own before it prepares anything else). ``stopper`` is given a function
    that stops the server as an interruption does (from any thread)."""
    sock = sock or listening_socket(host, port)
    server = _StoppingServer(_config(app, host, port), on_stop)
    if stopper is not None:
        stopper(lambda: setattr(server, "should_exit", True))
    try:
        server.run(sockets=[sock])
    except OSError as exc:
        raise UserError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    finally:
        sock.close()
    if not server.started:
        raise RegistaError(f"the server could not start on {host}:{port}")


class _Server(uvicorn.Server):
    def __init__(self, config: uvicorn.Config, ready: threading.Event) -> None:
        super().__init__(config)
        self.ready = ready

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        self.ready.set()

    def install_signal_handlers(self) -> None:  # the main thread keeps its own handlers
        return


class BackgroundServer:
    """Serves an app on a free port of 127.0.0.1 from a daemon thread.

    Usage::

        with BackgroundServer(create_app(store)) as server:
            server.url  # "http://127.0.0.1:PORT"
    """

    def __init__(self, app: Any, host: str = "127.0.0.1", port: int = 0) -> None:
        self.app = app
        self._sock = listening_socket(host, port)
        self.host, self.port = self._sock.getsockname()[:2]
        self._ready = threading.Event()
        self._server = _Server(_config(app, self.host, self.port), self._ready)
        self._thread = threading.Thread(target=self._run, name="regista-server", daemon=True)
        self._error: BaseException | None = None

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def _run(self) -> None:
        try:
            # uvloop when installed, as `regista serve` runs
            factory = self._server.config.get_loop_factory()
            with asyncio.Runner(loop_factory=factory) as runner:
                runner.run(self._server.serve(sockets=[self._sock]))
        except BaseException as exc:  # reported by start()
            self._error = exc
        finally:
            self._ready.set()

    def start(self) -> BackgroundServer:
        self._thread.start()
        self._ready.wait()
        if self._error is not None or not self._server.started:
            raise RegistaError(f"the server could not start: {self._error}")
        return self

    def stop(self) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=10)
        self._sock.close()

    def __enter__(self) -> BackgroundServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
