"""ForkProgress: what a fork's status lines say, from the events its trace gets."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from regista.fork import ToolResultEdit
from regista.trace.events import (
    ErrorEvent,
    LlmResponseEvent,
    SessionEnd,
    SessionStart,
    ToolResult,
)
from regista_tui.forkrun import ForkProgress, ForkRequest
from regista_tui.live import LiveHalf

SID = "01FORKRUN00000000000000000"


def _progress(provider: str = "scripted") -> ForkProgress:
    live = LiveHalf(object(), "agent m:a (--agent)", provider, "claude-sonnet-4-6")
    request = ForkRequest(Path("parent.jsonl"), 1, ToolResultEdit("x"), live, Path("forks"))
    return ForkProgress(request)


def _ev(cls: Any, seq: int, **fields: Any) -> Any:
    return cls(session_id=SID, seq=seq, **fields)


def _answer(seq: int, step: int, source: str) -> Any:
    usage = {"input_tokens": 100, "output_tokens": 10}
    return _ev(
        LlmResponseEvent,
        seq,
        step=step,
        turn=step // 2,
        response={"content": [], "usage": usage},
        provider="scripted",
        source=source,
        cost_usd=0.0,
    )


def _result(seq: int, step: int, source: str) -> Any:
    return _ev(ToolResult, seq, step=step, tool_use_id=f"t{step}", name="f", content="ok",
               source=source)  # fmt: skip


def test_counts_tokens_and_the_reopen_command() -> None:
    p = _progress()
    assert "fork starting" in p.status().plain and "scripted" in p.status().plain
    p.on_event(_ev(SessionStart, 0, task="t", model="m", provider="scripted"))
    assert p.path == Path("forks") / f"{SID}.jsonl"
    assert f"trace: forks/{SID}.jsonl" in p.status().plain
    for event in [_answer(1, 0, "recorded"), _result(2, 1, "edit"), _answer(3, 2, "live")]:
        assert p.on_event(event)
    p.on_text(4, "Hel")
    p.on_text(4, "lo")
    assert p.streaming and "step 4 · writing…" in p.stream_line().plain
    assert p.stream_line().plain.endswith("Hello")
    p.on_event(_ev(SessionEnd, 4, stop_reason="end_turn", cost_usd=0.0))
    p.parent = ("max_turns", 0.0)
    line1, line2 = p.status().plain.splitlines()
    assert "fork ended: end_turn" in line1 and "live: scripted" in line1
    assert "1 replayed · 1 edited · 1 live" in line1 and "220 tokens" in line1
    assert "original: max_turns · $0.0000" in line1
    assert line2.strip() == f"reopen: regista-tui parent.jsonl forks/{SID}.jsonl"


def test_a_tool_error_is_shown_while_running_and_a_provider_error_at_the_end() -> None:
    p = _progress("anthropic")
    p.on_event(_ev(SessionStart, 0, task="t", model="m", provider="anthropic"))
    p.on_event(_ev(ErrorEvent, 1, step=3, where="tool", error_type="ValueError", message="boom"))
    line1, line2 = p.status().plain.splitlines()
    assert "live: claude-sonnet-4-6 (anthropic)" in line1
    assert line2.strip() == "step 3: boom"
    p.on_event(_ev(SessionEnd, 2, stop_reason="error", error="ProviderError: 500 down"))
    assert p.status().plain.splitlines()[1].strip() == "ProviderError: 500 down"


def test_cancelled() -> None:
    p = _progress()
    p.on_event(_ev(SessionStart, 0, task="t", model="m", provider="scripted"))
    p.on_event(_ev(SessionEnd, 1, stop_reason="cancelled", error="the run was cancelled"))
    assert p.state == "cancelled" and p.finished
    assert "fork cancelled" in p.status().plain


def test_the_counts_and_cost_come_before_who_answers() -> None:
    """At 80 columns the end of the line is cut: the cost must come before it."""
    p = _progress()
    p.on_event(_ev(SessionStart, 0, task="t", model="m", provider="scripted"))
    p.on_event(_answer(1, 0, "live"))
    line1 = p.status().plain.splitlines()[0]
    assert line1.index("$0.0000") < line1.index("live: scripted"), line1
    assert line1.index("1 live") < line1.index("$0.0000"), line1
