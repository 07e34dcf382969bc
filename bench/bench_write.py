"""Per-event cost of the trace writer, with and without ``fsync``.

Writes typical events (a tool call, a 2 KB tool result, a model response) and reports the
mean cost per event in microseconds: building the pydantic event, serialising it, and
the one ``write`` (plus the ``fsync``) that puts it on disk.

    python bench/bench_write.py
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Any

from regista.trace.events import LlmResponseEvent, SessionStart, ToolCall, ToolResult
from regista.trace.writer import TraceWriter

RESPONSE = {
    "id": "msg_1",
    "model": "claude-sonnet-4-6",
    "role": "assistant",
    "content": [
        {"type": "text", "text": "Let me look that up. " * 5},
        {"type": "tool_use", "id": "toolu_1", "name": "get_order", "input": {"id": "ORD-1"}},
    ],
    "stop_reason": "tool_use",
    "stop_sequence": None,
    "usage": {"input_tokens": 1200, "output_tokens": 60},
}

EVENTS: dict[str, tuple[type[Any], dict[str, Any]]] = {
    "tool.call": (
        ToolCall,
        {"step": 1, "turn": 0, "tool_use_id": "toolu_1", "name": "get_order",
         "input": {"order_id": "ORD-1042"}},
    ),
    "tool.result (2 KB)": (
        ToolResult,
        {"step": 1, "tool_use_id": "toolu_1", "name": "get_order", "content": "x" * 2048},
    ),
    "llm.response": (
        LlmResponseEvent,
        {"step": 0, "turn": 0, "response": RESPONSE, "provider": "anthropic",
         "cost_usd": 0.0045, "duration_ms": 812.5},
    ),
}  # fmt: skip


def per_event_us(folder: Path, cls: type[Any], fields: dict[str, Any], *, fsync: bool) -> float:
    n = 300 if fsync else 5000
    with TraceWriter(folder / f"{cls.__name__}-{fsync}.jsonl", "S1", fsync=fsync) as w:
        w.write(SessionStart, task="bench", model="m", provider="scripted")
        for _ in range(50):  # warm up
            w.write(cls, **fields)
        t0 = time.perf_counter()
        for _ in range(n):
            w.write(cls, **fields)
        return (time.perf_counter() - t0) / n * 1e6


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        print(f"{'event':<20} {'no fsync':>12} {'fsync':>12}")
        for name, (cls, fields) in EVENTS.items():
            plain = per_event_us(folder, cls, fields, fsync=False)
            synced = per_event_us(folder, cls, fields, fsync=True)
            print(f"{name:<20} {plain:>9.1f} µs {synced:>9.1f} µs")


if __name__ == "__main__":
    main()
