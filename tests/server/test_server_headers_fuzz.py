"""Seeded fuzz of the server's request line and headers: whatever arrives on the socket
(hosts, origins, content types, lengths, many or huge or broken headers, a hang-up), the
server answers with a status below 500 or closes the connection, never prints a traceback,
and still answers a plain request afterwards.

``REGISTA_FUZZ_SEED`` picks the seed and ``REGISTA_FUZZ_CASES`` the number of requests
(default 60)."""

from __future__ import annotations

import logging
import os
import random
import socket
import time
from collections.abc import Iterator

import httpx2
import pytest

from regista.server import BackgroundServer, create_app

SEED = int(os.environ.get("REGISTA_FUZZ_SEED", "2626"))
CASES = int(os.environ.get("REGISTA_FUZZ_CASES", "60"))

_PATHS = [
    "/v1/health", "/v1/runs", "/v1/replays", "/v1/traces", "/v1/recall?q=x", "/v1/diff?a=1&b=2",
    "/v1/record/anthropic/v1/messages", "/v1/runs/../../etc/passwd", "/%00", "/" + "a" * 3000,
]  # fmt: skip
_HOSTS = [
    "127.0.0.1", "localhost", "[::1]", "attacker.example", "127.0.0.1:1", "", "a" * 300,
    "127.0.0.1.nip.io", "LOCALHOST", "evil.example:80@127.0.0.1", "\u00e9",
]  # fmt: skip
_ORIGINS = ["null", "https://evil.example", "http://127.0.0.1", "", "file://"]
_TYPES = [
    "application/json", "text/plain", "application/x-www-form-urlencoded", "multipart/form-data",
    "application/x-protobuf", "application/json; charset=utf-8", "APPLICATION/JSON", "", ";",
]  # fmt: skip


def _request(rng: random.Random) -> bytes:
    method = rng.choice([b"GET", b"POST", b"OPTIONS", b"DELETE", b"PUT", b"BREW", b""])
    lines = [method + b" " + rng.choice(_PATHS).encode() + b" HTTP/1.1"]
    if rng.random() < 0.9:
        lines.append(b"host: " + rng.choice(_HOSTS).encode())
    if rng.random() < 0.4:
        lines.append(b"origin: " + rng.choice(_ORIGINS).encode())
    body = rng.choice([b"", b"{}", b'{"resourceSpans": []}', b"\xff\x00", b'{"run": "x"}'])
    if rng.random() < 0.6:
        lines.append(b"content-type: " + rng.choice(_TYPES).encode())
    length = rng.choice([len(body), len(body), 0, len(body) + 50, -1, 10**12])
    if rng.random() < 0.8:
        lines.append(b"content-length: %d" % length)
    else:
        lines.append(b"transfer-encoding: chunked")
        body = b"%x\r\n%s\r\n0\r\n\r\n" % (len(body), body)
    for _ in range(rng.choice([0, 0, 3, 300])):
        lines.append(
            b"x-%d: %s" % (rng.randrange(10**6), rng.randbytes(rng.randrange(20)).hex().encode())
        )
    if rng.random() < 0.1:
        lines.append(b"x-big: " + b"a" * rng.choice([20_000, 40_000]))
    if rng.random() < 0.1:
        lines.append(rng.randbytes(rng.randrange(1, 30)))  # a broken header line
    head = b"\r\n".join(lines) + b"\r\n\r\n"
    cut = rng.random() < 0.15  # the client hangs up partway
    data = head + body
    return data[: rng.randrange(len(data))] if cut else data


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BackgroundServer]:
    with BackgroundServer(create_app(tmp_path_factory.mktemp("store"))) as srv:
        yield srv


class _Kept(logging.Handler):
    """Keeps what uvicorn logs (its loggers do not propagate to pytest's)."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(self.format(record))


def test_fuzzed_request_heads(server: BackgroundServer) -> None:
    rng = random.Random(SEED)
    kept = _Kept()
    logging.getLogger("uvicorn.error").addHandler(kept)
    state = server._server.server_state
    for case in range(CASES):
        data = _request(rng)
        with socket.create_connection((server.host, server.port), timeout=20) as sock:
            try:
                sock.sendall(data)
                sock.shutdown(socket.SHUT_WR)
                answer = sock.recv(64)
            except OSError:
                answer = b""  # closed by the server while we sent: refused
        if answer:
            assert answer.startswith(b"HTTP/1.1 "), (case, data[:200], answer)
            status = int(answer[9:12])
            assert status < 500, (case, data[:300], answer)
    deadline = time.monotonic() + 20
    while state.tasks and time.monotonic() < deadline:
        time.sleep(0.01)
    logging.getLogger("uvicorn.error").removeHandler(kept)
    text = "\n".join(kept.lines)
    assert "Traceback" not in text and "Exception in ASGI" not in text, text
    with httpx2.Client(base_url=server.url) as c:
        assert c.get("/v1/health").status_code == 200
