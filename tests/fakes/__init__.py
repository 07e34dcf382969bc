"""Fake servers on 127.0.0.1 for the tests: the Anthropic Messages API, OpenAI chat completions
and Responses, and an OTLP receiver."""

from __future__ import annotations

import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self


class QuietHTTPServer(ThreadingHTTPServer):
    """A threading HTTP server that prints no traceback when a client goes away mid-answer
    (tests cut connections on purpose); other handler errors still print."""

    daemon_threads = True

    def handle_error(self, request: object, client_address: object) -> None:
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)  # type: ignore[arg-type]


class FakeServer:
    """The life of a fake API on an ephemeral port of 127.0.0.1: started, served from a
    thread, stopped. A fake names its request handler (:meth:`handler`), what its ``url``
    adds after the port (:attr:`url_path`) and how it is called in errors (:attr:`name`)."""

    name = "fake"
    url_path = ""

    def __init__(self) -> None:
        self._httpd: QuietHTTPServer | None = None
        self._thread: threading.Thread | None = None

    def handler(self) -> type[BaseHTTPRequestHandler]:
        raise NotImplementedError

    def handler_attrs(self) -> dict[str, Any]:
        """Class attributes of the handler made for this server (``fake`` is the server)."""
        return {"fake": self}

    def start(self) -> Self:
        handler = type("_Handler", (self.handler(),), self.handler_attrs())
        self._httpd = QuietHTTPServer(("127.0.0.1", 0), handler)
        # A short poll interval keeps ``stop()`` (which waits for the next poll) fast.
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.02},
            name=self.name,
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def url(self) -> str:
        """The base URL to give the SDK."""
        if self._httpd is None:
            raise RuntimeError(f"the {self.name} server is not running")
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}{self.url_path}"
