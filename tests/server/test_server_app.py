"""The server skeleton: app factory, token, bind rule, store paths and bad requests."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

import httpx2
import pytest
from fresh import fresh_python
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from regista.cli.main import main
from regista.errors import UserError
from regista.server import BackgroundServer, HttpError, check_bind, create_app, read_json

STRONG = "4f9c2a7e1b8d3f60a5c9e2d7b1f4a8c3"  # 128 bits of hex


async def _echo(request: Request) -> Response:
    body = await read_json(request, request.app.state.ctx)
    return JSONResponse({"got": body})


async def _run(request: Request) -> Response:
    path = request.app.state.ctx.run_path(request.path_params["run_id"])
    return JSONResponse({"path": str(path)})


def _app(store: Path, token: str | None = None) -> object:
    return create_app(
        store,
        token=token,
        max_body=1000,
        extra_routes=[
            Route("/echo", _echo, methods=["POST"]),
            Route("/runs/{run_id:path}", _run, methods=["GET"]),
        ],
    )


def test_health_and_json_errors(tmp_path: Path) -> None:
    with BackgroundServer(_app(tmp_path)) as server, httpx2.Client(base_url=server.url) as c:
        assert c.get("/v1/health").json() == {"ok": True}
        assert c.post("/echo", json={"a": 1}).json() == {"got": {"a": 1}}
        json_type = {"content-type": "application/json"}
        bad = c.post("/echo", content=b"{not json", headers=json_type)
        assert bad.status_code == 400
        assert bad.json()["error"]["type"] == "invalid_request_error"
        assert "not valid JSON" in bad.json()["error"]["message"]
        assert c.post("/echo", content=b"[1]", headers=json_type).status_code == 400
        big = c.post("/echo", content=b'{"a": "' + b"x" * 2000 + b'"}', headers=json_type)
        assert big.status_code == 413
        assert "Traceback" not in big.text
        missing = c.get("/nowhere")
        assert missing.status_code == 404 and missing.json()["error"]["type"] == "not_found_error"
        assert c.delete("/v1/health").status_code == 405


def test_oversized_chunked_body_is_413(tmp_path: Path) -> None:
    def chunks() -> object:
        for _ in range(20):
            yield b"x" * 100

    with BackgroundServer(_app(tmp_path)) as server, httpx2.Client(base_url=server.url) as c:
        r = c.post(
            "/echo",
            content=chunks(),  # type: ignore[arg-type]
            headers={"content-type": "application/json"},
        )
        assert r.status_code == 413


def test_run_ids_resolve_only_inside_the_store(tmp_path: Path) -> None:
    store = tmp_path / "store"
    store.mkdir()
    (store / "01ABC.jsonl").write_text("{}\n")
    (tmp_path / "secret.jsonl").write_text("{}\n")
    with BackgroundServer(_app(store)) as server, httpx2.Client(base_url=server.url) as c:
        assert c.get("/runs/01ABC").status_code == 200
        for bad in ("../secret", "..%2Fsecret", "%2E%2E/secret", "/etc/passwd", "nope", "a/../b"):
            r = c.get(f"/runs/{bad}")
            assert r.status_code == 404, bad
            assert "Traceback" not in r.text


def test_token_is_required_on_every_route(tmp_path: Path) -> None:
    app = _app(tmp_path, token=STRONG)
    with BackgroundServer(app) as server, httpx2.Client(base_url=server.url) as c:
        assert c.get("/v1/health").status_code == 401
        assert c.get("/v1/health", headers={"authorization": "Bearer nope"}).status_code == 401
        for headers in (
            {"authorization": f"Bearer {STRONG}"},
            {"x-api-key": STRONG},
            {"x-regista-token": STRONG},
        ):
            assert c.get("/v1/health", headers=headers).status_code == 200


def test_non_loopback_host_needs_a_token() -> None:
    check_bind("127.0.0.1", None)
    check_bind("::1", None)
    check_bind("localhost", None)
    check_bind("0.0.0.0", STRONG)
    with pytest.raises(UserError, match="without a token"):
        check_bind("0.0.0.0", None)
    with pytest.raises(UserError):
        check_bind("192.168.1.4", "")


def test_cli_serve_refuses_public_host_without_token(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("REGISTA_TOKEN", raising=False)
    code = main(["serve", "--host", "0.0.0.0", "--store", str(tmp_path)])
    assert code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "without a token" in err


def test_error_shapes() -> None:
    assert HttpError(400, "m", shape="anthropic").body() == {
        "type": "error",
        "error": {"type": "invalid_request_error", "message": "m"},
    }
    body = HttpError(404, "m", shape="openai").body()
    assert body["error"]["type"] == "not_found_error" and body["error"]["param"] is None


def test_import_regista_does_not_import_the_server() -> None:
    code = (
        "import sys, regista, regista.cli.main as m; m.build_parser();"
        "print([x for x in ('starlette', 'uvicorn', 'regista.server') if x in sys.modules])"
    )
    out = fresh_python(code)
    assert out.strip() == "[]"


def test_cli_serve_port_out_of_range_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for port in ("99999", "-1"):
        assert main(["serve", "--port", port, "--store", str(tmp_path)]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "--port must be" in err


def test_cli_serve_prints_an_ipv6_address_as_a_url(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import regista.server

    bound: list[tuple[str, int]] = []
    monkeypatch.setattr(regista.server, "serve", lambda app, h, p, **kw: bound.append((h, p)))
    assert main(["serve", "--host", "::1", "--port", "8799", "--store", str(tmp_path)]) == 0
    assert bound == [("::1", 8799)]
    assert f"serving {tmp_path} on http://[::1]:8799" in capsys.readouterr().err


def test_cli_serve_sets_how_long_replays_live(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import regista.server

    ttls: list[float] = []
    monkeypatch.setattr(
        regista.server, "serve", lambda app, h, p, **kw: ttls.append(app.state.ctx.replay_ttl)
    )
    assert main(["serve", "--replay-ttl", "90", "--store", str(tmp_path)]) == 0
    assert main(["serve", "--store", str(tmp_path)]) == 0
    assert ttls == [90.0, 3600.0]
    capsys.readouterr()
    for bad in ("0", "-5", "100000", "nan"):
        assert main(["serve", "--replay-ttl", bad, "--store", str(tmp_path)]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "--replay-ttl must be" in err


def test_cli_serve_says_what_is_wrong_with_the_store(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    afile = tmp_path / "a.jsonl"
    afile.write_text("{}\n")
    assert main(["serve", "--store", str(afile)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "is a file, not a folder of traces" in err
    inside = afile / "traces"  # a folder that cannot be made
    assert main(["serve", "--store", str(inside)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "cannot use it" in err


def test_cli_serve_makes_a_missing_store_and_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import regista.server

    served: list[Any] = []
    monkeypatch.setattr(regista.server, "serve", lambda app, *a, **k: served.append(app))
    store = tmp_path / "new" / "traces"
    port = ["--port", str(_free_port())]
    assert main(["serve", "--store", str(store), *port]) == 0
    assert store.is_dir() and served
    assert "(a new, empty folder)" in capsys.readouterr().err
    assert main(["serve", "--store", str(store), *port]) == 0  # there now: nothing to say
    assert "empty folder" not in capsys.readouterr().err


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_cli_serve_on_a_busy_port_says_so_and_makes_no_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = tmp_path / "new" / "traces"
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = str(busy.getsockname()[1])
        assert main(["serve", "--store", str(store), "--port", port]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"cannot listen on 127.0.0.1:{port}" in err
    assert not (tmp_path / "new").exists()
