"""Fake servers on 127.0.0.1 for the tests: the Anthropic Messages API, OpenAI chat completions
and Responses, and an OTLP receiver."""

from __future__ import annotations

import sys
from http.server import ThreadingHTTPServer


class QuietHTTPServer(ThreadingHTTPServer):
    """A threading HTTP server that prints no traceback when a client goes away mid-answer
    (tests cut connections on purpose); other handler errors still print."""

    daemon_threads = True

    def handle_error(self, request: object, client_address: object) -> None:
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)  # type: ignore[arg-type]
