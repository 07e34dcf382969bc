"""Worked example: the sample traces as $0 regression tests of the sample agents.

Each test plays a golden trace against the *current* refund agent (its prompts, tool
schemas and control flow) under a strict replay: no key, no network, no side effects.
"""

from __future__ import annotations

import pytest

from regista.loop import RunResult


@pytest.mark.tape("sample_traces/refund_happy.jsonl")
def test_refund_happy_path(tape_result: RunResult) -> None:
    assert tape_result.stop_reason == "end_turn"
    assert "refunded $189.00" in (tape_result.output or "")
    assert tape_result.cost_usd == 0.0


@pytest.mark.tape("sample_traces/refund_search_loop.jsonl")
def test_refund_search_loop_still_loops(tape_result: RunResult) -> None:
    assert tape_result.stop_reason == "max_turns"


@pytest.mark.tape("sample_traces/refund_denied_compaction.jsonl")
def test_denial_and_compaction(tape_result: RunResult) -> None:
    assert tape_result.recorded_steps == tape_result.steps
