"""An agent whose one turn calls a slow tool, then a fast one, for the kill -9 test.

``slow`` blocks until the process is killed when ``REGISTA_SLOW_BLOCKS`` is set; ``fast``
returns at once. Both append ``<tool_use id>`` to the file named by ``REGISTA_EFFECTS``.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

from regista import Agent, tool
from regista.providers import ScriptedProvider
from regista.tools import current_tool_call


def _effect() -> None:
    call = current_tool_call()
    assert call is not None
    with Path(os.environ["REGISTA_EFFECTS"]).open("a") as f:
        f.write(call.id + "\n")


@tool
async def slow(item: str) -> str:
    """A tool that takes its time."""
    if os.environ.get("REGISTA_SLOW_BLOCKS"):
        await asyncio.Event().wait()  # until the process is killed
    _effect()
    return f"slow {item}"


@tool
def fast(item: str) -> str:
    """A tool that returns at once."""
    _effect()
    return f"fast {item}"


def _model(request: Any) -> dict[str, Any]:
    if any(m["role"] == "assistant" for m in request.messages):
        return {"content": [{"type": "text", "text": "Both done."}]}
    return {
        "content": [
            {"type": "tool_use", "id": "toolu_slow", "name": "slow", "input": {"item": "a"}},
            {"type": "tool_use", "id": "toolu_fast", "name": "fast", "input": {"item": "b"}},
        ],
        "stop_reason": "tool_use",
    }


def slow_fast_agent() -> Agent:
    return Agent(
        instructions="Do both.",
        tools=[slow, fast],
        provider=ScriptedProvider(_model),
        trace_dir=os.environ.get("REGISTA_TRACE_DIR", ".regista/traces"),
    )


if __name__ == "__main__":
    print(slow_fast_agent().run_sync("Do both.").trace_path)
    sys.exit(0)
