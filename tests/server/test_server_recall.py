"""``GET /v1/recall``: the recall index over the server's store, answered as JSON."""

from __future__ import annotations

from pathlib import Path

import pytest
from library import build_library
from sdk_agents import regista_server

from regista.trace.reader import Trace


@pytest.fixture
async def store(tmp_path: Path) -> Path:
    lib = await build_library(tmp_path / "traces")
    return lib.folder


def test_recall_over_http(store: Path) -> None:
    failed = next(p for p in store.glob("*.jsonl") if "database" in p.read_text())
    with regista_server(store) as server:
        r = server.http.get("/v1/recall", params={"q": "database"})
        assert r.status_code == 200
        runs = r.json()["runs"]
        assert [h["id"] for h in runs] == [Trace.load(failed).session_id]
        assert "path" not in runs[0] and runs[0]["skeleton"] == ["flaky!", "flaky!"]
        assert runs[0]["matches"]
        assert server.http.get("/v1/recall", params={"q": "picnic", "limit": "2"}).json()["runs"][
            0
        ]["ok"]
        assert server.http.get("/v1/recall", params={"q": "  "}).status_code == 400
        assert server.http.get("/v1/recall").status_code == 400
        assert server.http.get("/v1/recall", params={"q": "x", "limit": "0"}).status_code == 400
        bad = server.http.get("/v1/recall", params={"q": "x", "limit": "lots"})
        assert bad.status_code == 400 and "limit" in bad.text


def test_recall_over_an_empty_store(tmp_path: Path) -> None:
    with regista_server(tmp_path / "none") as server:
        assert server.http.get("/v1/recall", params={"q": "x"}).json() == {"runs": []}
