"""Small deterministic traces for the TUI tests, made by running scripted agents."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from regista import Agent, ContextConfig, tool
from regista.context import SUMMARY_SYSTEM
from regista.loop import FakeClock
from regista.providers import ScriptedProvider


@tool
def lookup_order(order_id: str) -> str:
    """Look an order up."""
    if order_id == "A-404":
        raise ValueError(f"order {order_id} not found")
    return f'{{"order_id": "{order_id}", "status": "delivered", "total": 42.5}}'


@tool
def refund(order_id: str, amount: float) -> str:
    """Refund an order."""
    return f"refunded {amount} on {order_id}"


def _use(name: str, **args: Any) -> dict[str, Any]:
    return {"type": "tool_use", "name": name, "input": args}


SCRIPT: list[dict[str, Any]] = [
    {
        "content": [
            {"type": "text", "text": "Let me look the order up."},
            _use("lookup_order", order_id="A-404"),
        ],
        "stop_reason": "tool_use",
        "usage": {"input_tokens": 120, "output_tokens": 20},
    },
    {
        "content": [
            {"type": "text", "text": "That id failed; trying the other one."},
            _use("lookup_order", order_id="A-100"),
        ],
        "stop_reason": "tool_use",
        "usage": {"input_tokens": 180, "output_tokens": 22},
    },
    {
        "content": [_use("refund", order_id="A-100", amount=42.5)],
        "stop_reason": "tool_use",
        "usage": {"input_tokens": 240, "output_tokens": 18},
    },
    {
        "content": [{"type": "text", "text": "I could not refund A-100: refunds need approval."}],
        "stop_reason": "end_turn",
        "usage": {"input_tokens": 150, "output_tokens": 16},
    },
]


SUMMARY = {
    "content": [{"type": "text", "text": "Summary: A-404 failed, A-100 delivered."}],
    "usage": {"input_tokens": 90, "output_tokens": 10},
}


def scripted(script: list[dict[str, Any]]) -> ScriptedProvider:
    """Answers the script in order, and every compaction request with :data:`SUMMARY`."""
    answers = iter(script)

    def answer(request: Any) -> dict[str, Any]:
        if request.system == SUMMARY_SYSTEM:
            return SUMMARY
        return next(answers)

    return ScriptedProvider(answer)


def no_refunds(call: Any) -> bool:
    return bool(call.name != "refund")


def make_trace(
    folder: Path,
    *,
    session_id: str = "01TESTTRACE0000000000000001",
    script: list[dict[str, Any]] | None = None,
    compact: bool = True,
) -> Path:
    """Run the refund agent on a script; errors, a denial and a compaction included."""
    agent = Agent(
        model="claude-sonnet-4-6",
        instructions="You are a careful refund agent.",
        tools=[lookup_order, refund],
        provider=scripted(script or SCRIPT),
        policy=no_refunds,
        trace_dir=folder,
        context=ContextConfig(max_tokens=250, keep_last=1) if compact else None,
        clock=FakeClock(),
        session_id=session_id,
    )
    result = asyncio.run(agent.run("Refund order A-404 please."))
    return result.trace_path


if __name__ == "__main__":
    import sys

    print(make_trace(Path(sys.argv[1] if len(sys.argv) > 1 else "/tmp/regista-tui-demo")))
