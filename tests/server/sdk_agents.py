"""Plain SDK agent loops (not regista's Agent) and a recording/replaying server for tests."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # agent programs import only the SDK they use
    import anthropic
    import openai

TOOLS_ANTHROPIC = [
    {
        "name": "get_weather",
        "description": "Current weather for a city.",
        "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}},
    }
]
TOOLS_OPENAI = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Current weather for a city.",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    }
]


def get_weather(city: str) -> str:
    return f"sunny in {city}"


def weather_answer(body: dict[str, Any]) -> dict[str, Any]:
    """A fake Messages API's side of ``anthropic_agent``: ask for the weather in Paris, then
    say the tool's result back (``Tool: sunny in Paris``)."""
    last = body["messages"][-1]
    if isinstance(last["content"], str):
        return {"content": [{"type": "tool_use", "id": "toolu_1", "name": "get_weather",
                             "input": {"city": "Paris"}}]}  # fmt: skip
    return {"content": [{"type": "text", "text": f"Tool: {last['content'][0]['content']}"}]}


def anthropic_agent(
    client: anthropic.Anthropic,
    task: str = "Weather in Paris?",
    system: str = "You are a weather bot.",
    stream: bool = False,
    tool: Any = get_weather,
) -> str:
    """The loop people write: call, run the tools asked for, call again, until done."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": task}]
    for _ in range(10):
        kwargs: dict[str, Any] = dict(
            model="claude-sonnet-4-6",
            max_tokens=512,
            system=system,
            tools=TOOLS_ANTHROPIC,
            messages=messages,
        )
        if stream:
            with client.messages.stream(**kwargs) as s:
                msg = s.get_final_message()
        else:
            msg = client.messages.create(**kwargs)
        messages.append({"role": "assistant", "content": msg.content})
        uses = [b for b in msg.content if b.type == "tool_use"]
        if not uses:
            return "".join(b.text for b in msg.content if b.type == "text")
        messages.append(
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": u.id, "content": tool(**u.input)}
                    for u in uses
                ],
            }
        )
    raise AssertionError("the agent did not finish")


async def anthropic_agent_async(
    client: anthropic.AsyncAnthropic, task: str = "Weather in Paris?"
) -> str:
    messages: list[dict[str, Any]] = [{"role": "user", "content": task}]
    for _ in range(10):
        msg = await client.messages.create(
            model="claude-sonnet-4-6",
            max_tokens=512,
            system="You are a weather bot.",
            tools=TOOLS_ANTHROPIC,
            messages=messages,
        )
        messages.append({"role": "assistant", "content": msg.content})
        uses = [b for b in msg.content if b.type == "tool_use"]
        if not uses:
            return "".join(b.text for b in msg.content if b.type == "text")
        messages.append(
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": u.id, "content": get_weather(**u.input)}
                    for u in uses
                ],
            }
        )
    raise AssertionError("the agent did not finish")


def openai_agent(
    client: openai.OpenAI,
    task: str = "Weather in Paris?",
    system: str = "You are a weather bot.",
    stream: bool = False,
    tool: Any = get_weather,
) -> str:
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": system},
        {"role": "user", "content": task},
    ]
    for _ in range(10):
        if stream:
            text, calls = "", {}
            for chunk in client.chat.completions.create(
                model="gpt-4o",
                messages=messages,  # type: ignore[arg-type]
                tools=TOOLS_OPENAI,  # type: ignore[arg-type]
                stream=True,
                stream_options={"include_usage": True},
            ):
                if not chunk.choices:
                    continue
                delta = chunk.choices[0].delta
                text += delta.content or ""
                for tc in delta.tool_calls or []:
                    slot = calls.setdefault(tc.index, {"id": "", "name": "", "arguments": ""})
                    slot["id"] = tc.id or slot["id"]
                    if tc.function is not None:
                        slot["name"] = tc.function.name or slot["name"]
                        slot["arguments"] += tc.function.arguments or ""
            tool_calls = [
                {
                    "id": c["id"],
                    "type": "function",
                    "function": {"name": c["name"], "arguments": c["arguments"]},
                }
                for _, c in sorted(calls.items())
            ]
        else:
            resp = client.chat.completions.create(
                model="gpt-4o",
                messages=messages,  # type: ignore[arg-type]
                tools=TOOLS_OPENAI,  # type: ignore[arg-type]
            )
            message = resp.choices[0].message
            text = message.content or ""
            tool_calls = [tc.model_dump() for tc in message.tool_calls or []]
        entry: dict[str, Any] = {"role": "assistant", "content": text or None}
        if tool_calls:
            entry["tool_calls"] = tool_calls
        messages.append(entry)
        if not tool_calls:
            return text
        for tc in tool_calls:
            args = json.loads(tc["function"]["arguments"])
            messages.append({"role": "tool", "tool_call_id": tc["id"], "content": tool(**args)})
    raise AssertionError("the agent did not finish")


@contextmanager
def regista_server(store: Path, **upstreams: str) -> Iterator[Any]:
    """A regista server over ``store`` forwarding to the given upstreams; ``.record_done()``
    ends the recorded sessions."""
    import httpx2

    from regista.server import BackgroundServer, create_app
    from regista.server.record import book

    # nothing may leave the machine: an upstream not given is a closed local port
    closed = "http://127.0.0.1:9"
    ups = {"anthropic": closed, "openai": closed + "/v1", **upstreams}
    app = create_app(store, upstreams=ups, replay_ttl=3600)
    with BackgroundServer(app) as server:
        server.record_done = lambda: book(app.state.ctx).close()  # type: ignore[attr-defined]
        server.app = app  # type: ignore[attr-defined]
        # what an SDK sends: a page's undeclared bodies are refused (regista.server.guard)
        server.http = httpx2.Client(  # type: ignore[attr-defined]
            base_url=server.url, headers={"content-type": "application/json"}
        )
        yield server
        server.http.close()  # type: ignore[attr-defined]


def new_replay(server: Any, run: str, **spec: Any) -> dict[str, Any]:
    r = server.http.post("/v1/replays", json={"run": run, **spec})
    assert r.status_code == 201, r.text
    data: dict[str, Any] = r.json()
    return data
