"""No reader of a traces folder shows a file outside it, symlinks included: the server,
``regista runs``, recall, MCP and the TUI's run list agree (``regista.store.paths``)."""

from __future__ import annotations

import shutil
from pathlib import Path

import httpx2
import orjson
import pytest

from regista.cli.main import main
from regista.server import BackgroundServer, create_app
from regista.store.mcp_server import RunsTools
from regista.store.paths import OutsideStore, store_path
from regista.store.recall import recall
from regista.store.runs import list_runs

SAMPLES = Path(__file__).resolve().parents[2] / "sample_traces"
INSIDE = "refund_happy.jsonl"
OUTSIDE = "refund_denied_compaction.jsonl"


def _sid(path: Path) -> str:
    return str(orjson.loads(path.read_bytes().split(b"\n", 1)[0])["session_id"])


@pytest.fixture()
def store(tmp_path: Path) -> Path:
    """A store with one run of its own, a link to it, and a link to a trace outside it."""
    store = tmp_path / "store"
    store.mkdir()
    shutil.copy(SAMPLES / INSIDE, store / INSIDE)
    secret = tmp_path / "private"
    secret.mkdir()
    shutil.copy(SAMPLES / OUTSIDE, secret / OUTSIDE)
    (store / f"{_sid(secret / OUTSIDE)}.jsonl").symlink_to(secret / OUTSIDE)
    (store / "sub").mkdir()
    (store / "sub" / "again.jsonl").symlink_to(store / INSIDE)  # a link inside: fine
    (store / "linked-dir").symlink_to(secret, target_is_directory=True)
    return store


def _outside_id(store: Path) -> str:
    return _sid(store.parent / "private" / OUTSIDE)


def test_store_path_refuses_what_leaves(store: Path) -> None:
    assert store_path(store, INSIDE) == (store / INSIDE).resolve()
    assert store_path(store, "sub/again.jsonl") == (store / INSIDE).resolve()
    for bad in (f"{_outside_id(store)}.jsonl", "../private/" + OUTSIDE, "/etc/passwd"):
        with pytest.raises(OutsideStore):
            store_path(store, bad)


def test_the_run_list_skips_a_link_out(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ids = {r.session_id for r in list_runs(store).runs}
    assert _outside_id(store) not in ids and _sid(store / INSIDE) in ids
    assert main(["runs", str(store), "--json"]) == 0
    assert _outside_id(store) not in capsys.readouterr().out


def test_the_server_agrees_with_itself(store: Path) -> None:
    with BackgroundServer(create_app(store)) as server, httpx2.Client(base_url=server.url) as c:
        listed = {r["id"] for r in c.get("/v1/runs").json()["runs"]}
        assert _outside_id(store) not in listed
        assert c.get(f"/v1/runs/{_outside_id(store)}").status_code == 404
        assert c.get(f"/v1/runs/{_sid(store / INSIDE)}").status_code in (200, 404)
        assert "okafor" not in c.get("/v1/recall", params={"q": "Okafor"}).text.lower()


def test_recall_and_mcp_skip_a_link_out(store: Path) -> None:
    outside = _outside_id(store)
    words = "Okafor"  # only in the trace outside
    assert recall(words, store) == []
    tools = RunsTools(store)
    assert outside not in str(tools.list_runs())
    assert tools.recall(words) == []
    with pytest.raises(Exception, match=r"no single run|not in the traces folder"):
        tools.run_summary(outside)
    with pytest.raises(Exception, match="not in the traces folder"):
        tools.run_summary(str(store / f"{outside}.jsonl"))


def test_the_tui_run_list_skips_a_link_out(store: Path) -> None:
    from regista_tui.__main__ import _parser, _runs_app

    args = _parser().parse_args([str(store)])
    args.command = None  # set by main() from what follows ``--``
    app = _runs_app(args)
    assert _outside_id(store) not in {r.session_id for r in app.runs.runs}
