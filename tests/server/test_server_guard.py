"""The server's edges: what a web page, a slow client or a careless token cannot do.

Each test here failed before the guard existed (``docs/threat-model.md``).
"""

from __future__ import annotations

import logging
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest

from regista.errors import UserError
from regista.server import BackgroundServer, check_bind, create_app
from regista.server.protocol import LimitedHttpProtocol
from regista.server.runner import check_token, token_bits

TOKEN = "Zq7_x2Lr9VbK4mT1wYc8NpD3sHf6JgQe"  # 32 random URL-safe characters


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BackgroundServer]:
    store = tmp_path_factory.mktemp("store")
    with BackgroundServer(create_app(store)) as srv:
        yield srv


@pytest.fixture(scope="module")
def client(server: BackgroundServer) -> Iterator[httpx2.Client]:
    with httpx2.Client(base_url=server.url) as c:
        yield c


# -- Host (DNS rebinding) ----------------------------------------------------------------


def test_a_foreign_host_is_refused(server: BackgroundServer, client: httpx2.Client) -> None:
    """A rebinding page reads with ``Host: attacker.example``: it gets no listing."""
    r = client.get("/v1/runs", headers={"host": f"attacker.example:{server.port}"})
    assert r.status_code == 421
    assert "runs" not in r.json()
    assert "--allow-host" in r.json()["error"]["message"]


def test_the_bound_address_and_localhost_are_answered(
    server: BackgroundServer, client: httpx2.Client
) -> None:
    for host in (f"127.0.0.1:{server.port}", f"localhost:{server.port}", "localhost"):
        assert client.get("/v1/runs", headers={"host": host}).status_code == 200, host


def test_allow_host_names_are_answered(tmp_path: Path) -> None:
    app = create_app(tmp_path, allow_hosts=["regista.internal"])
    with BackgroundServer(app) as srv, httpx2.Client(base_url=srv.url) as c:
        assert c.get("/v1/runs", headers={"host": "regista.internal:80"}).status_code == 200
        assert c.get("/v1/runs", headers={"host": "other.internal"}).status_code == 421


# -- Origin (cross-origin pages) ---------------------------------------------------------


def test_a_cross_origin_request_is_refused(client: httpx2.Client) -> None:
    r = client.get("/v1/runs", headers={"origin": "https://evil.example"})
    assert r.status_code == 403 and "--cors" in r.json()["error"]["message"]
    r = client.post(
        "/v1/replays",
        content=b'{"trace": "x"}',
        headers={"origin": "null", "content-type": "application/json"},
    )
    assert r.status_code == 403


def test_cors_lets_one_origin_call(tmp_path: Path) -> None:
    app = create_app(tmp_path, cors=["https://app.example"])
    with BackgroundServer(app) as srv, httpx2.Client(base_url=srv.url) as c:
        r = c.get("/v1/runs", headers={"origin": "https://app.example"})
        assert r.status_code == 200
        assert r.headers["access-control-allow-origin"] == "https://app.example"
        pre = c.options(
            "/v1/replays",
            headers={
                "origin": "https://app.example",
                "access-control-request-method": "POST",
                "access-control-request-headers": "content-type",
            },
        )
        assert pre.status_code == 204
        assert pre.headers["access-control-allow-origin"] == "https://app.example"
        assert c.get("/v1/runs", headers={"origin": "https://b.example"}).status_code == 403


# -- bodies: only JSON declared as JSON (protobuf for OTLP) -------------------------------


@pytest.mark.parametrize("path", ["/v1/traces", "/v1/replays", "/v1/record/anthropic/v1/messages"])
@pytest.mark.parametrize(
    "kind", ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data", None]
)
def test_a_body_a_page_can_send_without_preflight_is_refused(
    client: httpx2.Client, path: str, kind: str | None
) -> None:
    headers = {"content-type": kind} if kind else {}
    r = client.post(path, content=b'{"resourceSpans": []}', headers=headers)
    assert r.status_code == 415, (path, kind, r.text)
    assert "application/json" in r.json()["error"]["message"]


def test_declared_bodies_pass(client: httpx2.Client) -> None:
    r = client.post("/v1/traces", json={"resourceSpans": []})
    assert r.status_code == 200
    proto = {"content-type": "application/x-protobuf"}
    assert client.post("/v1/traces", content=b"", headers=proto).status_code == 200
    r = client.post("/v1/replays", content=b"{}", headers=proto)
    assert r.status_code == 415  # protobuf is for OTLP only
    r = client.post(
        "/v1/replays", json={}, headers={"content-type": "application/json; charset=utf-8"}
    )
    assert r.status_code == 400  # declared right, refused for what it says


# -- tokens -------------------------------------------------------------------------------


@pytest.mark.parametrize("weak", [" ", "a", "s3cret", "a" * 64, "password123456", "0" * 40])
def test_weak_tokens_are_refused_in_one_line(weak: str) -> None:
    with pytest.raises(UserError) as info:
        check_bind("0.0.0.0", weak)
    assert "\n" not in str(info.value) and "128 bits" in str(info.value)
    with pytest.raises(UserError):
        create_app("unused", token=weak)


def test_strong_tokens_pass() -> None:
    import secrets

    for _ in range(20):
        check_token(secrets.token_hex(16))
        check_token(secrets.token_urlsafe(16))
    check_token(TOKEN)
    assert token_bits("ab" * 40) < 128


# -- slow and huge clients ----------------------------------------------------------------


def _raw(server: BackgroundServer, data: bytes) -> bytes:
    """Send ``data`` on a new connection; what the server answers until it closes."""
    with socket.create_connection((server.host, server.port), timeout=30) as sock:
        sock.sendall(data)
        out = b""
        while chunk := sock.recv(65536):
            out += chunk
        return out


def test_a_huge_header_is_431(server: BackgroundServer) -> None:
    big = b"GET /v1/health HTTP/1.1\r\nhost: 127.0.0.1\r\nx-big: " + b"a" * 100_000 + b"\r\n\r\n"
    try:
        answer = _raw(server, big)
    except ConnectionResetError:  # closed while we were still sending: refused all the same
        return
    assert answer.startswith(b"HTTP/1.1 431"), answer[:80]


def test_ten_thousand_headers_are_431(server: BackgroundServer) -> None:
    many = b"".join(b"x-h%d: 1\r\n" % i for i in range(10_000))
    request = b"GET /v1/health HTTP/1.1\r\nhost: 127.0.0.1\r\n" + many + b"\r\n"
    try:
        answer = _raw(server, request)
    except ConnectionResetError:
        return
    assert answer.startswith(b"HTTP/1.1 431"), answer[:80]


def test_a_slow_client_is_cut_off(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(LimitedHttpProtocol, "header_timeout", 0.3)
    with BackgroundServer(create_app(tmp_path)) as srv:
        started = time.monotonic()
        idle = _raw(srv, b"")  # connects and says nothing
        half = _raw(srv, b"GET /v1/health HTTP/1.1\r\nhost: 127.0.0.1\r\nx-a: ")
        assert time.monotonic() - started < 10
    assert idle.startswith(b"HTTP/1.1 408") and half.startswith(b"HTTP/1.1 408")


def test_a_keep_alive_connection_still_works(server: BackgroundServer) -> None:
    with httpx2.Client(base_url=server.url) as c:
        for _ in range(3):
            assert c.get("/v1/health").status_code == 200


# -- a client that hangs up mid-body ------------------------------------------------------


class _Kept(logging.Handler):
    """Keeps what uvicorn logs (its loggers do not propagate to pytest's)."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(self.format(record))


@pytest.mark.parametrize("path", ["/v1/replays", "/v1/traces", "/v1/record/anthropic/v1/messages"])
def test_a_hang_up_mid_body_prints_nothing(server: BackgroundServer, path: str) -> None:
    state = server._server.server_state
    kept = _Kept()
    logger = logging.getLogger("uvicorn.error")
    logger.addHandler(kept)
    head = (
        f"POST {path} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n"
        "content-length: 100000\r\n\r\n"
    ).encode()
    try:
        with socket.create_connection((server.host, server.port)) as sock:
            sock.sendall(head + b'{"a": ')
            _wait(lambda: len(state.tasks) > 0)
        _wait(lambda: len(state.tasks) == 0)
    finally:
        logger.removeHandler(kept)
    text = "\n".join(kept.lines)
    assert "Traceback" not in text and "Exception in ASGI" not in text, text
    assert not kept.lines, text


def _wait(cond: object, limit: float = 10.0) -> None:
    deadline = time.monotonic() + limit
    while not cond():  # type: ignore[operator]
        assert time.monotonic() < deadline, "the server did not get there"
        time.sleep(0.005)
