"""The OpenAI Responses API's clients under regista: the plain ``openai`` SDK's
``client.responses.create`` (JSON and SSE) and the OpenAI Agents SDK (``openai-agents``, whose
default model is the Responses API) with a function tool, against a fake Responses API.

Each fills its row: recorded through the proxy (one run, ``regista verify`` passes, ``show``
shows the task), a strict replay with the provider down serves every call and the client
returns what it did, a changed prompt gets a 409 the client does not retry (the requests it
sent are counted), a loose replay serves in order, and a fork with an edited tool result goes
live after it (the provider sees the edit).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import openai
import pytest
from fakes.responses_server import FakeResponsesServer
from server.responses_agent import responses_agent
from server.sdk_agents import new_replay, regista_server

from conformance.matrix import Row, pkg_version, row
from regista.cli.main import main
from regista.trace.reader import Trace

TASK = "What is the weather in Paris?"
SYSTEM = "You are a weather bot."
CHANGED = "You are a poet."
EDIT = "rainy in Paris"

#: ``run(base_url, instructions) -> final text``
Client = Callable[[str, str], str]


def get_weather(city: str) -> str:
    """Current weather for a city.

    Args:
        city: The city.
    """
    return f"sunny in {city}"


def _answer(body: dict[str, Any]) -> dict[str, Any]:
    items = body.get("input")
    outputs = [
        i
        for i in (items if isinstance(items, list) else [])
        if isinstance(i, dict) and i.get("type") == "function_call_output"
    ]
    if not outputs:
        call = {"id": "call_w1", "name": "get_weather", "arguments": '{"city": "Paris"}'}
        return {"reasoning": "Look it up.", "tool_calls": [call]}
    return {"text": f"The tool says: {outputs[-1]['output']}"}


def _is_conflict(exc: BaseException) -> bool:
    seen: BaseException | None = exc
    while seen is not None:
        if getattr(seen, "status_code", None) == 409:
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def conform(r: Row, run: Client, store: Path, capsys: Any) -> None:
    with FakeResponsesServer() as fake:
        fake.answer_with(_answer)
        with regista_server(store, openai=fake.url) as server:
            recorded = run(f"{server.url}/v1/record/openai", SYSTEM)
            server.record_done()
        calls = len(fake.requests)
        assert recorded == "The tool says: sunny in Paris", recorded
        paths = sorted(store.glob("*.jsonl"))
        trace = Trace.load(paths[0])
        capsys.readouterr()
        assert main(["verify", str(paths[0])]) == 0
        assert main(["show", str(paths[0])]) == 0
        shown = capsys.readouterr().out
        r.record_ok = len(paths) == 1 and trace.start.task == TASK and TASK in shown
        assert r.record_ok, (paths, trace.start.task)
        assert [s.kind for s in trace.steps()] == ["model", "tool", "model"]

        # strict, with no provider at all
        with regista_server(store) as server:
            rp = new_replay(server, trace.session_id)
            again = run(rp["openai_base_url"], SYSTEM)
            status = server.http.get(f"/v1/replays/{rp['id']}").json()
        r.strict_served, r.strict_total = status["served"], status["calls"]
        assert again == recorded and status["served"] == status["calls"] == calls

        # a changed prompt: a 409 the client does not retry
        with regista_server(store) as server:
            rp = new_replay(server, trace.session_id)
            with pytest.raises(Exception) as caught:
                run(rp["openai_base_url"], CHANGED)
            status = server.http.get(f"/v1/replays/{rp['id']}").json()
        r.conflict_surfaced = _is_conflict(caught.value)
        r.conflict_requests = status["requests"]
        assert r.conflict_surfaced and status["requests"] == 1, (caught.value, status)

        # loose: served in order whatever was asked
        with regista_server(store) as server:
            rp = new_replay(server, trace.session_id, mode="loose")
            loose = run(rp["openai_base_url"], CHANGED)
            status = server.http.get(f"/v1/replays/{rp['id']}").json()
        r.loose_ok = loose == recorded and status["served"] == calls
        assert r.loose_ok, (loose, status)

        # a fork with an edited tool result goes live after it
        before = len(fake.requests)
        with regista_server(store, openai=fake.url) as server:
            rp = new_replay(
                server, trace.session_id, edits=[{"step": 1, "tool_result": EDIT}], live="proxy"
            )
            forked = run(rp["openai_base_url"], SYSTEM)
            assert server.http.delete(f"/v1/replays/{rp['id']}").status_code == 204
        forks = [p for p in store.glob("*.jsonl") if p not in paths]
        fork = Trace.load(forks[0]) if len(forks) == 1 else None
        r.fork_ok = (
            forked == f"The tool says: {EDIT}"
            and len(fake.requests) == before + 1
            and fork is not None
            and fork.start.forked_from is not None
            and fork.start.forked_from["session_id"] == trace.session_id
        )
        assert r.fork_ok, (forked, len(fake.requests) - before, forks)


def _plain(stream: bool) -> Client:
    def run(base_url: str, instructions: str) -> str:
        client = openai.OpenAI(api_key="k", base_url=base_url)  # the SDK's own retries on
        return responses_agent(client, TASK, instructions, stream=stream, tool=get_weather)

    return run


def _agents_sdk(stream: bool) -> Client:
    def run(base_url: str, instructions: str) -> str:
        from agents import (
            Agent,
            OpenAIResponsesModel,
            Runner,
            function_tool,
            set_tracing_disabled,
        )

        set_tracing_disabled(True)  # its traces would go to OpenAI's servers
        client = openai.AsyncOpenAI(api_key="k", base_url=base_url)
        agent = Agent(
            name="weather",
            instructions=instructions,
            tools=[function_tool(get_weather)],
            model=OpenAIResponsesModel(model="gpt-5-mini", openai_client=client),
        )

        async def go() -> str:
            if stream:
                result = Runner.run_streamed(agent, TASK)
                async for _ in result.stream_events():
                    pass
                return str(result.final_output)
            return str((await Runner.run(agent, TASK)).final_output)

        return asyncio.run(go())

    return run


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
def test_openai_sdk_responses(tmp_path: Path, capsys: Any, stream: bool) -> None:
    name = "openai responses.create" + (" (stream)" if stream else "")
    conform(row(name, pkg_version("openai")), _plain(stream), tmp_path, capsys)


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
def test_openai_agents_sdk(tmp_path: Path, capsys: Any, stream: bool) -> None:
    name = "openai-agents (responses" + (", stream)" if stream else ")")
    conform(row(name, pkg_version("openai-agents")), _agents_sdk(stream), tmp_path, capsys)
