"""A small tool-using agent on a plain SDK, as a program, for the conformance matrix.

``python plain_sdk_agent.py anthropic|openai [stream]``: the loop of
``tests/server/sdk_agents.py`` (ask, run ``get_weather``, ask again, until the model is done)
on a client with the SDK's own defaults, retries included. It reads its base URL and key
from the environment, prints the final answer, and writes to stderr how many HTTP requests
the SDK sent (``requests: N``, retries counted). A 409 prints ``conflict: …`` and exits 3.
"""

from __future__ import annotations

import os
import sys
from typing import Any

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "server"))

from sdk_agents import anthropic_agent, openai_agent


def main() -> int:
    provider = sys.argv[1]
    stream = sys.argv[2:] == ["stream"]
    system = os.environ.get("AGENT_SYSTEM", "You are a weather bot.")
    sent = 0

    def count(request: Any) -> None:
        nonlocal sent
        sent += 1

    hooks = {"request": [count]}
    try:
        if provider == "anthropic":
            import anthropic

            http = anthropic.DefaultHttpxClient(event_hooks=hooks)
            client = anthropic.Anthropic(http_client=http)
            try:
                print(anthropic_agent(client, system=system, stream=stream))
            except anthropic.ConflictError as exc:
                print(f"conflict: {exc}", file=sys.stderr)
                return 3
        else:
            import openai

            oclient = openai.OpenAI(http_client=openai.DefaultHttpxClient(event_hooks=hooks))
            try:
                print(openai_agent(oclient, system=system, stream=stream))
            except openai.ConflictError as exc:
                print(f"conflict: {exc}", file=sys.stderr)
                return 3
    finally:
        print(f"requests: {sent}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
