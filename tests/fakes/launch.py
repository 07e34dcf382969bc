"""The fake providers for tests in other languages (node's test runner, vitest, jest).

``python tests/fakes/launch.py [--serve STORE]`` starts the fake Anthropic and OpenAI APIs on
127.0.0.1 (and, with ``--serve``, a regista server over STORE whose upstreams they are),
prints their base URLs as one JSON line::

    {"anthropic": "http://127.0.0.1:PORT", "openai": "http://127.0.0.1:PORT/v1",
     "regista": "http://127.0.0.1:PORT"}

and serves until its standard input closes (the test process that started it went away).

The fakes play the example weather agent's conversation (``examples/node-agent``): asked
anything, the model calls ``get_weather`` for the city it was asked about; given the
tool's result, it answers with it (so a fork that edits the result sees the edit in the
live answer).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

# run as a script: the tests' folder is where ``fakes`` is found, as under pytest
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from fakes.anthropic_server import FakeAnthropicServer
from fakes.openai_server import FakeOpenAIServer


def _city(text: str) -> str:
    m = re.search(r"\bin ([A-Z][a-zA-Z]+)", text)
    return m.group(1) if m else "Paris"


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            str(b.get("text") or b.get("content") or "") for b in content if isinstance(b, dict)
        )
    return ""


def anthropic_answer(body: dict[str, Any]) -> dict[str, Any]:
    """Call ``get_weather``, then answer with its result."""
    messages = body.get("messages") or []
    last = messages[-1] if messages else {}
    content = last.get("content") if isinstance(last, dict) else None
    results = [b for b in content or [] if isinstance(b, dict) and b.get("type") == "tool_result"]
    if results:
        said = _text(results[-1].get("content"))
        return {"content": [{"type": "text", "text": f"The weather: {said}"}]}
    city = _city(_text(content))
    n = len(messages)
    return {
        "content": [
            {
                "type": "tool_use",
                "id": f"toolu_{n:04d}",
                "name": "get_weather",
                "input": {"city": city},
            },
        ]
    }


def openai_answer(body: dict[str, Any]) -> dict[str, Any]:
    """The same conversation in chat completions."""
    messages = body.get("messages") or []
    last = messages[-1] if messages else {}
    if isinstance(last, dict) and last.get("role") == "tool":
        return {"content": f"The weather: {_text(last.get('content'))}"}
    city = _city(_text(last.get("content") if isinstance(last, dict) else ""))
    call = {
        "id": f"call_{len(messages):04d}",
        "name": "get_weather",
        "arguments": json.dumps({"city": city}),
    }
    return {"content": None, "tool_calls": [call]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python tests/fakes/launch.py")
    parser.add_argument("--serve", metavar="STORE", help="also a regista server over STORE")
    args = parser.parse_args(argv)
    anthropic = FakeAnthropicServer().answer_with(anthropic_answer).start()
    openai = FakeOpenAIServer().answer_with(openai_answer).start()
    urls = {"anthropic": anthropic.url, "openai": openai.url}
    server = None
    try:
        if args.serve:
            from regista.server import BackgroundServer, create_app

            app = create_app(args.serve, upstreams=dict(urls))
            server = BackgroundServer(app).__enter__()
            urls["regista"] = server.url
        print(json.dumps(urls), flush=True)
        sys.stdin.read()  # until the test process closes it (or goes away)
    finally:
        if server is not None:
            server.__exit__(None, None, None)
        anthropic.stop()
        openai.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
