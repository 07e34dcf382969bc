"""The HTTP connection of ``regista serve``: uvicorn's C parser, with limits on headers.

uvicorn's ``httptools`` protocol takes a request's headers for as long as a client takes
to send them, and as many as it sends. :class:`LimitedHttpProtocol` adds what Node and Go
servers have:

- a connection must finish a request's headers within :data:`HEADER_TIMEOUT` seconds of
  its first byte (or of connecting): else 408 and the connection is closed, so slow
  clients cannot hold connections open;
- the request line and headers together may take :data:`MAX_HEADER_BYTES`, and there may
  be :data:`MAX_HEADERS` of them: else 431 and the connection is closed.

Bodies are limited by the routes (``max_body``).
"""

from __future__ import annotations

import asyncio
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

__all__ = ["HEADER_TIMEOUT", "MAX_HEADERS", "MAX_HEADER_BYTES", "LimitedHttpProtocol"]

#: Seconds a client has to send a request's line and headers.
HEADER_TIMEOUT = 10.0
#: The largest request line and headers, in bytes (Node's default is 16 KiB).
MAX_HEADER_BYTES = 32 * 1024
#: The most header fields in a request.
MAX_HEADERS = 200

_REASONS = {408: b"Request Timeout", 431: b"Request Header Fields Too Large"}


class _Refused(Exception):
    """Raised from a parser callback to stop parsing a request that broke a limit."""


class LimitedHttpProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol with a header timeout and header limits."""

    header_timeout = HEADER_TIMEOUT
    max_header_bytes = MAX_HEADER_BYTES
    max_headers = MAX_HEADERS

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._in_headers = True
        self._header_bytes = 0
        self._header_count = 0
        self._header_timer: asyncio.TimerHandle | None = None
        #: The request line's and the headers' bytes, as parsed (one chunk can hold them all).
        self._parsed_bytes = 0
        self._too_large = False

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._start_header_timer()

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop_header_timer()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self._in_headers:
            self._header_bytes += len(data)
        try:
            super().data_received(data)
        except _Refused:  # pragma: no cover - httptools wraps it; kept for other parsers
            self._refuse(431)
            return
        if self._in_headers and self._header_bytes > self.max_header_bytes:
            self._refuse(431)

    def send_400_response(self, msg: str) -> None:
        # a limit broken inside a parser callback reaches uvicorn as a parser error
        if self._too_large:
            self._refuse(431)
            return
        super().send_400_response(msg)

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._in_headers = True
        self._header_count = 0
        self._parsed_bytes = 0
        self._too_large = False
        if self._header_timer is None:
            self._start_header_timer()

    def on_url(self, url: bytes) -> None:
        self._parsed_bytes += len(url)
        super().on_url(url)

    def on_header(self, name: bytes, value: bytes) -> None:
        self._header_count += 1
        self._parsed_bytes += len(name) + len(value) + 4
        if self._header_count > self.max_headers or self._parsed_bytes > self.max_header_bytes:
            self._too_large = True
            raise _Refused
        super().on_header(name, value)

    def on_headers_complete(self) -> None:
        self._in_headers = False
        self._header_bytes = 0
        self._stop_header_timer()
        super().on_headers_complete()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._in_headers = True
        self._header_bytes = 0

    def _start_header_timer(self) -> None:
        self._header_timer = self.loop.call_later(self.header_timeout, self._headers_late)

    def _stop_header_timer(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _headers_late(self) -> None:
        self._header_timer = None
        if self._in_headers and not self.transport.is_closing():
            self._refuse(408)

    def _refuse(self, status: int) -> None:
        if self.transport.is_closing():
            return
        self._stop_header_timer()
        reason = _REASONS[status]
        body = reason.lower()
        self.transport.write(
            b"HTTP/1.1 %d %s\r\ncontent-type: text/plain; charset=utf-8\r\n"
            b"content-length: %d\r\nconnection: close\r\n\r\n%s" % (status, reason, len(body), body)
        )
        self.transport.close()
