"""A sweep's forks are runs of the folder: ``regista runs`` (and ``--forks-of``, and the
TUI's run list) show them under their parent with no folder named, though each fork's
trace is in its sweep's folder (``.regista/sweeps/<id>/fork-K/``)."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest
from mcp_results import is_error, payload, stdio
from sweeps import LOOP, RESULTS

from regista.cli.main import main
from regista.store.runs import list_runs
from regista.sweep import load_sweep
from regista.trace.reader import Trace


@pytest.fixture(scope="module")
def swept(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A project folder whose recorded search loop was swept at its first search (two
    variants, in the default sweep folder), and a later run of its own."""
    folder = tmp_path_factory.mktemp("project")
    traces = folder / ".regista" / "traces"
    traces.mkdir(parents=True)
    shutil.copy(LOOP, traces / LOOP.name)
    with pytest.MonkeyPatch.context() as mp:
        mp.delenv("REGISTA_SAMPLE_DB", raising=False)
        mp.chdir(folder)
        argv = ["sweep", str(traces / LOOP.name), "--at", "1", "-j", "2", "--json"]
        for result in RESULTS[:2]:
            argv += ["--tool-result", result]
        assert main(argv) == 0
    return folder


def _fork_ids(folder: Path) -> list[str]:
    (sweep_dir,) = (folder / ".regista" / "sweeps").iterdir()
    sweep = load_sweep(sweep_dir)
    assert [f.status for f in sweep.forks] == ["done", "done"]
    return [Trace.load(sweep.fork_trace(f)).session_id for f in sweep.forks]


def test_runs_lists_a_sweeps_forks_under_their_parent(
    swept: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(swept)
    parent = Trace.load(LOOP).session_id
    forks = _fork_ids(swept)
    capsys.readouterr()
    assert main(["runs", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    # the parent first: its family holds the newest runs (the forks), under it
    assert rows[0]["session_id"] == parent
    assert {r["session_id"] for r in rows[1:]} == set(forks)
    assert all(r["kind"] == "fork" and r["parent_id"] == parent for r in rows[1:])
    assert all(r["link"] == f"fork of {parent} at step 1" for r in rows[1:])
    assert all(r["parent_outcome"] == "max_turns" for r in rows[1:])
    # the table: the parent's row, then each fork's row with its link under it
    assert main(["runs"]) == 0
    lines = capsys.readouterr().out.splitlines()
    ids = [line.split()[0] for line in lines[1:] if not line.startswith(" ")]
    assert ids[0] == parent and set(ids[1:]) == set(forks)
    assert sum(f"↳ fork of {parent} at step 1 (parent: max_turns" in line for line in lines) == 2


def test_forks_of_the_parent_and_the_tui_list_show_them(
    swept: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from regista_tui.screens.runs import tree_order

    monkeypatch.chdir(swept)
    parent = Trace.load(LOOP).session_id
    forks = _fork_ids(swept)
    capsys.readouterr()
    assert main(["runs", "--json", "--forks-of", parent[:12]]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert rows[0]["session_id"] == parent
    assert {r["session_id"] for r in rows[1:]} == set(forks)
    # the TUI's run list reads the same listing: the forks one level under the parent
    tree = [(run.session_id, depth) for run, depth in tree_order(list_runs().runs)]
    assert tree[0] == (parent, 0)
    assert sorted(tree[1:]) == sorted((f, 1) for f in forks)


def test_a_working_copy_in_a_verified_fork_is_not_listed(
    swept: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only the fork's own traces are runs: not the copy of the working folder a verify
    command runs in (which may hold any .jsonl file)."""
    monkeypatch.chdir(swept)
    (sweep_dir,) = (swept / ".regista" / "sweeps").iterdir()
    work = sweep_dir / "fork-1" / "work"
    work.mkdir()
    (work / "data.jsonl").write_text('{"not": "a run"}\n')
    try:
        listing = list_runs()
        assert len(listing.runs) == 3 and not listing.skipped
    finally:
        shutil.rmtree(work)


def test_recall_searches_a_sweeps_forks(
    swept: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``regista recall`` covers the runs ``regista runs`` lists: the forks too, with no
    folder named and with the project's traces folder named."""
    monkeypatch.chdir(swept)
    parent = Trace.load(LOOP).session_id
    everyone = {parent, *_fork_ids(swept)}
    capsys.readouterr()
    for argv in (
        ["recall", "Trailblazer", "--json"],
        ["recall", "Trailblazer", "--json", "-d", ".regista/traces"],
    ):
        assert main(argv) == 0
        hits = json.loads(capsys.readouterr().out)
        assert {h["session_id"] for h in hits} == everyone
    # the copy of the working folder a verified fork runs in is not searched
    (sweep_dir,) = (swept / ".regista" / "sweeps").iterdir()
    work = sweep_dir / "fork-1" / "work"
    work.mkdir()
    shutil.copy(LOOP, work / "copied.jsonl")
    try:
        assert main(["recall", "Trailblazer", "--json"]) == 0
        hits = json.loads(capsys.readouterr().out)
        assert all("work" not in Path(h["path"]).parts for h in hits)
        assert {h["session_id"] for h in hits} == everyone
    finally:
        shutil.rmtree(work)


def test_the_traces_folder_named_lists_what_runs_lists(
    swept: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``.regista/traces`` by name (as ``regista mcp`` is registered) is the project's runs:
    the same listing as no folder named, relative or absolute."""
    monkeypatch.chdir(swept)
    default = [r.path.resolve() for r in list_runs().runs]
    assert len(default) == 3
    for named in (".regista/traces", swept / ".regista" / "traces"):
        assert [r.path.resolve() for r in list_runs(named).runs] == default


async def test_mcp_lists_reads_and_recalls_a_sweeps_forks(swept: Path) -> None:
    """``regista mcp .regista/traces`` (driven by the ``mcp`` SDK's own client over stdio)
    lists the runs ``regista runs`` lists there, the sweep's forks under their parent, and
    reads and recalls them; a file elsewhere in the sweep is still refused."""
    from mcp import ClientSession, StdioServerParameters

    import regista

    root = Path(regista.__file__).resolve().parents[1]
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "regista", "mcp", str(swept / ".regista" / "traces")],
        cwd=str(root),
    )
    parent = Trace.load(LOOP).session_id
    forks = _fork_ids(swept)
    (sweep_dir,) = (swept / ".regista" / "sweeps").iterdir()
    fork_trace = load_sweep(sweep_dir).fork_trace(load_sweep(sweep_dir).forks[0])
    async with stdio(params) as streams, ClientSession(*streams) as session:
        await session.initialize()
        runs = payload(await session.call_tool("list_runs", {}))
        assert {r["session_id"] for r in runs} == {parent, *forks}
        mine = payload(await session.call_tool("list_runs", {"forks_of": parent[:12]}))
        assert {r["session_id"] for r in mine} == {parent, *forks}
        assert all(
            r["link"] == f"fork of {parent} at step 1" for r in mine if r["session_id"] in forks
        )
        by_id = payload(await session.call_tool("run_summary", {"run": forks[0]}))
        assert by_id["forked_from"]["session_id"] == parent
        by_path = payload(await session.call_tool("run_summary", {"run": str(fork_trace)}))
        assert by_path["session_id"] == Trace.load(fork_trace).session_id
        diff = payload(await session.call_tool("diff_runs", {"run_a": parent, "run_b": forks[1]}))
        assert diff["first_divergence"]["a_step"] == 1
        hits = payload(await session.call_tool("recall", {"words": "Trailblazer"}))
        assert {h["session_id"] for h in hits} == {parent, *forks}
        # the sweep's own file is no run of the folder: refused, as any file outside it
        refused = await session.call_tool("run_summary", {"run": str(sweep_dir / "sweep.json")})
        assert is_error(refused)
        # nor is a trace in the copy of the working folder a verified fork runs in
        work = sweep_dir / "fork-1" / "work"
        work.mkdir()
        shutil.copy(LOOP, work / "copied.jsonl")
        try:
            refused = await session.call_tool("run_summary", {"run": str(work / "copied.jsonl")})
            assert is_error(refused) and "not in the traces folder" in refused.content[0].text
        finally:
            shutil.rmtree(work)


def test_the_server_over_the_projects_traces_lists_and_serves_the_forks(swept: Path) -> None:
    """``regista serve`` over ``.regista/traces``: ``/v1/runs`` lists the sweep's forks (the
    same listing), and each link it gives answers (the run, its diff with its parent); a
    word they share is recalled in each."""
    parent = Trace.load(LOOP).session_id
    forks = _fork_ids(swept)
    # the server names a run by its file (``<id>.jsonl``): the parent as the proxy writes it
    traces = swept / ".regista" / "traces"
    (traces / LOOP.name).rename(traces / f"{parent}.jsonl")
    try:
        _serve_the_project(swept, parent, forks)
    finally:
        (traces / f"{parent}.jsonl").rename(traces / LOOP.name)


def _serve_the_project(swept: Path, parent: str, forks: list[str]) -> None:
    import httpx2

    from regista.server import BackgroundServer, create_app

    app = create_app(swept / ".regista" / "traces", upstreams={"anthropic": "http://127.0.0.1:9"})
    with BackgroundServer(app) as server, httpx2.Client(base_url=server.url) as http:
        runs = {r["id"]: r for r in http.get("/v1/runs").json()["runs"]}
        assert set(runs) == {parent, *forks}
        for fork in forks:
            links = runs[fork]["links"]
            got = http.get(links["self"])
            assert got.status_code == 200 and got.json()["forked_from"]["session_id"] == parent
            diff = http.get(links["diff_with_parent"])
            assert diff.status_code == 200 and diff.json()["first_divergence"]["a_step"] == 1
        hits = http.get("/v1/recall", params={"q": "Trailblazer"}).json()["runs"]
        assert {h["id"] for h in hits} == {parent, *forks}
        # an id is still a plain name: no path leads into the sweep's folder
        sweep = next((swept / ".regista" / "sweeps").iterdir()).name
        assert http.get(f"/v1/runs/..%2Fsweeps%2F{sweep}%2Fsweep").status_code == 404
