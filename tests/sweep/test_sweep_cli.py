"""``regista sweep``: the sample search loop forked three ways at its first search, offline.

One sweep (module-scoped: its forks run as ``regista fork`` processes) is looked at from
every side: the printed table, ``--json``, the JUnit report, the sweep file and its forks.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from sweeps import FOUND, LOOP, sweep_argv

from regista.cli.main import main
from regista.sweep import load_sweep, sweep_rows
from regista.trace.reader import Trace


@pytest.fixture(autouse=True)
def _own_shop(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each fork's agent makes its own shop database (forks run at the same time)."""
    monkeypatch.delenv("REGISTA_SAMPLE_DB", raising=False)


@pytest.fixture(scope="module")
def swept(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The sweep, run once with ``--json`` and ``--junit``."""
    folder = tmp_path_factory.mktemp("sweep")
    out = folder / "sw"
    junit = folder / "report.xml"
    import contextlib
    import io

    buf = io.StringIO()
    with pytest.MonkeyPatch.context() as mp:
        mp.delenv("REGISTA_SAMPLE_DB", raising=False)
        mp.chdir(folder)
        with contextlib.redirect_stdout(buf):
            code = main(sweep_argv(out, "-j", "2", "--json", "--junit", str(junit)))
    return {"code": code, "out": out, "json": json.loads(buf.getvalue()), "junit": junit}


def test_the_sweep_forks_three_ways_and_keeps_the_parent(swept: dict[str, Any]) -> None:
    """Every fork ran as ``regista fork`` does: the recorded prefix, the edit, then live;
    the parent is never written to."""
    assert swept["code"] == 0
    sweep = load_sweep(swept["out"])
    assert Path(sweep.parent) == LOOP.resolve()
    assert [f.status for f in sweep.forks] == ["done"] * 3
    assert sweep.ended is not None and not sweep.cancelled
    parent = Trace.load(LOOP)
    for fork in sweep.forks:
        trace = Trace.load(sweep.fork_trace(fork))
        assert trace.start.forked_from["session_id"] == parent.session_id
        assert trace.start.forked_from["at_step"] == 1
        sources = [s.source for s in trace.steps()]
        assert sources[:2] == ["recorded", "edit"] and set(sources[2:]) == {"live"}
    found = Trace.load(sweep.fork_trace(sweep.forks[0]))
    assert found.steps()[1].result.content == FOUND


def test_the_table_says_how_each_fork_ended_and_where_it_diverged(
    swept: dict[str, Any],
) -> None:
    rows = swept["json"]["rows"]
    assert [r["name"] for r in rows] == ["parent", "fork 1", "fork 2", "fork 3"]
    assert [r["stop_reason"] for r in rows] == ["max_turns", "end_turn", "max_turns", "max_turns"]
    assert [r["steps"] for r in rows] == [20, 9, 20, 20]
    # the found order changes what the model does next; nothing found or an outage does not
    assert rows[1]["first_divergence"] == "step 2: changed · decision"
    assert rows[1]["first_divergence_step"] == 2
    assert [r["first_divergence"] for r in rows[2:]] == ["none", "none"]
    assert all(r["tokens"] > 0 and r["cost_usd"] == 0.0 for r in rows)
    assert rows[1]["variant"]["content"] == FOUND
    assert rows[1]["label"].startswith('result: {"query"')


def test_the_printed_table(tmp_path: Path, capsys: Any, swept: dict[str, Any]) -> None:
    """The same rows as text, with the sweep file and the command that opens the view."""
    from regista.sweep import table_text

    text = table_text(sweep_rows(load_sweep(swept["out"])))
    lines = text.splitlines()
    assert lines[0].split()[:4] == ["variant", "stop", "reason", "steps"]
    assert lines[1].startswith("parent  (as recorded)")
    assert "end_turn" in lines[2] and "step 2: changed · decision" in lines[2]
    assert len(lines) == 5


def test_the_junit_report_has_a_case_per_fork(swept: dict[str, Any]) -> None:
    suite = ET.parse(swept["junit"]).getroot().find("testsuite")
    assert suite is not None
    assert suite.get("tests") == "3" and suite.get("failures") == "0"
    names = [c.get("name") for c in suite.iter("testcase")]
    assert names[0].startswith("fork 1: result:")


def test_a_sweep_with_verify_runs_it_in_each_forks_own_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    """``--verify`` runs once per fork in its copy of the working folder; exit 0 passes.
    Here it passes when the fork ended its task (only the fork that found the order)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "notes.txt").write_text("kept\n")
    check = 'test -f notes.txt && touch verified && grep -q end_turn "$REGISTA_FORK_TRACE"'
    code = main(sweep_argv(tmp_path / "sw", "--verify", check, "--junit", "r.xml"))
    printed = capsys.readouterr().out
    assert code == 1  # two forks failed their check
    sweep = load_sweep(tmp_path / "sw")
    assert [f.passed for f in sweep.forks] == [True, False, False]
    for fork in sweep.forks:
        assert (sweep.folder / fork.dir / "work" / "verified").exists()
    assert not (tmp_path / "verified").exists()  # the working folder itself is untouched
    rows = printed.splitlines()
    assert "pass" in rows[2] and "fail (1)" in rows[3]
    suite = ET.parse(tmp_path / "r.xml").getroot().find("testsuite")
    assert suite is not None and suite.get("failures") == "2"


def test_a_variants_file_and_a_model_variant(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    """Variants from a JSON file, with labels; a model variant carries on from the step
    with another model (the recorded prefix keeps the recorded one)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "v.json").write_text(
        json.dumps(
            [
                {"kind": "tool_result", "content": FOUND, "label": "the order"},
                {"kind": "model", "model": "claude-haiku-4-5", "at_step": 2},
            ]
        )
    )
    code = main(["sweep", str(LOOP), "--at", "1", "--variants", "v.json", "--out", "sw", "--json"])
    rows = json.loads(capsys.readouterr().out)["rows"]
    assert code == 0, rows
    assert [r["label"] for r in rows[1:]] == ["the order", "model: claude-haiku-4-5"]
    sweep = load_sweep(tmp_path / "sw")
    trace = Trace.load(sweep.fork_trace(sweep.forks[1]))
    models = [s.request.model for s in trace.steps() if s.kind == "model"]
    assert models[0] == "claude-sonnet-4-6" and set(models[1:]) == {"claude-haiku-4-5"}
    assert trace.start.forked_from["model"] == "claude-haiku-4-5"
    assert rows[2]["first_divergence"] == "step 2: changed · config"


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["--at", "1"], "give the variants"),
        (["--tool-result", "x"], "--at N"),
        (["--at", "0", "--tool-result", "x"], "a tool result needs a tool step"),
        (["--at", "99", "--tool-result", "x"], "step 99 does not exist"),
        (["--at", "0", "--answer", '[{"type": "text", "text": 3}]'], "text block"),
        (["--at", "0", "--answer", "[3]"], "content[0] must be an object"),
        (["--at", "1", "--variants", "missing.json"], "cannot read missing.json"),
        (["--at", "1", "--tool-result", "x", "-j", "0"], "-j"),
        (["--at", "1", "--tool-result", "x", "--verify", "true", "--workdir", "no"], "no such"),
        (["--at", "1", "--tool-result", "x", "--verify", " "], "--verify: give"),
    ],
)
def test_bad_input_gives_one_clear_line(
    argv: list[str], says: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["sweep", str(LOOP), *argv]) == 2
    err = capsys.readouterr().err
    assert says in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1
    assert not (tmp_path / ".regista").exists() or not any((tmp_path / ".regista").rglob("*"))


def test_a_trace_with_no_agent_needs_one_before_any_fork_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    monkeypatch.chdir(tmp_path)
    head, rest = LOOP.read_bytes().split(b"\n", 1)
    start = json.loads(head)
    del start["agent_ref"]
    (tmp_path / "t.jsonl").write_bytes(json.dumps(start).encode() + b"\n" + rest)
    assert main(["sweep", "t.jsonl", "--at", "1", "--tool-result", "x"]) == 2
    err = capsys.readouterr().err
    assert "records no agent_ref" in err and "--agent" in err and "-- CMD" in err
    assert not (tmp_path / ".regista").exists()
