"""Pilot tests of forking from the browser: edit a step, watch the fork beside the original."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from fork_helpers import LOOP, browser, finished, fork_with, open_editor, search_hit
from shown import text_of
from waits import settle, until

from regista.agent import Agent
from regista.providers import AnthropicProvider
from regista.samples.orders_db import OrdersDb
from regista.samples.refund import refund_agent_stale_index
from regista.trace.reader import Trace
from regista.types import LlmRequest, LlmResponse
from regista_tui.forkrun import ForkProgress
from regista_tui.screens.browser import BrowserScreen
from regista_tui.screens.edit import ConfirmRewind
from regista_tui.screens.fork import ForkScreen


@pytest.fixture(autouse=True)
def _shop(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    db = tmp_path / "shop.db"
    monkeypatch.setenv("REGISTA_SAMPLE_DB", str(db))
    return db


async def test_fixing_the_search_result_forks_to_success(tmp_path: Path, _shop: Path) -> None:
    app = browser(LOOP, tmp_path / "forks")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        editor = await open_editor(app, pilot, "j")
        assert "scripted" in text_of(app, "#edit-plan")
        screen = await fork_with(app, pilot, search_hit())
        screen = await finished(app, pilot)

        progress = screen.progress
        assert progress.stop_reason == "end_turn" and progress.error is None
        assert (progress.count("recorded"), progress.count("edit")) == (1, 1)
        diff = screen.diff
        assert diff is not None and diff.first_divergence is not None
        first = diff.first_divergence
        assert (first.a_step, first.b_step) == (1, 1)
        assert screen.pairs.cursor == first.index  # the divergence is selected
        new = [p.b.title for p in diff.pairs if p.b is not None and p.b.kind == "tool"]
        assert new == ["search_orders", "get_order", "issue_refund", "send_email"]

        header = text_of(app, "#compare-header")
        assert "max_turns" in header and "end_turn" in header and "fork at step 1" in header
        status = text_of(app, "#fork-status")
        assert "fork ended: end_turn" in status and "live: scripted" in status
        assert "1 replayed · 1 edited · 7 live" in status
        assert "original: max_turns" in status
        assert f"reopen: regista-tui {LOOP}" in text_of(app, "#fork-where")
        assert "step 1 in original, step 1 in fork" in text_of(app, "#pair-detail")

        trace = Trace.load(progress.path)  # type: ignore[arg-type]
        assert trace.end is not None and trace.end.stop_reason == "end_turn"
        assert trace.start.forked_from is not None
        assert trace.start.forked_from["at_step"] == 1
        assert trace.start.forked_from["live_after"] == 1
        assert editor.content.was_json
    db = OrdersDb(_shop, stale_index=True)  # the live half really refunded the order
    assert [r["order_id"] for r in db.refunds()] == ["ORD-1042"]


async def test_live_half_streams_through_the_anthropic_sdk(
    tmp_path: Path, fake_anthropic: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    answer = "I found ORD-1042 and refunded it in full."
    fake_anthropic.script(
        {
            "content": [{"type": "text", "text": answer}],
            "usage": {"input_tokens": 900, "output_tokens": 14},
        }
    )
    deltas: list[tuple[int, str]] = []
    on_text = ForkProgress.on_text

    def spy(self: ForkProgress, step: int, delta: str) -> None:
        deltas.append((step, delta))
        on_text(self, step, delta)

    monkeypatch.setattr(ForkProgress, "on_text", spy)
    provider = AnthropicProvider(
        "claude-sonnet-4-6", api_key="sk-test", base_url=fake_anthropic.url, max_retries=0
    )
    agent = refund_agent_stale_index(provider=provider)
    app = browser(LOOP, tmp_path / "forks", agent=agent)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await open_editor(app, pilot, "j")
        assert "claude-sonnet-4-6 via anthropic" in text_of(app, "#edit-plan")
        await fork_with(app, pilot, search_hit())
        screen = await finished(app, pilot)
        assert screen.progress.stop_reason == "end_turn"
        assert fake_anthropic.requests[0].streamed  # the TUI asked the adapter to stream
        live = [d for step, d in deltas if step == 2]
        assert len(live) > 1 and "".join(live) == answer  # the text came in pieces
        assert screen.progress.stream_text == answer
        status = text_of(app, "#fork-status")
        assert "live: claude-sonnet-4-6" in status and "1 live" in status
        assert screen.progress.cost_usd is not None and screen.progress.cost_usd > 0
        trace = Trace.load(screen.progress.path)  # type: ignore[arg-type]
        assert trace.end is not None and trace.end.output == answer
        assert trace.steps()[2].source == "live"


class _Stalled:
    """A provider that never answers (until the fork is cancelled)."""

    name = "stalled"

    def __init__(self) -> None:
        self.asked = asyncio.Event()

    async def complete(self, request: LlmRequest, *, on_text: Any = None) -> LlmResponse:
        self.asked.set()
        await asyncio.Event().wait()
        raise AssertionError("unreachable")


async def test_rewind_then_cancel_mid_fork(tmp_path: Path) -> None:
    provider = _Stalled()
    app = browser(LOOP, tmp_path / "forks", agent=refund_agent_stale_index(provider=provider))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("j", "j", "r")
        await app.workers.wait_for_complete()
        await settle(pilot)
        assert isinstance(app.screen, ConfirmRewind)
        await pilot.press("enter")
        await asyncio.wait_for(provider.asked.wait(), 5)
        screen = app.screen
        assert isinstance(screen, ForkScreen) and screen.running
        await settle(pilot)
        assert screen.check_action("stop", ()) is True  # shown in the footer while running
        await pilot.press("escape")  # back is refused while the fork runs
        assert app.screen is screen
        await pilot.press("x")
        screen = await finished(app, pilot)
        assert screen.progress.state == "cancelled"
        assert "cancelled" in text_of(app, "#status")
        assert "fork cancelled" in text_of(app, "#fork-status")
        assert screen.check_action("stop", ()) is False
        trace = Trace.load(screen.progress.path)  # type: ignore[arg-type]
        assert trace.end is not None and trace.end.stop_reason == "cancelled"
        assert [s.source for s in trace.steps()[:2]] == ["recorded", "recorded"]
        await pilot.press("escape")
        assert isinstance(app.screen, BrowserScreen)


async def test_a_provider_error_mid_fork_is_shown_and_recorded(
    tmp_path: Path, fake_anthropic: Any
) -> None:
    from fakes.anthropic_server import FakeError

    fake_anthropic.script(FakeError(500, message="the fake API is down"))
    provider = AnthropicProvider(
        "claude-sonnet-4-6", api_key="sk-test", base_url=fake_anthropic.url, max_retries=0
    )
    app = browser(LOOP, tmp_path / "forks", agent=refund_agent_stale_index(provider=provider))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("j", "j", "r")
        await app.workers.wait_for_complete()
        await pilot.press("enter")
        screen = await finished(app, pilot)
        assert screen.progress.state == "failed"
        assert "the fake API is down" in text_of(app, "#fork-where")
        assert "the fake API is down" in text_of(app, "#status")
        trace = Trace.load(screen.progress.path)  # type: ignore[arg-type]
        assert trace.end is not None and trace.end.stop_reason == "error"
        await pilot.press("escape")  # the app keeps working
        assert isinstance(app.screen, BrowserScreen)


async def test_an_agent_that_cannot_be_loaded_is_one_line(tmp_path: Path) -> None:
    app = browser(LOOP, tmp_path / "forks", agent="no_such_module_here:agent")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("j", "e")
        await app.workers.wait_for_complete()
        await settle(pilot)
        assert isinstance(app.screen, BrowserScreen)
        assert "cannot import 'no_such_module_here'" in text_of(app, "#status")
        assert not (tmp_path / "forks").exists()


async def test_a_missing_api_key_says_what_to_set(tmp_path: Path) -> None:
    app = browser(LOOP, tmp_path / "forks", agent=Agent(model="claude-sonnet-4-6"))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("r")
        await app.workers.wait_for_complete()
        await settle(pilot)
        assert isinstance(app.screen, BrowserScreen)
        assert "ANTHROPIC_API_KEY" in text_of(app, "#status")


async def test_a_model_answer_edit_forks_from_a_model_step(tmp_path: Path) -> None:
    app = browser(LOOP, tmp_path / "forks")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await open_editor(app, pilot)  # step 0: the model's first answer
        answer = '[{"type": "tool_use", "name": "get_order", "input": {"order_id": "ORD-1042"}}]'
        await fork_with(app, pilot, answer)
        screen = await finished(app, pilot)
        assert screen.progress.error is None
        trace = Trace.load(screen.progress.path)  # type: ignore[arg-type]
        steps = trace.steps()
        assert steps[0].source == "edit" and steps[1].title == "get_order"
        assert steps[1].source == "live"
        diff = screen.diff
        assert diff is not None and diff.first_divergence is not None
        assert diff.first_divergence.a_step == 0


def test_trace_dir_option() -> None:
    from regista_tui.__main__ import _parser

    assert _parser().parse_args(["t.jsonl"]).trace_dir == Path(".regista/traces")
    args = _parser().parse_args(["t.jsonl", "--trace-dir", "forks", "--agent", "m:a"])
    assert (args.trace_dir, args.agent) == (Path("forks"), "m:a")


async def test_the_reopen_command_is_shown_whole_on_a_narrow_screen(tmp_path: Path) -> None:
    """The command that reopens the comparison is meant to be copied: at 80 columns it
    wraps instead of being cut off."""
    # Whatever the clone's own path, the fork's is longer than three lines of 80 columns.
    app = browser(LOOP, tmp_path / ("a-fairly-long-folder-name-for-forks-" * 6))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await open_editor(app, pilot, "j")
        await fork_with(app, pilot, search_hit())
        screen = await finished(app, pilot)
        command = screen.progress.reopen_command()
        assert command is not None and len(command) > 3 * 80
        where = screen.query_one("#fork-where")
        assert where.size.height >= 4
        shown = "".join(
            strip.text for strip in where.render_lines(where.content_region.reset_offset)
        )
        assert command.replace(" ", "") in shown.replace(" ", "")
        await pilot.press("c")  # and copied whole, without the line breaks of the wrap
        await until(pilot, lambda: app.clipboard == command, "the command on the clipboard")
