"""``e`` on a trace recorded from a plain SDK program (``regista record -- CMD``): no
regista Agent, so the fork runs the program again, as ``regista fork … -- CMD`` does.

With ``regista-tui TRACE -- CMD`` the fork runs here; without a command, the TUI says the
``regista fork`` line to run, and that line works as it is given.
"""

from __future__ import annotations

import shlex
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fakes.anthropic_server import FakeAnthropicServer
from fork_helpers import browser, finished, fork_with, open_editor
from textual.widgets import TextArea
from waits import settle, until

from regista.cli.main import main as regista
from regista.trace.reader import Trace
from regista_tui.__main__ import main as regista_tui
from regista_tui.app import RegistaApp
from regista_tui.screens.edit import EditStep, ForkCommand
from regista_tui.screens.fork import ForkScreen

SERVER_TESTS = Path(__file__).parents[1] / "server"
#: A plain SDK agent: asks the weather of Paris, then Oslo, then says what it was told.
AGENT = [sys.executable, str(SERVER_TESTS / "agent_main.py"), "anthropic"]
CITIES = ["Paris", "Oslo"]


def _answer(body: dict[str, Any]) -> dict[str, Any]:
    results = [
        b
        for m in body["messages"]
        if isinstance(m["content"], list)
        for b in m["content"]
        if b.get("type") == "tool_result"
    ]
    if len(results) < len(CITIES):
        n = len(results)
        use = {"type": "tool_use", "id": f"toolu_{n}", "name": "get_weather",
               "input": {"city": CITIES[n]}}  # fmt: skip
        return {"content": [use]}
    said = " / ".join(str(r["content"]) for r in results)
    return {"content": [{"type": "text", "text": f"Said: {said}"}]}


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeAnthropicServer]:
    with FakeAnthropicServer() as server:
        server.answer_with(_answer)
        yield server


def _env(mp: pytest.MonkeyPatch, fake: FakeAnthropicServer) -> None:
    mp.setenv("PYTHONPATH", str(SERVER_TESTS))
    mp.setenv("ANTHROPIC_API_KEY", "sk-ant-tui-fork-secret")
    mp.setenv("ANTHROPIC_BASE_URL", fake.url)  # the upstream of the live calls


@pytest.fixture(scope="module")
def recorded(fake: FakeAnthropicServer, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The program's run, recorded through the proxy: model, tool, model, tool, model."""
    folder = tmp_path_factory.mktemp("recorded")
    with pytest.MonkeyPatch.context() as mp:
        _env(mp, fake)
        assert regista(["record", "--trace-dir", str(folder), "--", *AGENT]) == 0
    (path,) = folder.glob("*.jsonl")
    trace = Trace.load(path)
    assert trace.start.agent_ref is None
    assert [s.kind for s in trace.steps()] == ["model", "tool"] * 2 + ["model"]
    return path


def _sent_results(fake: FakeAnthropicServer, since: int) -> list[list[Any]]:
    return [
        [
            b["content"]
            for m in r.body["messages"]
            if isinstance(m["content"], list)
            for b in m["content"]
            if b.get("type") == "tool_result"
        ]
        for r in fake.requests[since:]
    ]


async def test_e_forks_a_recorded_program_by_running_it(
    recorded: Path, fake: FakeAnthropicServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``regista-tui TRACE -- CMD``: edit step 1's result; the program runs against the
    fork (step 0 from the recording, the edit, then live) and the fork shows beside it."""
    _env(monkeypatch, fake)
    index_app = browser(recorded, tmp_path / "forks")
    app = RegistaApp(index_app.index, settle_s=0, trace_dir=tmp_path / "forks", command=list(AGENT))
    before = len(fake.requests)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        editor = await open_editor(app, pilot, "j")
        assert "the program " in str(editor.query_one("#edit-plan").render())
        screen = await fork_with(app, pilot, "rainy")
        done: Any = await finished(app, pilot)
        assert done is screen and isinstance(screen, ForkScreen)
        assert screen.progress.state == "ended", screen.progress
        assert screen.progress.stop_reason == "end_turn"
        (path,) = (tmp_path / "forks").glob("*.jsonl")
        assert screen.paths == (recorded, path)
        assert "reopen" in str(screen.query_one("#fork-where").render())
    fork = Trace.load(path)
    assert [s.source for s in fork.steps()] == ["recorded", "edit", "live", "live", "live"]
    assert fork.start.forked_from is not None and fork.start.forked_from["at_step"] == 1
    sent = _sent_results(fake, before)
    assert len(sent) == 2 and all(results[0] == "rainy" for results in sent)
    assert "sk-ant-tui-fork-secret" not in path.read_text()


async def test_without_a_command_the_tui_says_the_line_to_run(
    recorded: Path,
    fake: FakeAnthropicServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """No ``-- CMD``: the edit is made as usual, then the ``regista fork … -- CMD`` line
    is shown to copy; run with the program for CMD, it writes the fork."""
    _env(monkeypatch, fake)
    forks = tmp_path / "forks"
    app = browser(recorded, forks)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        editor = await open_editor(app, pilot, "j")
        assert isinstance(editor, EditStep)
        assert "no agent here" in str(editor.query_one("#edit-plan").render())
        editor.query_one(TextArea).load_text("it's 'rainy'")
        await pilot.press("ctrl+s")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, ForkCommand)
        line = screen.line
        assert screen.query_one("#fork-command", TextArea).text == line  # selectable
        assert line.startswith(f"regista fork {recorded} --at 1 --tool-result ")
        assert line.endswith(" -- CMD")
        await pilot.press("c")
        assert app.clipboard == line
        await pilot.press("escape")
        await settle(pilot)
        assert not isinstance(app.screen, ForkCommand)
    assert not forks.exists()
    argv = shlex.split(line.removesuffix("CMD"))
    before = len(fake.requests)
    assert regista([*argv[1:], *AGENT]) == 0
    (path,) = forks.glob("*.jsonl")
    assert [s.source for s in Trace.load(path).steps()][:2] == ["recorded", "edit"]
    assert all(results[0] == "it's 'rainy'" for results in _sent_results(fake, before))
    capsys.readouterr()


def test_the_command_line_after_two_dashes(
    recorded: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    seen: list[RegistaApp] = []
    monkeypatch.setattr(RegistaApp, "run", lambda app: seen.append(app))
    assert regista_tui([str(recorded), "--", "python", "agent.py", "--flag"]) == 0
    assert seen[0].command == ["python", "agent.py", "--flag"]
    assert regista_tui([str(recorded), "--"]) == 2
    assert regista_tui([str(recorded), "--agent", "m:a", "--", "python", "a.py"]) == 2
    err = capsys.readouterr().err
    assert "give the program after --" in err and "not both" in err


async def test_x_stops_the_program(
    recorded: Path, fake: FakeAnthropicServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A rewind to step 0 of a program that calls the model until it is killed: ``x``
    stops it, and the fork says it was cancelled."""
    _env(monkeypatch, fake)
    loop = [*AGENT[:-1], "anthropic-loop"]
    index_app = browser(recorded, tmp_path / "forks")
    app = RegistaApp(index_app.index, settle_s=0, trace_dir=tmp_path / "forks", command=loop)
    before = len(fake.requests)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("r")
        await until(pilot, lambda: app.screen.__class__.__name__ == "ConfirmRewind", "prompt")
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, ForkScreen), "the fork screen")
        screen = app.screen
        assert isinstance(screen, ForkScreen)
        await until(pilot, lambda: len(fake.requests) > before + 1, "the program runs live")
        # Its trace is shown growing beside the original while it runs.
        await until(pilot, lambda: screen.paths[1] is not None, "the fork's trace is followed")
        assert screen.progress.state == "running"
        proc = screen._proc
        assert proc is not None
        await pilot.press("x")
        await until(pilot, lambda: screen.progress.finished, "the fork stops")
        assert screen.progress.state == "cancelled"
        assert proc.poll() is not None  # the program is gone
