"""Snapshots of the main screens at 120×40 and 80×24 (pytest-textual-snapshot)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from waits import settle

from regista_tui.__main__ import open_index
from regista_tui.app import RegistaApp


def _browser(path: Path) -> RegistaApp:
    index, notice = open_index(path)
    return RegistaApp(index, notice=notice, settle_s=0)


async def _settle(pilot: Any) -> None:
    await pilot.app.workers.wait_for_complete()
    await pilot.app.screen.workers.wait_for_complete()
    await settle(pilot)


def test_browser_wide(snap_compare: Any, trace_path: Path) -> None:
    """Header (task, "scripted", end_turn, 8 steps), the 8-step timeline with the first step
    selected, the error mark on step 1 and the denial mark on step 5 (no duration: a denied
    call never ran), gists of about 30 characters in the timeline's three fifths of the width,
    the scrubber with its markers, and step 0 in the step view: the model's answer first,
    then its request."""
    assert snap_compare(_browser(trace_path), terminal_size=(120, 40), run_before=_settle)


def test_browser_narrow(snap_compare: Any, trace_path: Path) -> None:
    """At 80×24 the timeline sits above the step view; step 5 (the denied refund) is
    selected and the step view shows its input, the denial and its error result ("not run",
    no duration)."""
    assert snap_compare(
        _browser(trace_path),
        terminal_size=(80, 24),
        press=["colon", "5", "enter"],
        run_before=_settle,
    )


def test_request_diff_tab(snap_compare: Any, trace_path: Path) -> None:
    """Step 2's request diff: the assistant's tool_use and the error tool_result added as
    request.messages[1] and [2], each drawn below its line as the step view draws it (the
    tool_use input as indented JSON, no escaped quotes)."""

    async def run_before(pilot: Any) -> None:
        await pilot.press("j", "j", "v", "v")
        await _settle(pilot)

    assert snap_compare(_browser(trace_path), terminal_size=(120, 40), run_before=run_before)


def test_help_screen(snap_compare: Any, trace_path: Path) -> None:
    """The help screen over the browser lists the keys and what they do."""
    assert snap_compare(
        _browser(trace_path),
        terminal_size=(120, 40),
        press=["question_mark"],
        run_before=_settle,
    )


def test_compare_wide(snap_compare: Any, trace_path: Path, other_trace_path: Path) -> None:
    """Two runs side by side: both run lines and the counts legend in the header, the
    aligned pairs with gaps, the first divergence selected and its field diff below, and
    "/ Search" in the footer."""
    app = RegistaApp(compare=(trace_path, other_trace_path))
    assert snap_compare(app, terminal_size=(120, 40), run_before=_settle)


def test_compare_narrow(
    snap_compare: Any, trace_path: Path, replay_path: Path, tmp_path: Path
) -> None:
    """A trace against its replay at 80×24: every pair is "same", and the status line says
    the runs are the same step for step; the footer keeps n / N, : and / in view."""
    stable = tmp_path / "replay.jsonl"  # the replay's own file name is a fresh ULID
    stable.write_bytes(replay_path.read_bytes())
    app = RegistaApp(compare=(trace_path, stable))
    assert snap_compare(app, terminal_size=(80, 24), run_before=_settle)
