"""The matrix's checks for a framework that runs in this process, through its own SDK client.

A client is a function ``run(base_url, system) -> str``: the framework's tool-calling agent
(one ``get_weather`` tool) asked :data:`TASK` with ``system`` as its instructions, pointed
at ``base_url``, returning its final answer. :func:`conform` then fills the client's row:

1. recorded through the proxy against a fake provider: one run, ``regista verify`` passes,
   ``regista show`` shows the task;
2. a strict replay, with no provider at all, serves every call and the answer is the same;
3. with a changed prompt, the 409 reaches the framework, and the requests it sent are
   counted (it should not retry);
4. a loose replay serves the recorded calls in order;
5. a fork with an edited tool result (step 1) goes live after it: the provider sees the
   edit, and the fork's trace is written.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

import pytest
from fakes.anthropic_server import FakeAnthropicServer
from fakes.openai_server import FakeOpenAIServer
from fakes.responses_server import FakeResponsesServer
from server.sdk_agents import new_replay, regista_server

from conformance.matrix import Row
from regista.cli.main import main
from regista.trace.reader import Trace

__all__ = ["EDIT", "SYSTEM", "TASK", "Client", "conform", "get_weather", "is_conflict"]

TASK = "What is the weather in Paris?"
SYSTEM = "You are a weather bot."
CHANGED = "You are a poet."
EDIT = "rainy in Paris"

Client = Callable[[str, str], str]
#: The API the client speaks (``openai``: chat completions; ``openai-responses``: the
#: Responses API, under the same OpenAI base URL).
Provider = Literal["anthropic", "openai", "openai-responses"]


def get_weather(city: str) -> str:
    """Current weather for a city.

    Args:
        city: The city.
    """
    return f"sunny in {city}"


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return ""


def _openai_answer(body: dict[str, Any]) -> dict[str, Any]:
    results = [m for m in body["messages"] if m.get("role") == "tool"]
    if not results:
        args = json.dumps({"city": "Paris"})
        return {"tool_calls": [{"id": "call_w1", "name": "get_weather", "arguments": args}]}
    return {"content": f"The tool says: {_text(results[-1].get('content'))}"}


def _responses_answer(body: dict[str, Any]) -> dict[str, Any]:
    items = body.get("input")
    outputs = [
        i
        for i in (items if isinstance(items, list) else [])
        if isinstance(i, dict) and i.get("type") == "function_call_output"
    ]
    if not outputs:
        call = {"id": "call_w1", "name": "get_weather", "arguments": '{"city": "Paris"}'}
        return {"reasoning": "Look it up.", "tool_calls": [call]}
    return {"text": f"The tool says: {_text(outputs[-1].get('output'))}"}


def _anthropic_answer(body: dict[str, Any]) -> dict[str, Any]:
    results = [
        b
        for m in body["messages"]
        if m.get("role") == "user" and isinstance(m.get("content"), list)
        for b in m["content"]
        if isinstance(b, dict) and b.get("type") == "tool_result"
    ]
    if not results:
        use = {"type": "tool_use", "id": "toolu_w1", "name": "get_weather",
               "input": {"city": "Paris"}}  # fmt: skip
        return {"content": [use]}
    said = f"The tool says: {_text(results[-1].get('content'))}"
    return {"content": [{"type": "text", "text": said}]}


def is_conflict(exc: BaseException) -> bool:
    """Whether ``exc`` (or what it wraps) is the provider's 409."""
    seen: BaseException | None = exc
    while seen is not None:
        if getattr(seen, "status_code", None) == 409 or getattr(seen, "status", None) == 409:
            return True
        seen = seen.__cause__ or seen.__context__
    return "409" in str(exc)


def _base(server: Any, api: Provider, replay: dict[str, Any] | None = None) -> str:
    provider = _PROVIDER[api]
    if replay is None:
        return f"{server.url}/v1/record/{provider}"
    return str(replay[f"{provider}_base_url"])


_PROVIDER = {"anthropic": "anthropic", "openai": "openai", "openai-responses": "openai"}
_FAKES: dict[str, Any] = {
    "anthropic": (FakeAnthropicServer, _anthropic_answer),
    "openai": (FakeOpenAIServer, _openai_answer),
    "openai-responses": (FakeResponsesServer, _responses_answer),
}


def conform(row: Row, api: Provider, run: Client, store: Path, capsys: Any) -> None:
    """Fill ``row`` by recording, replaying and forking ``run`` (see the module's doc)."""
    provider = _PROVIDER[api]
    fake_class, answer = _FAKES[api]
    fake: FakeAnthropicServer | FakeOpenAIServer | FakeResponsesServer = fake_class()
    with fake:
        fake.answer_with(answer)
        with regista_server(store, **{provider: fake.url}) as server:
            recorded = run(_base(server, api), SYSTEM)
            server.record_done()
        calls = len(fake.requests)
        assert recorded == "The tool says: sunny in Paris", recorded
        paths = sorted(store.glob("*.jsonl"))
        trace = Trace.load(paths[0])
        capsys.readouterr()
        assert main(["verify", str(paths[0])]) == 0
        assert main(["show", str(paths[0])]) == 0
        shown = capsys.readouterr().out
        row.record_ok = len(paths) == 1 and trace.start.task == TASK and TASK in shown
        assert row.record_ok, (paths, trace.start.task)
        assert [s.kind for s in trace.steps()] == ["model", "tool", "model"]

        # 2. strict, and no provider at all: every call from the tape
        with regista_server(store) as server:
            rp = new_replay(server, trace.session_id)
            again = run(_base(server, api, rp), SYSTEM)
            status = server.http.get(f"/v1/replays/{rp['id']}").json()
        row.strict_served, row.strict_total = status["served"], status["calls"]
        assert again == recorded and status["served"] == status["calls"] == calls

        # 3. a changed prompt: a 409 that the framework does not retry
        with regista_server(store) as server:
            rp = new_replay(server, trace.session_id)
            with pytest.raises(Exception) as caught:
                run(_base(server, api, rp), CHANGED)
            status = server.http.get(f"/v1/replays/{rp['id']}").json()
        row.conflict_surfaced = is_conflict(caught.value)
        row.conflict_requests = status["requests"]
        assert row.conflict_surfaced, repr(caught.value)
        assert status["rejected"] == status["requests"]

        # 4. loose: served in order whatever was asked
        with regista_server(store) as server:
            rp = new_replay(server, trace.session_id, mode="loose")
            loose = run(_base(server, api, rp), CHANGED)
            status = server.http.get(f"/v1/replays/{rp['id']}").json()
        row.loose_ok = loose == recorded and status["served"] == calls
        assert row.loose_ok, (loose, status)

        # 5. a fork with an edited tool result: live after it, and the model sees the edit
        before = len(fake.requests)
        with regista_server(store, **{provider: fake.url}) as server:
            rp = new_replay(
                server,
                trace.session_id,
                edits=[{"step": 1, "tool_result": EDIT}],
                live="proxy",
            )
            forked = run(_base(server, api, rp), SYSTEM)
            assert server.http.delete(f"/v1/replays/{rp['id']}").status_code == 204
        forks = [p for p in store.glob("*.jsonl") if p not in paths]
        fork = Trace.load(forks[0]) if len(forks) == 1 else None
        row.fork_ok = (
            forked == f"The tool says: {EDIT}"
            and len(fake.requests) == before + 1
            and fork is not None
            and fork.start.forked_from is not None
            and fork.start.forked_from["session_id"] == trace.session_id
        )
        assert row.fork_ok, (forked, len(fake.requests) - before, forks)
