"""A small trace of odd content for ``regista show``: wide and control characters, long
and blank texts, errors, denials, unfinished steps, compactions, recorded and edited steps,
built from the event models with fixed values (the same bytes every time)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from regista.trace.events import (
    ContextCompaction,
    ErrorEvent,
    LlmRequestEvent,
    LlmResponseEvent,
    PermissionDecision,
    SessionEnd,
    SessionStart,
    ToolCall,
    ToolResult,
)

SID = "01JODD00000000000000000000"
WIDE = "漢字のテキスト 🚀 ｆｕｌｌ"
CONTROL = "bell\x07 esc\x1b[31m red\x1b[0m del\x7f csi\x9b tab\tnew\nline"
LONG = ("word " * 40 + "\n\n\t ") * 6
BLANKS = " \n\t " * 300 + "late words at the end " * 3


def odd_trace(
    path: Path,
    *,
    fork: bool = False,
    end: bool = True,
    steps: bool = True,
    shuffled: bool = False,
) -> Path:
    """Write the odd trace at ``path``: a replay of another run (a fork with ``fork``), with
    a ``session.end`` unless ``end`` is false, and no steps without ``steps``. With
    ``shuffled``, events of some steps come in an odd order, twice, or in another step."""
    events: list[Any] = []

    def add(cls: Any, **fields: Any) -> None:
        events.append(
            cls(
                session_id=SID, seq=len(events), ts=f"2026-01-01T00:00:{len(events):02d}Z", **fields
            )
        )

    add(
        SessionStart,
        task="Odd task: " + WIDE + " " + CONTROL + " " + LONG,
        model="claude-sonnet-4-6",
        provider="anthropic",
        agent_ref="tests.odd:agent\x1b[2J",
        replay_of=None if fork else "01JPREV0000000000000000000",
        forked_from={"session_id": "01JPREV0000000000000000000", "at_step": 3} if fork else None,
        metadata={"synthetic": True},
    )
    step = 0

    def model(text: str | None, uses: list[dict[str, Any]], **kw: Any) -> None:
        nonlocal step
        add(
            LlmRequestEvent,
            step=step,
            turn=step // 3,
            request_hash=f"{step:064x}",
            model=kw.pop("req_model", "claude-sonnet-4-6"),
            max_tokens=1024,
            messages=[{"role": "user", "content": "hi"}] if step == 0 else [],
            messages_prefix=0 if step == 0 else 1,
        )
        if kw.pop("fail", False):
            add(
                ErrorEvent,
                step=step,
                where="provider",
                error_type="ProviderError",
                message="overloaded " + WIDE + CONTROL,
            )
            step += 1
            return
        blocks: list[dict[str, Any]] = []
        if text is not None:
            blocks.append({"type": "text", "text": text})
        blocks += uses
        add(
            LlmResponseEvent,
            step=step,
            turn=step // 3,
            response={
                "content": blocks,
                "stop_reason": kw.pop("stop", "tool_use" if uses else "end_turn"),
                "usage": {"input_tokens": 1000 * step + 7, "output_tokens": 12345 + step},
            },
            provider=kw.pop("provider", "anthropic"),
            source=kw.pop("source", "live"),
            cost_usd=0.0012,
            duration_ms=kw.pop("ms", 1234.5 + step),
        )
        step += 1

    def tool(name: str, args: dict[str, Any], content: Any, **kw: Any) -> None:
        nonlocal step
        uid = f"toolu_{step:04d}"
        add(ToolCall, step=step, turn=step // 3, tool_use_id=uid, name=name, input=args)
        allowed = kw.pop("allowed", True)
        add(
            PermissionDecision,
            step=step,
            tool_use_id=uid,
            allowed=allowed,
            reason=None if allowed else "policy says no " + WIDE,
            by="policy",
        )
        if content is not None:
            add(
                ToolResult,
                step=step,
                tool_use_id=uid,
                name=name,
                content=content,
                is_error=kw.pop("is_error", not allowed),
                source=kw.pop("source", "live"),
                duration_ms=kw.pop("ms", 3.25),
            )
        if kw.pop("error", False):
            add(ErrorEvent, step=step, where="tool", error_type="ToolError", message="boom")
        step += 1

    use = {"type": "tool_use", "id": "x", "name": "search", "input": {"q": WIDE, "n": 3}}
    model("Let me look. " + WIDE, [use])
    tool("search", {"q": WIDE, "n": 3}, "found:\n" + CONTROL + "\n" + LONG)
    model(None, [use, {"type": "tool_use", "id": "y", "name": "get_order", "input": {}}])
    tool("issue_refund", {"order": "ORD-1", "amount": 12.5}, "denied by policy", allowed=False)
    tool("get_order", {"id": "ORD-2"}, "Error: not found", is_error=True)
    tool("fetch", {"url": "https://example.org/" + "a" * 300}, [{"type": "text", "text": LONG}])
    tool("image", {}, [{"type": "image", "source": {"type": "base64", "data": "AAAA"}}])
    tool("weird_name_that_is_much_longer_than_eighteen", {"s": BLANKS}, BLANKS, source="recorded")
    tool("blank", {}, BLANKS)  # its first hundreds of characters are white space
    model("Recorded answer " + LONG, [], provider="scripted", source="recorded")
    model("", [], stop="max_tokens", source="edit")
    model(None, [], fail=True)
    model("   ", [], req_model="other-model-" + WIDE, ms=0.0)
    tool("crash", {"a": [1, 2, {"b": None}]}, "partial", error=True)
    add(
        ContextCompaction,
        step=step,
        turn=9,
        replaced=[{"role": "user", "content": "old"}] * 5,
        summary="The story so far: " + WIDE + " " + CONTROL + " " + LONG,
        request_hash="c" * 64,
        tokens_before=123456,
        provider="anthropic",
        source="recorded",
        usage={"input_tokens": 5000, "output_tokens": 300},
        cost_usd=0.01,
        duration_ms=987.6,
    )
    step += 1
    add(ErrorEvent, step=None, where="agent", error_type="AgentError", message="loose error")
    model("Done: " + WIDE * 10, [])
    tool("unfinished", {"x": 1}, None)  # the process died before the result
    if not steps:
        events = events[:1]
    if shuffled:
        _shuffle(events)
    if end:
        add(
            SessionEnd,
            stop_reason="max_turns",
            output="The answer " + WIDE + " " + CONTROL + " " + LONG,
            turns=9,
            steps=step,
            tool_calls=9,
            usage={"input_tokens": 1, "output_tokens": 2},
            cost_usd=None,
            duration_ms=65432.1,
            error="stopped after max turns\x1b[0m " + LONG,
            replay={
                "recorded": 3,
                "edit": 1,
                "live": 12,
                "saved": {"calls": 2, "tokens": 4321, "cost_usd": 0.5, "model_ms": 2500},
            },
        )
    path.write_bytes(b"".join(orjson.dumps(ev.model_dump(mode="json")) + b"\n" for ev in events))
    return path


def _shuffle(events: list[Any]) -> None:
    """Odd orders a reader must take as they come (``seq`` renumbered after)."""
    by_step: dict[int, list[int]] = {}
    for i, ev in enumerate(events):
        if getattr(ev, "step", None) is not None:
            by_step.setdefault(ev.step, []).append(i)
    call, decision, result = by_step[1]  # a tool's result before its call and decision
    events[call], events[decision], events[result] = (
        events[result],
        events[call],
        events[decision],
    )
    first = events[by_step[4][0]]  # a failing result after a good one, and a second denial
    again = [ev for ev in events if getattr(ev, "step", None) == 5]
    events.insert(by_step[4][-1] + 1, again[2].model_copy(update={"step": 4}))
    events.insert(by_step[4][-1] + 1, again[1].model_copy(update={"step": 4, "allowed": False}))
    # An error before its step's request, and a tool result in a model step.
    events.insert(
        by_step[2][0], ErrorEvent(session_id=SID, seq=0, step=2, error_type="E", message="early")
    )
    events.append(first.model_copy(update={"step": 0}))
    for seq, ev in enumerate(events):
        ev.__dict__["seq"] = seq
