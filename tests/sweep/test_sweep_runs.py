"""A sweep's forks are runs of the folder: ``regista runs`` (and ``--forks-of``, and the
TUI's run list) show them under their parent with no folder named, though each fork's
trace is in its sweep's folder (``.regista/sweeps/<id>/fork-K/``)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
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
