"""An agent whose tools leave visible side effects, for the kill -9 resume test.

Each tool appends ``<tool_use id>`` to the file named by ``REGISTA_EFFECTS``; the model is
scripted and paced so a test can kill the process at many points of the run.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any

from regista import Agent, tool
from regista.providers import ScriptedProvider

TURNS = 6


def _effects() -> Path:
    return Path(os.environ["REGISTA_EFFECTS"])


@tool
def record(item: str) -> str:
    """Append an item to the ledger (a side effect that must happen once)."""
    time.sleep(0.01)
    with _effects().open("a") as f:
        f.write(item + "\n")
    return f"recorded {item}"


def _model(request: Any) -> dict[str, Any]:
    time.sleep(0.01)
    turn = sum(1 for m in request.messages if m["role"] == "assistant")
    if turn >= TURNS:
        return {"content": [{"type": "text", "text": "All items recorded."}]}
    return {
        "content": [
            {
                "type": "tool_use",
                "id": f"toolu_{turn}_a",
                "name": "record",
                "input": {"item": f"toolu_{turn}_a"},
            },
            {
                "type": "tool_use",
                "id": f"toolu_{turn}_b",
                "name": "record",
                "input": {"item": f"toolu_{turn}_b"},
            },
        ],
        "stop_reason": "tool_use",
    }


def ledger_agent() -> Agent:
    return Agent(
        instructions="Record every item.",
        tools=[record],
        provider=ScriptedProvider(_model),
        trace_dir=os.environ.get("REGISTA_TRACE_DIR", ".regista/traces"),
        max_turns=TURNS + 2,
    )


if __name__ == "__main__":
    result = ledger_agent().run_sync("Record items.")
    print(result.trace_path)
    sys.exit(0)
