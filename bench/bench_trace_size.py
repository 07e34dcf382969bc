"""Trace size against session length: a scripted session of 200 and of 400 turns.

Each turn calls a tool that returns 2 KB. The requests an agent sends carry the whole
history, so storing them in full would grow the trace quadratically; regista stores only
what is new in each request, so 400 turns should take about twice the bytes of 200.

    python bench/bench_trace_size.py
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from regista import Agent, tool
from regista.loop import FakeClock
from regista.providers import ScriptedProvider

PAYLOAD = "r" * 2048


@tool
def fetch(page: int) -> str:
    """Fetch one page of a long document.

    Args:
        page: The page number.
    """
    return f"page {page}: {PAYLOAD}"


def _model(request: Any) -> dict[str, Any]:
    n = sum(1 for m in request.messages if m["role"] == "assistant")
    return {
        "content": [
            {"type": "text", "text": f"Reading page {n}."},
            {"type": "tool_use", "id": f"toolu_{n:05d}", "name": "fetch", "input": {"page": n}},
        ],
        "usage": {"input_tokens": 1000 + 520 * n, "output_tokens": 30},
    }


def trace_size(turns: int, folder: Path) -> int:
    agent = Agent(
        instructions="Read every page.",
        tools=[fetch],
        provider=ScriptedProvider(_model),
        trace_dir=folder / str(turns),
        max_turns=turns,
        clock=FakeClock(),
    )
    result = agent.run_sync("Read the whole document.")
    return result.trace_path.stat().st_size


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        small = trace_size(200, Path(tmp))
        large = trace_size(400, Path(tmp))
    print(f"200 turns: {small:,} bytes")
    print(f"400 turns: {large:,} bytes")
    print(f"ratio:     {large / small:.3f} (limit 2.3)")


if __name__ == "__main__":
    main()
