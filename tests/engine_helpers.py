"""Small sessions for the engine's tests: scripted models, a few tools, a tmp trace dir.

``use`` is :func:`builders.tool_use`; ``reply`` answers with the usage these tests count on.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from builders import tool_use

from regista import Agent, tool
from regista.loop import FakeClock
from regista.providers import ScriptedProvider

use = tool_use  # the short name these tests call it by


def reply(*blocks: dict[str, Any], text: str | None = None) -> dict[str, Any]:
    content = ([{"type": "text", "text": text}] if text is not None else []) + list(blocks)
    return {
        "content": content,
        "stop_reason": "tool_use" if blocks else "end_turn",
        "usage": {"input_tokens": 100, "output_tokens": 20},
    }


@tool
def echo(text: str, times: int = 1) -> str:
    """Repeat a text.

    Args:
        text: What to repeat.
        times: How many times.
    """
    return text * times


@tool
async def add(a: int, b: int) -> dict[str, int]:
    """Add two numbers."""
    return {"sum": a + b}


@tool
def boom(why: str) -> str:
    """Always fails."""
    raise RuntimeError(f"exploded: {why}")


def agent(tmp_path: Path, script: list[Any] | Any, **kwargs: Any) -> Agent:
    kwargs.setdefault("tools", [echo, add, boom])
    kwargs.setdefault("clock", FakeClock())
    return Agent(
        model=kwargs.pop("model", "claude-sonnet-4-6"),
        instructions=kwargs.pop("instructions", "Be brief."),
        provider=kwargs.pop("provider", None) or ScriptedProvider(script),
        trace_dir=tmp_path,
        **kwargs,
    )


#: Three turns: a tool call, a parallel pair (one failing), then the answer.
SCRIPT = [
    reply(use("toolu_1", "echo", text="hi", times=2), text="Echoing."),
    reply(use("toolu_2", "add", a=2, b=3), use("toolu_3", "boom", why="test")),
    reply(text="Done: hihi, 5."),
]
