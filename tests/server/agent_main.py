"""A plain SDK agent as a program: ``python agent_main.py anthropic|openai`` (or
``anthropic-stream|openai-stream``: the same loop, streaming).

It reads its base URL and key from the environment (as any SDK program does), prints the
final answer, and exits 3 when the replay answers 409 (a divergence)."""

from __future__ import annotations

import os
import sys

from sdk_agents import anthropic_agent, openai_agent


def main() -> int:
    system = os.environ.get("AGENT_SYSTEM", "You are a weather bot.")
    if sys.argv[1] == "anthropic-then-hang":  # one call, then wait to be killed
        import time

        import anthropic

        anthropic.Anthropic(max_retries=0).messages.create(
            model="claude-sonnet-4-6",
            max_tokens=64,
            system=system,
            messages=[{"role": "user", "content": "Weather in Paris?"}],
        )
        print("called", flush=True)
        time.sleep(120)
        return 0
    if sys.argv[1] in ("anthropic-loop", "anthropic-stream-loop"):  # until killed
        import anthropic

        client = anthropic.Anthropic(max_retries=0)
        messages: list[dict[str, object]] = [{"role": "user", "content": "Count."}]
        for n in range(10_000):
            ask = {"model": "claude-sonnet-4-6", "max_tokens": 64, "system": system}
            if sys.argv[1] == "anthropic-stream-loop":
                with client.messages.stream(**ask, messages=messages) as stream:  # type: ignore[arg-type]
                    msg = stream.get_final_message()
            else:
                msg = client.messages.create(**ask, messages=messages)  # type: ignore[arg-type]
            print(f"called {n + 1}", flush=True)
            uses = [b for b in msg.content if b.type == "tool_use"]
            messages.append({"role": "assistant", "content": [b.model_dump() for b in msg.content]})
            messages.append(
                {
                    "role": "user",
                    "content": [
                        {"type": "tool_result", "tool_use_id": u.id, "content": f"counted {n}"}
                        for u in uses
                    ]
                    or "Go on.",
                }
            )
        return 0
    if sys.argv[1] == "anthropic-fresh":  # its tool answers a new id and time on every run
        import uuid
        from datetime import UTC, datetime

        import anthropic

        def book(city: str) -> str:
            return f"booking {uuid.uuid4()} made {datetime.now(UTC).isoformat()} for {city}"

        try:
            print(anthropic_agent(anthropic.Anthropic(max_retries=0), system=system, tool=book))
        except anthropic.ConflictError as exc:
            print(f"conflict: {exc}", file=sys.stderr)
            return 3
        return 0
    stream = sys.argv[1].endswith("-stream")  # anthropic-stream, openai-stream
    if sys.argv[1] in ("anthropic", "anthropic-stream"):
        import anthropic

        try:
            print(anthropic_agent(anthropic.Anthropic(max_retries=0), system=system, stream=stream))
        except anthropic.ConflictError as exc:
            print(f"conflict: {exc}", file=sys.stderr)
            return 3
        return 0
    import openai

    try:
        print(openai_agent(openai.OpenAI(max_retries=0), system=system, stream=stream))
    except openai.ConflictError as exc:
        print(f"conflict: {exc}", file=sys.stderr)
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(main())
