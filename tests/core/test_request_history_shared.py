"""The agent loop hands each request the same message objects as the request before it:
the request hasher recognises the history it has hashed by identity, and a copied history
would be compared message by message (quadratic in the session's length)."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

from regista import Agent, tool
from regista.providers import ScriptedProvider
from regista.types import LlmRequest


@tool
def lookup(key: str) -> str:
    """Look a key up."""
    return f"value of {key}"


async def test_consecutive_requests_share_their_history(tmp_path: Path) -> None:
    seen: list[LlmRequest] = []

    def model(request: Any) -> dict[str, Any]:
        seen.append(request)
        turn = len(seen)
        if turn > 3:
            return {"content": [{"type": "text", "text": "done"}]}
        block = {"type": "tool_use", "id": f"t{turn}", "name": "lookup", "input": {"key": "k"}}
        return {"content": [block], "stop_reason": "tool_use"}

    agent = Agent(tools=[lookup], provider=ScriptedProvider(model), trace_dir=tmp_path)
    await agent.run("go")
    assert len(seen) == 4
    for before, after in itertools.pairwise(seen):
        assert after.messages is not before.messages
        assert all(a is b for a, b in zip(before.messages, after.messages, strict=False))
