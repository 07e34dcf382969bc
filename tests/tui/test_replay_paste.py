"""The run list's ``r``: a replay of the selected run started inside the TUI, and what to
paste into a terminal (the two environment lines, a Python and a TypeScript snippet)."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import anthropic
import pytest
from runs_library import FAILED, OTHER, ROOT, make_library
from textual.widgets import Static
from waits import settle

from regista.engine import REPLAY_KEY, ReplayHandoff
from regista.store.runs import list_runs
from regista_tui.app import RegistaApp
from regista_tui.screens.replay import ReplayPaste
from regista_tui.screens.runs import RunsScreen

_TUI = Path(__file__).resolve().parents[2] / "regista_tui"


@pytest.fixture(scope="module")
def library(trace_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_library(trace_path, tmp_path_factory.mktemp("library") / "traces")


def _app(folder: Path) -> RegistaApp:
    return RegistaApp(runs=list_runs(folder), runs_folder=str(folder), settle_s=0)


def _text(screen: Any, selector: str) -> str:
    return str(screen.query_one(selector, Static).render())


async def test_r_starts_a_replay_that_serves_the_run(library: Path) -> None:
    app = _app(library)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        runs = app.screen
        assert isinstance(runs, RunsScreen)
        await pilot.press("r")  # the newest root: OTHER
        await runs.workers.wait_for_complete()
        await settle(pilot)
        paste = app.screen
        assert isinstance(paste, ReplayPaste)
        h = paste.handoff
        assert h.run == OTHER and h.mode == "strict"
        env = _text(paste, "#replay-env")
        assert env.splitlines() == [
            f"export ANTHROPIC_BASE_URL={h.anthropic_base_url}",
            f"export OPENAI_BASE_URL={h.openai_base_url}",
        ]
        assert h.anthropic_base_url.startswith("http://127.0.0.1:")
        assert h.anthropic_base_url.endswith(f"/v1/replays/{h.id}/anthropic")
        assert h.openai_base_url.endswith(f"/v1/replays/{h.id}/openai/v1")
        assert f'base_url="{h.anthropic_base_url}"' in h.python_snippet()
        ast.parse(h.python_snippet())  # it pastes as Python
        assert f'baseURL: "{h.openai_base_url}"' in h.typescript_snippet()
        # what was pasted works: the replay is on the server, served by the TUI
        client = anthropic.Anthropic(
            base_url=h.anthropic_base_url, api_key=REPLAY_KEY, max_retries=0
        )
        with pytest.raises(anthropic.ConflictError) as info:
            client.messages.create(
                model="m", max_tokens=5, messages=[{"role": "user", "content": "hi"}]
            )
        assert "diverged at step 0" in str(info.value)
        await pilot.press("escape")
        assert app.screen is runs
        assert f"Replay {h.id} of {OTHER}" in _text(runs, "#status")
        await pilot.press("down", "down", "r")  # a second run: another replay, same server
        await runs.workers.wait_for_complete()
        await settle(pilot)
        assert isinstance(app.screen, ReplayPaste)
        second = app.screen.handoff
        assert second.run in (FAILED, ROOT) and second.id != h.id
        assert second.server == h.server
    assert runs.desk is not None and not runs.desk._servers  # stopped with the app


async def test_a_run_that_cannot_be_replayed_says_why_in_place(
    trace_path: Path, tmp_path: Path
) -> None:
    folder = make_library(trace_path, tmp_path / "traces")
    app = _app(folder)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        runs = app.screen
        (folder / f"{OTHER}.jsonl").unlink()  # gone since the list was read
        await pilot.press("r")
        await runs.workers.wait_for_complete()
        await settle(pilot)
        assert app.screen is runs
        status = _text(runs, "#status")
        assert status == f"Cannot replay {OTHER}.jsonl: no run '{OTHER}.jsonl' in the store"


class _FixedDesk:
    """A desk whose replay has a fixed port and id (the snapshot must not move)."""

    def start(self, path: Path) -> ReplayHandoff:
        base = "http://127.0.0.1:8787/v1/replays/rp_0123456789abcdef01234567"
        return ReplayHandoff(
            id="rp_0123456789abcdef01234567",
            run=path.stem,
            server="http://127.0.0.1:8787",
            anthropic_base_url=f"{base}/anthropic",
            openai_base_url=f"{base}/openai/v1",
            mode="strict",
        )

    def close(self) -> None:
        pass


def test_replay_paste_snapshot(snap_compare: Any, library: Path) -> None:
    """Over the run list, a box titled "Replay of 01TESTRUNSALES000000000002": a line saying
    the strict replay is served by this TUI at http://127.0.0.1:8787 until it quits, then
    "In a terminal" with the two export lines (ANTHROPIC_BASE_URL ending /anthropic,
    OPENAI_BASE_URL ending /openai/v1), "Python" with the two clients made with those base
    URLs, "TypeScript" with the same in @anthropic-ai/sdk and openai, and the keys c and
    Escape in the box's bottom border."""

    async def run_before(pilot: Any) -> None:
        await settle(pilot)
        pilot.app.screen.desk = _FixedDesk()
        await pilot.press("r")
        await pilot.app.screen.workers.wait_for_complete()
        await settle(pilot)

    app = RegistaApp(runs=list_runs(library), runs_folder="traces", settle_s=0)
    assert snap_compare(app, terminal_size=(120, 40), run_before=run_before)


def test_the_replay_screen_imports_engine_code_only_through_the_facade() -> None:
    tree = ast.parse((_TUI / "screens" / "replay.py").read_text())
    engine = {
        node.module
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom)
        and node.module
        and node.module.split(".")[0] == "regista"
    }
    assert engine == {"regista.engine"}
