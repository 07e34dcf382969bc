"""Strict replay of a 1,000-step scripted session vs running it with ScriptedProvider.

Both skip the network, so the replay should cost no more than ~1.5x the scripted run
(it hashes every request and checks it against the recording).

    python bench/bench_replay.py [STEPS]
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from regista import Agent, replay, tool
from regista.providers import ScriptedProvider


@tool
def lookup(key: str) -> str:
    """Look a key up."""
    return f"value of {key}: " + "x" * 200


def model(request: Any) -> dict[str, Any]:
    turn = sum(1 for m in request.messages if m["role"] == "assistant")
    if turn >= TURNS:
        return {"content": [{"type": "text", "text": "done"}]}
    return {
        "content": [
            {"type": "text", "text": f"step {turn}"},
            {
                "type": "tool_use",
                "id": f"toolu_{turn}",
                "name": "lookup",
                "input": {"key": f"k{turn}"},
            },
        ],
        "stop_reason": "tool_use",
        "usage": {"input_tokens": 100 + turn, "output_tokens": 20},
    }


TURNS = 500


async def main(steps: int) -> None:
    global TURNS
    TURNS = steps // 2
    with tempfile.TemporaryDirectory() as tmp:
        agent = Agent(
            instructions="bench",
            tools=[lookup],
            provider=ScriptedProvider(model),
            trace_dir=Path(tmp),
            max_turns=TURNS + 1,
        )
        t0 = time.perf_counter()
        result = await agent.run("go")
        scripted = time.perf_counter() - t0
        t0 = time.perf_counter()
        replayed = await replay(result.trace_path, trace_dir=Path(tmp) / "r")
        replay_s = time.perf_counter() - t0
        assert replayed.steps == result.steps, (replayed.steps, result.steps)
        n = result.steps
        print(f"steps: {n}  trace: {result.trace_path.stat().st_size / 1e6:.2f} MB")
        print(f"scripted run : {scripted:.3f} s  ({scripted / n * 1e3:.3f} ms/step)")
        print(
            f"strict replay: {replay_s:.3f} s  ({replay_s / n * 1e3:.3f} ms/step, "
            f"incl. loading the trace)"
        )
        print(f"replay / scripted: {replay_s / scripted:.2f}x")


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 1000))
