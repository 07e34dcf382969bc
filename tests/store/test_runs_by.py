"""``regista runs --by project|day|model`` over a library, and loops in ``runs --json``."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from importers.cc_fixtures import basic_session

from regista.cli.main import main
from regista.importers import convert_file, write_runs
from regista.store.runs import list_runs
from regista.tokens import Tokens

SAMPLES = Path(__file__).parents[2] / "sample_traces"


@pytest.fixture
def library(tmp_path: Path) -> Path:
    traces = tmp_path / "app" / ".regista" / "traces"
    traces.mkdir(parents=True)
    for sample in SAMPLES.glob("*.jsonl"):
        shutil.copy(sample, traces / sample.name)
    conv = convert_file(basic_session().write(tmp_path / "session.jsonl"))
    assert conv is not None
    write_runs(conv, traces)
    return traces


def test_the_groups_add_up_to_the_runs(
    library: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    runs = list_runs(library).runs
    assert len(runs) == 4
    for by in ("project", "day", "model"):
        assert main(["runs", str(library), "--by", by, "--json"]) == 0
        data = json.loads(capsys.readouterr().out)
        tokens = sum((r.tokens for r in runs), Tokens())
        assert sum(g["tokens"]["total"] for g in data["groups"]) == tokens.total
        assert data["total"]["tokens"]["total"] == tokens.total
        assert sum(g["runs"] for g in data["groups"]) == 4
        cost = sum(r.cost_usd or 0 for r in runs)
        assert sum(g["cost_usd"] or 0 for g in data["groups"]) == pytest.approx(cost, abs=1e-5)
    assert main(["runs", str(library), "--by", "project", "--json"]) == 0
    keys = {g["key"] for g in json.loads(capsys.readouterr().out)["groups"]}
    # an imported session was launched where it says; a recorded run where its .regista is
    assert keys == {"/home/ann/projects/shop", str(library.parents[1])}


def test_runs_by_model_prints_a_table(library: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["runs", str(library), "--by", "model"]) == 0
    out = capsys.readouterr().out
    assert "MODEL" in out and "RUNS" in out and "(all)" in out
    assert "claude-sonnet-4-5" in out


def test_runs_json_flags_the_loops_of_each_run(
    library: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["runs", str(library), "--json"]) == 0
    rows = {Path(r["path"]).name: r for r in json.loads(capsys.readouterr().out)}
    assert rows["refund_search_loop.jsonl"]["repeats"]["count"] == 9
    assert rows["refund_happy.jsonl"]["repeats"] is None
