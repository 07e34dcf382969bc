"""One outcome per run (:func:`regista.vocab.run_outcome`), the same in every view: ``runs
--json``, ``/v1/runs``, MCP ``list_runs`` / ``run_summary``, ``show --json``, the share header
and the TUI's header.

The runs: a recorded one (``end_turn``), an imported Claude Code session (it just ends), one
that stopped on a stop sequence, one out of turns, one that ended in an error, one cut short
(no ``session.end``)."""

from __future__ import annotations

import asyncio
import io
import json
from pathlib import Path
from typing import Any

import orjson
import pytest
from builders import simple_agent
from importers.cc_fixtures import basic_session
from rich.console import Console
from textual.widgets import Static
from tui.waits import settle

from regista.cli.main import main
from regista.importers.claude_code import convert
from regista.trace.reader import Trace
from regista.vocab import OUTCOME_COLOURS, outcome_text

EXPECTED = {
    "recorded": ("end_turn", "ok"),
    "imported": ("transcript_end", "no_stop_reason"),
    "stop_sequence": ("stop_sequence", "ok"),
    "max_turns": ("max_turns", "failed"),
    "error": ("error", "failed"),
    "cut_short": (None, "in_progress"),
}


def _rewritten(source: Path, target: Path, sid: str, **end: Any) -> None:
    """``source`` as another run ``sid``, its ``session.end`` changed (``cut``: dropped)."""
    cut = end.pop("cut", False)
    lines = []
    for raw in source.read_bytes().splitlines():
        event = orjson.loads(raw)
        event["session_id"] = sid
        if event["type"] == "session.end":
            if cut:
                continue
            event.update(end)
        lines.append(orjson.dumps(event) + b"\n")
    target.write_bytes(b"".join(lines))


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("runs")
    scratch = tmp_path_factory.mktemp("scratch")
    recorded = asyncio.run(simple_agent(scratch).run("Greet Ann")).trace_path
    sids = {name: f"01OUTCOME{i:017d}" for i, name in enumerate(EXPECTED)}
    paths = {name: folder / f"{sids[name]}.jsonl" for name in EXPECTED}
    _rewritten(recorded, paths["recorded"], sids["recorded"])
    _rewritten(recorded, paths["stop_sequence"], sids["stop_sequence"], stop_reason="stop_sequence")
    _rewritten(recorded, paths["max_turns"], sids["max_turns"], stop_reason="max_turns")
    _rewritten(
        recorded, paths["error"], sids["error"], stop_reason="error", error="RuntimeError: boom"
    )
    _rewritten(recorded, paths["cut_short"], sids["cut_short"], cut=True)
    source = basic_session().write(scratch / "cc.jsonl")
    imported = scratch / "imported.jsonl"
    imported.write_bytes(convert(source).main.to_bytes())
    _rewritten(imported, paths["imported"], sids["imported"])
    return paths


def _sid(path: Path) -> str:
    return path.stem


def test_runs_json(runs: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    folder = next(iter(runs.values())).parent
    assert main(["runs", str(folder), "--json"]) == 0
    by_id = {r["session_id"]: r for r in json.loads(capsys.readouterr().out)}
    for name, path in runs.items():
        row = by_id[_sid(path)]
        assert (name, row["status"]) == (name, EXPECTED[name][1])
        assert (name, row["failed"]) == (name, EXPECTED[name][1] == "failed")
    assert main(["runs", str(folder), "--json", "--failed"]) == 0
    failed = {r["session_id"] for r in json.loads(capsys.readouterr().out)}
    assert failed == {_sid(runs["max_turns"]), _sid(runs["error"])}


def test_runs_table(runs: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    """The table printed the raw stop reason cut to 10 characters: an imported session read
    ``transcrip…``, with nothing saying it is not a failure."""
    folder = next(iter(runs.values())).parent
    assert main(["runs", str(folder)]) == 0
    table = capsys.readouterr().out.splitlines()
    at = table[0].index("OUTCOME")
    for name, path in runs.items():
        (line,) = [line for line in table if line.startswith(_sid(path))]
        words = line[at:].split("  ")[0]
        stop, status = EXPECTED[name]
        assert (name, words) == (name, outcome_text(stop, status))
    assert "ended without a stop reason" in "\n".join(table)


def test_v1_runs(runs: dict[str, Path]) -> None:
    from starlette.testclient import TestClient

    from regista.server import create_app

    folder = next(iter(runs.values())).parent
    with TestClient(create_app(folder)) as http:
        listed = {r["id"]: r for r in http.get("/v1/runs").json()["runs"]}
        for name, path in runs.items():
            assert (name, listed[_sid(path)]["status"]) == (name, EXPECTED[name][1])
            one = http.get(f"/v1/runs/{_sid(path)}").json()
            assert (name, one["status"]) == (name, EXPECTED[name][1])


def test_v1_run_gives_errors_and_duration(
    runs: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """``/v1/runs/{id}`` left out the run's errors and duration, which ``show --json``, MCP and
    share give."""
    from starlette.testclient import TestClient

    from regista.server import create_app

    folder = next(iter(runs.values())).parent
    with TestClient(create_app(folder)) as http:
        for name, path in runs.items():
            assert main(["show", str(path), "--json"]) == 0
            shown = json.loads(capsys.readouterr().out)
            one = http.get(f"/v1/runs/{_sid(path)}").json()
            for key in ("errors", "denials", "duration_ms"):
                assert (name, key, one[key]) == (name, key, shown[key])


def test_mcp(runs: dict[str, Path]) -> None:
    from regista.store.mcp_server import RunsTools

    tools = RunsTools(next(iter(runs.values())).parent)
    listed = {r["session_id"]: r for r in tools.list_runs(limit=100)}
    for name, path in runs.items():
        assert (name, listed[_sid(path)]["status"]) == (name, EXPECTED[name][1])
        summary = tools.run_summary(_sid(path))
        assert (name, summary["status"]) == (name, EXPECTED[name][1])
    failed = {r["session_id"] for r in tools.list_runs(failed=True)}
    assert failed == {_sid(runs["max_turns"]), _sid(runs["error"])}


def test_show_json_and_share(runs: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    from regista.share import _run_data

    for name, path in runs.items():
        assert main(["show", str(path), "--json"]) == 0
        shown = json.loads(capsys.readouterr().out)
        assert (name, shown["status"]) == (name, EXPECTED[name][1])
        assert main(["show", str(path)]) == 0
        words = outcome_text(*EXPECTED[name]) if name != "cut_short" else "unfinished"
        assert (name, words in capsys.readouterr().out) == (name, True)
        header = _run_data(Trace.load(path))["header"]
        assert (name, header["status"]) == (name, EXPECTED[name][1])
        assert header["status_text"] == outcome_text(EXPECTED[name][0], EXPECTED[name][1])


def _header(app: Any) -> Any:
    return app.screen.query_one("#header", Static).content


@pytest.mark.parametrize("name", list(EXPECTED))
async def test_tui_header(runs: dict[str, Path], name: str) -> None:
    from regista_tui.__main__ import open_index
    from regista_tui.app import RegistaApp

    index, notice = open_index(runs[name])
    app = RegistaApp(index, notice=notice, settle_s=0)
    async with app.run_test(size=(160, 40)) as pilot:
        for _ in range(250):
            if index.end is not None or name == "cut_short":
                break
            await pilot.pause(0.02)
        await settle(pilot)
        console = Console(width=300, record=True, file=io.StringIO())
        content = _header(app)
        console.print(content)
        shown = console.export_text()
        stop, status = EXPECTED[name]
        if status == "in_progress":
            assert "● " not in shown
            assert "no session.end" in shown or "running" in shown
            return
        words = outcome_text(stop, status)
        assert f"● {words}" in shown
        plain = content.plain
        at = plain.index(f"● {words}")
        styles = {str(s.style) for s in content.spans if s.start <= at < s.end}
        assert any(OUTCOME_COLOURS[status] in style for style in styles), styles
        assert "stop_reason None" not in shown


def test_a_response_without_a_stop_reason_says_none(runs: dict[str, Path]) -> None:
    """An imported response whose source wrote no stop reason is not ``stop_reason None``."""
    from regista_tui.widgets.step.render import render_step

    steps = [s for s in Trace.load(runs["imported"]).steps() if s.kind == "model"]
    stops = [s.response_event.response.get("stop_reason") for s in steps if s.response_event]
    assert None in stops and "end_turn" in stops
    for step in steps:
        console = Console(width=200, record=True, file=io.StringIO())
        console.print(render_step(step))
        shown = console.export_text()
        assert "stop_reason None" not in shown
        stop = step.response_event.response.get("stop_reason") if step.response_event else None
        assert (f"stop_reason {stop}" in shown) == (stop is not None)


async def test_tui_run_list(runs: dict[str, Path]) -> None:
    """The TUI's run list colours each run's outcome as the header does."""
    from rich.text import Text
    from textual.widgets import DataTable

    from regista.store.runs import list_runs
    from regista_tui.app import RegistaApp

    folder = next(iter(runs.values())).parent
    app = RegistaApp(runs=list_runs(folder), runs_folder=str(folder), settle_s=0)
    async with app.run_test(size=(200, 40)) as pilot:
        await settle(pilot)
        table: DataTable[Any] = app.screen.query_one("#runs-table", DataTable)
        colours = {}
        for r in range(table.row_count):
            cells = table.get_row_at(r)
            sid = next(str(c).strip(" └") for c in cells if str(c).strip(" └").startswith("01"))
            outcome = next(c for c in cells if isinstance(c, Text) and c.plain != "●" and c.style)
            colours[sid] = str(outcome.style)
    for name, path in runs.items():
        assert (name, colours[_sid(path)]) == (name, OUTCOME_COLOURS[EXPECTED[name][1]])
