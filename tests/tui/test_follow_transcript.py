"""A Claude Code transcript or a Codex rollout still being written is followed as it grows,
as a regista trace is: each step shows once the CLI has written it, the run stays in
progress (no ``transcript_end``), and an answer still being written waits for its end."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest
from importers.cc_fixtures import CCSession, text, thinking, tool_use
from importers.codex_fixtures import Rollout, rollout_name
from shown import text_of
from waits import settle, until

import regista.importers.memory as memory
from regista.importers.memory import InMemoryRuns, StreamedIndex
from regista_tui.__main__ import open_index
from regista_tui.app import RegistaApp
from regista_tui.screens.browser import BrowserScreen


@pytest.fixture(autouse=True)
def quick(monkeypatch: pytest.MonkeyPatch) -> None:
    """A follow tick at once, and a fresh in-memory store."""
    monkeypatch.setattr("regista_tui.screens.browser._FOLLOW_S", 0.01)
    monkeypatch.setattr(memory, "RUNS", InMemoryRuns())


class Appender:
    """Appends what a writer made since the last call to the transcript file."""

    def __init__(self, path: Path, lines: list[dict[str, Any]]) -> None:
        self.path, self.lines, self.done = path, lines, 0

    def __call__(self) -> None:
        with open(self.path, "ab") as f:
            for line in self.lines[self.done :]:
                f.write(orjson.dumps(line) + b"\n")
        self.done = len(self.lines)


def _kinds(index: Any) -> list[str]:
    return [e.kind for e in index.steps]


async def _grown(pilot: Any, screen: BrowserScreen, before: int) -> None:
    """Wait until the screen picked up a growth of the file and drew it."""
    await until(pilot, lambda: screen.polls_grown > before, "the growth was picked up")
    await settle(pilot)


def _followed(tmp_path: Path, s: CCSession) -> tuple[Path, Appender, StreamedIndex, RegistaApp]:
    """The debugger on ``s``'s transcript as written so far, following it; what appends
    what ``s`` wrote next."""
    path = tmp_path / f"{s.session_id}.jsonl"
    path.write_bytes(b"")
    write = Appender(path, s.lines)
    write()
    index, notice = open_index(path)
    assert isinstance(index, StreamedIndex) and index.follows
    return path, write, index, RegistaApp(index, notice=notice, settle_s=0)


async def test_a_claude_code_session_is_followed_step_by_step(tmp_path: Path) -> None:
    s = CCSession()
    s.prompt("The refund test fails. Can you fix it?")
    path, write, index, app = _followed(tmp_path, s)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, BrowserScreen)
        await until(pilot, lambda: screen._following, "the screen follows the transcript")
        assert "running" in text_of(app, "#header") and index.end is None

        s.answer(
            thinking("Run the tests."),
            text("Running them."),
            tool_use("toolu_1", "Bash", command="pytest -q"),
            stop_reason="tool_use",
        )
        write()
        await until(pilot, lambda: _kinds(index) == ["model", "tool"], "the call shows")
        assert not index.steps[1].complete  # the tool is running

        s.tool_result("toolu_1", "1 failed", is_error=True)
        write()
        await until(pilot, lambda: index.steps[1].complete, "the result shows")
        assert index.steps[1].error

        # an answer still being written (no stop reason yet) waits for its last line
        s.answer(thinking("It adds 10%."))
        write()
        await _grown(pilot, screen, screen.polls_grown)
        assert _kinds(index) == ["model", "tool"]
        first = s.lines[-1]  # the same answer's next block, on a line of its own
        s.lines.append(
            {
                **first,
                "parentUuid": first["uuid"],
                "uuid": "u-last",
                "message": {
                    **first["message"],
                    "content": [text("Fixed: no more 10%.")],
                    "stop_reason": "end_turn",
                },
            }
        )
        write()
        await until(pilot, lambda: len(index.steps) == 3, "the answer shows")
        response = index.step(2).response
        assert response is not None
        assert [b["type"] for b in response.content] == ["thinking", "text"]
        await settle(pilot)
        header = text_of(app, "#header")
        assert "running" in header and "transcript_end" not in header
        assert "ended without" not in header and "crashed" not in header
        assert index.end is None  # in progress: the session goes on

        # the person is away: still in progress, not crashed
        then = time.time() - 5 * 60
        os.utime(path, (then, then))
        screen._follow()
        await settle(pilot)
        assert "in progress, idle: last written 5 min ago" in text_of(app, "#header")


async def test_a_codex_rollout_is_followed_step_by_step(tmp_path: Path) -> None:
    r = Rollout()
    r.meta()
    r.turn()
    r.user("Fix the refund rounding bug")
    path = tmp_path / rollout_name(r.thread_id)
    path.write_bytes(b"")
    write = Appender(path, r.lines)
    write()
    index, notice = open_index(path)
    assert isinstance(index, StreamedIndex) and index.follows
    app = RegistaApp(index, notice=notice, settle_s=0)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, BrowserScreen)
        await until(pilot, lambda: screen._following, "the screen follows the rollout")

        r.reasoning("Run the tests")
        r.call("call_A", "shell", command=["pytest", "-q"])
        write()
        await _grown(pilot, screen, screen.polls_grown)
        assert _kinds(index) == []  # the answer is still being written: no count yet
        r.tokens(5200, 4096, 180)
        write()
        await until(pilot, lambda: _kinds(index) == ["model", "tool"], "the call shows")

        r.output("call_A", "Exit code: 1\nOutput:\n1 failed")
        write()
        await until(pilot, lambda: index.steps[1].complete, "the output shows")

        r.say("Fixed the rounding.")
        r.tokens(6000, 5600, 40)
        r.line("event_msg", {"type": "task_complete", "turn_id": "1"})
        write()
        await until(pilot, lambda: len(index.steps) == 3, "the answer shows")
        await settle(pilot)
        header = text_of(app, "#header")
        assert "running" in header and "transcript_end" not in header
        assert index.end is None


async def test_a_transcript_not_written_for_a_minute_opens_finished(tmp_path: Path) -> None:
    s = CCSession()
    s.prompt("hi")
    s.answer(text("hello"), stop_reason="end_turn")
    path = s.write(tmp_path / f"{s.session_id}.jsonl")
    then = time.time() - 2 * memory.LIVE_S
    os.utime(path, (then, then))
    index, _ = open_index(path)
    index.scan()
    index.warm()
    assert not getattr(index, "follows", False)
    assert index.end is not None and index.end.stop_reason == "transcript_end"
    index.close()


async def _each_exchange_shows(
    app: RegistaApp,
    index: StreamedIndex,
    lines: list[dict[str, Any]],
    write: Appender,
    exchange: Callable[[int], None],
) -> None:
    """Append four exchanges (``exchange(n)`` writes the n-th's lines) one at a time: each
    shows, and each growth reads only the lines appended."""
    job = index.streaming.job
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, BrowserScreen)
        await until(pilot, lambda: screen._following, "the screen follows the transcript")
        for n in range(4):
            before = len(lines)
            exchange(n)
            parsed = job.parsed
            write()
            want = 2 * (n + 1)
            await until(pilot, lambda want=want: len(index.steps) == want, "the exchange shows")
            assert job.parsed - parsed == len(lines) - before  # only the appended lines
        assert _kinds(index) == ["model", "tool"] * 4 and all(st.complete for st in index.steps)
        assert index.end is None and "running" in text_of(app, "#header")


async def test_a_transcript_appended_to_shows_each_step_converting_only_the_new_lines(
    tmp_path: Path,
) -> None:
    """A session written a few exchanges at a time: the screen shows every step the
    whole file has, and each growth reads only the lines appended."""
    s = CCSession()
    s.prompt("Read the modules one by one")
    _, write, index, app = _followed(tmp_path, s)

    def exchange(n: int) -> None:
        s.answer(tool_use(f"toolu_{n}", "Read", file_path=f"m{n}.py"), stop_reason="tool_use")
        s.tool_result(f"toolu_{n}", f"x = {n}\n")

    await _each_exchange_shows(app, index, s.lines, write, exchange)


async def test_a_codex_rollout_appended_to_shows_each_step_converting_only_the_new_lines(
    tmp_path: Path,
) -> None:
    """A rollout written a few exchanges at a time: the screen shows every step the whole
    file has, and each growth reads only the lines appended."""
    r = Rollout()
    r.meta()
    r.turn()
    r.user("Read the modules one by one")
    path = tmp_path / rollout_name(r.thread_id)
    write = Appender(path, r.lines)
    write()
    index, notice = open_index(path)
    assert isinstance(index, StreamedIndex) and index.follows

    def exchange(n: int) -> None:
        r.call(f"call_{n}", "shell", command=["cat", f"m{n}.py"])
        r.tokens(1000 * (n + 1), 1000 * n, 20)
        r.output(f"call_{n}", f"Exit code: 0\nOutput:\nx = {n}")

    app = RegistaApp(index, notice=notice, settle_s=0)
    await _each_exchange_shows(app, index, r.lines, write, exchange)


async def test_a_subagent_started_while_followed_opens_from_its_step_and_grows(
    tmp_path: Path,
) -> None:
    """The followed session calls ``Task``; its subagent's transcript then appears in
    ``subagents/`` and grows: the call's step shows with its link, Enter opens the
    subagent's run, which grows as its transcript does and ends when the call's result
    comes."""
    from regista.subagents import subagent_link

    s = CCSession()
    s.prompt("Find where refunds are computed")
    _, write, index, app = _followed(tmp_path, s)
    prompt = "Search the code for refund computations"
    c = CCSession(agent_id="a1b2c3d4", sidechain=True, model="claude-haiku-4-5-20251001")
    c.start = s.start.replace(minute=20)
    sub = tmp_path / s.session_id / "subagents" / "agent-a1b2c3d4.jsonl"
    sub.parent.mkdir(parents=True)
    write_sub = Appender(sub, c.lines)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        parent = app.screen
        assert isinstance(parent, BrowserScreen)
        await until(pilot, lambda: parent._following, "the screen follows the transcript")

        s.answer(
            text("Searching."),
            tool_use("toolu_T1", "Task", description="search", prompt=prompt),
            stop_reason="tool_use",
        )
        write()
        await until(pilot, lambda: _kinds(index) == ["model"], "the answer shows")
        await settle(pilot)
        assert _kinds(index) == ["model"]  # the call waits for its subagent

        c.prompt(prompt)
        write_sub()
        await until(pilot, lambda: _kinds(index) == ["model", "tool"], "the call shows")
        link = subagent_link(index.step(1))
        assert link is not None and link["agent_id"] == "a1b2c3d4"

        await pilot.press("j")
        await until(pilot, lambda: parent.timeline.cursor == 1, "the cursor on the call")
        await pilot.press("enter")
        await until(pilot, lambda: app.screen is not parent, "the subagent's run opened")
        child = app.screen
        assert isinstance(child, BrowserScreen)
        assert child.index.start is not None
        assert child.index.start.session_id == link["session_id"]
        assert child.index.start.metadata["parent"]["step"] == 1
        assert _kinds(child.index) == [] and child.index.end is None

        # the subagent works: its steps show in its run as its transcript grows
        c.answer(tool_use("toolu_C1", "Grep", pattern="refund"), stop_reason="tool_use")
        write_sub()
        await until(pilot, lambda: _kinds(child.index) == ["model", "tool"], "its call shows")
        c.tool_result("toolu_C1", "refund.py:2")
        c.answer(text("In refund.py."), stop_reason="end_turn")
        write_sub()
        await until(pilot, lambda: len(child.index.steps) == 3, "its answer shows")
        assert child.index.end is None and "running" in text_of(app, "#header")

        # the call's result comes: the subagent's run ends
        s.tool_result(
            "toolu_T1",
            [text("In refund.py.")],
            result={"status": "completed", "agentId": "a1b2c3d4", "content": []},
        )
        write()
        await until(pilot, lambda: child.index.end is not None, "the subagent's run ends")
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is parent, "back to the session")
        await until(pilot, lambda: index.steps[1].complete, "the call's result shows")
        assert subagent_link(index.step(1)) == link
        assert index.end is None
