"""A plain agent on the OpenAI Responses API (the real ``openai`` SDK), as a function and as a
program: ``python responses_agent.py [stream] [chain]``.

The program reads its base URL and key from the environment, prints ``FINAL: <text>`` and
exits 0, or prints the error and exits 3 on a 409 (a replay's divergence). ``chain`` sends
only the new items with ``previous_response_id`` instead of the whole conversation.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from typing import Any

import openai

TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "name": "get_weather",
        "description": "Current weather for a city.",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
        "strict": False,
    }
]


def get_weather(city: str) -> str:
    return f"Sunny in {city}, 21 C"


def responses_agent(
    client: openai.OpenAI,
    task: str = "Weather in Paris?",
    instructions: str = "You are a weather bot.",
    *,
    stream: bool = False,
    chain: bool = False,
    tool: Callable[..., str] = get_weather,
) -> str:
    """Call the model until it answers without a tool call; return its text."""
    items: list[Any] = [{"role": "user", "content": task}]
    previous: str | None = None
    for _ in range(10):
        ask: dict[str, Any] = {
            "model": "gpt-5-mini",
            "instructions": instructions,
            "tools": TOOLS,
            "input": items,
            "store": chain,
        }
        if previous is not None:
            ask["previous_response_id"] = previous
        if stream:
            with client.responses.stream(**ask) as events:
                response = events.get_final_response()
        else:
            response = client.responses.create(**ask)
        calls = [o for o in response.output if o.type == "function_call"]
        if not calls:
            return response.output_text
        outputs = [
            {
                "type": "function_call_output",
                "call_id": c.call_id,
                "output": tool(**json.loads(c.arguments)),
            }
            for c in calls
        ]
        if chain:
            previous = response.id
            items = outputs
        else:
            items = [*items, *[o.model_dump(exclude_none=True) for o in response.output], *outputs]
    raise AssertionError("the agent did not finish")


def main() -> int:
    task = os.environ.get("AGENT_TASK", "Weather in Paris?")
    client = openai.OpenAI(max_retries=0)
    try:
        text = responses_agent(
            client, task, stream="stream" in sys.argv[1:], chain="chain" in sys.argv[1:]
        )
    except openai.APIStatusError as exc:
        print(f"ERROR {exc.status_code}: {exc.message}", flush=True)
        return 3 if exc.status_code == 409 else 1
    print(f"FINAL: {text}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
