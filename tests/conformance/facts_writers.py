"""Each writer of traces, given one abstract session (:mod:`.facts_session`).

- ``loop``: regista's own agent loop, its model a :class:`~regista.providers.ScriptedProvider`
  that answers the session's calls in order;
- ``proxy``: the real ``anthropic`` SDK in the loop people write, through ``regista``'s
  recording proxy, to a fake Messages API on 127.0.0.1 that answers the session's calls;
- ``claude-code``: the session as a Claude Code transcript (one line per content block, a
  compaction's summarising call in its ``agent-acompact-…`` file), imported;
- ``codex``: the session as a Codex rollout (``token_count`` events, ``Exit code: N``
  outputs, ``compacted`` lines), imported;
- ``otlp``: the session as the GenAI spans an instrumented agent sends (a chat span per call,
  an ``execute_tool`` span per tool, failures with an error status), posted to the OTLP
  receiver of ``regista serve``.

Each returns the path of the run it wrote and, for what it can say, a :class:`Can`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
from importers.cc_fixtures import CCSession, text, tool_use
from importers.codex_fixtures import Rollout

from conformance.facts_session import Call, Can, Session, anthropic_answer, tool_reply

Writer = Callable[[Session, Path], Path]

CAN: dict[str, Can] = {
    "loop": Can(turns=False, compaction=False, compaction_in_turn=True),
    "proxy": Can(compaction=False),
    "claude-code": Can(),
    "codex": Can(
        compaction_usage=False,
        cache_1h=False,
        reasoning=True,
        models=("gpt-5-codex", "gpt-5.1-codex", "acme-coder-3"),
    ),
    "otlp": Can(compaction=False, cache_1h=False, reasoning=True),
    # Chat completions have no cache writes, and a tool message cannot say it failed.
    "openai-proxy": Can(
        compaction=False,
        cache_write=False,
        cache_1h=False,
        reasoning=True,
        tool_errors=False,
        models=("gpt-4o-mini", "gpt-5", "acme-chat-2"),
    ),
    "responses-proxy": Can(
        compaction=False,
        cache_write=False,
        cache_1h=False,
        reasoning=True,
        tool_errors=False,
        models=("gpt-5", "gpt-5-codex", "acme-chat-2"),
    ),
}

#: How each writer's run ends: regista's own runs say ``end_turn``; a transcript just ends.
OUTCOME = {
    "loop": "ok",
    "proxy": "ok",
    "claude-code": "no_stop_reason",
    "codex": "no_stop_reason",
    "otlp": "no_stop_reason",
    "openai-proxy": "ok",
    "responses-proxy": "ok",
}


def _only(folder: Path) -> Path:
    (path,) = folder.glob("*.jsonl")
    return path


# -- regista's own loop ---------------------------------------------------------------------


#: A tool output long enough to pass the loop's compaction threshold (:data:`_COMPACT_AT`
#: estimated tokens) on its own, while the rest of a generated session stays under it.
_PADDING = "Details. " * 4000
_COMPACT_AT = 5000


def write_loop(session: Session, folder: Path, max_turns: int = 50) -> Path:
    """regista's own loop against a fake Messages API; a compaction planned before a call
    is made by the loop's own rule, a tool before it saying a lot."""
    from fakes.anthropic_server import FakeAnthropicServer

    from regista import Agent, ContextConfig, tool
    from regista.context import SUMMARY_SYSTEM
    from regista.providers import AnthropicProvider

    (turn,) = session.turns
    calls = list(turn.calls)
    served = [0]
    padded = None
    if turn.compaction is not None and turn.compact_at:
        padded = calls[turn.compact_at - 1].tools[-1].id

    def answer(body: dict[str, Any]) -> dict[str, Any]:
        if body.get("system") == SUMMARY_SYSTEM and turn.compaction is not None:
            return {
                "content": [{"type": "text", "text": turn.compaction.summary}],
                "usage": turn.compaction.usage.usage_dict(),
            }
        served[0] += 1
        return anthropic_answer(calls[served[0] - 1])

    def run(city: str, ref: str) -> str:
        tc = tool_reply(session, ref)
        said = tc.output + (_PADDING if ref == padded else "")
        if tc.fails:
            raise RuntimeError(said)
        return said

    @tool
    def get_weather(city: str, ref: str) -> str:
        """Current weather for a city."""
        return run(city, ref)

    @tool
    def get_forecast(city: str, ref: str) -> str:
        """The forecast for a city."""
        return run(city, ref)

    with FakeAnthropicServer() as fake:
        fake.answer_with(answer)
        provider = AnthropicProvider(session.model, api_key="k", base_url=fake.url, max_retries=0)
        agent = Agent(
            model=session.model,
            instructions="You are a weather bot.",
            tools=[get_weather, get_forecast],
            provider=provider,
            trace_dir=folder,
            max_turns=max_turns,
            context=ContextConfig(max_tokens=_COMPACT_AT, keep_last=1),
        )
        return Path(agent.run_sync(turn.prompt).trace_path)


# -- the SDK proxy -----------------------------------------------------------------------------

_TOOLS = [
    {
        "name": name,
        "description": "Weather.",
        "input_schema": {
            "type": "object",
            "properties": {"city": {"type": "string"}, "ref": {"type": "string"}},
        },
    }
    for name in ("get_weather", "get_forecast")
]


def write_proxy(session: Session, folder: Path) -> Path:
    import anthropic
    from fakes.anthropic_server import FakeAnthropicServer

    from regista.server import BackgroundServer, create_app
    from regista.server.record import book

    calls = session.calls()

    def answer(body: dict[str, Any]) -> dict[str, Any]:
        done = sum(1 for m in body["messages"] if m["role"] == "assistant")
        return anthropic_answer(calls[done])

    with FakeAnthropicServer() as fake:
        # nothing may leave the machine: the other upstream is a closed local port
        ups = {"anthropic": fake.url, "openai": "http://127.0.0.1:9/v1"}
        app = create_app(folder, upstreams=ups, replay_ttl=3600)
        fake.answer_with(answer)
        with BackgroundServer(app) as server:
            client = anthropic.Anthropic(
                api_key="k", base_url=f"{server.url}/v1/record/anthropic", max_retries=0
            )
            messages: list[dict[str, Any]] = []
            for turn in session.turns:
                messages.append({"role": "user", "content": turn.prompt})
                for _ in turn.calls:
                    kwargs: dict[str, Any] = dict(
                        model=session.model,
                        max_tokens=512,
                        system="You are a weather bot.",
                        tools=_TOOLS,
                        messages=messages,
                    )
                    if session.seed % 2:  # every other session streams (SSE)
                        with client.messages.stream(**kwargs) as stream:
                            msg = stream.get_final_message()
                    else:
                        msg = client.messages.create(**kwargs)
                    messages.append(
                        {"role": "assistant", "content": [b.model_dump() for b in msg.content]}
                    )
                    uses = [b for b in msg.content if b.type == "tool_use"]
                    if not uses:
                        break
                    results = []
                    for u in uses:
                        tc = tool_reply(session, u.id)
                        block = {"type": "tool_result", "tool_use_id": u.id, "content": tc.output}
                        if tc.fails:
                            block["is_error"] = True
                        results.append(block)
                    messages.append({"role": "user", "content": results})
            book(app.state.ctx).close()
    return _only(folder)


def _openai_answer(call: Call) -> dict[str, Any]:
    """``call`` as the fake chat completions API's script item."""
    u = call.usage
    return {
        "content": call.text,
        "tool_calls": [
            {
                "id": tc.id,
                "name": tc.name,
                "arguments": orjson.dumps({"city": tc.arg, "ref": tc.id}).decode(),
            }
            for tc in call.tools
        ],
        "usage": {
            "prompt_tokens": u.input + u.cache_read,
            "completion_tokens": u.output,
            "total_tokens": u.input + u.cache_read + u.output,
            "prompt_tokens_details": {"cached_tokens": u.cache_read},
            "completion_tokens_details": {"reasoning_tokens": u.reasoning},
        },
    }


_OPENAI_TOOLS = [
    {
        "type": "function",
        "function": {"name": t["name"], "description": "Weather.", "parameters": t["input_schema"]},
    }
    for t in _TOOLS
]


def write_openai_proxy(session: Session, folder: Path) -> Path:
    """The real ``openai`` SDK's chat completions through the proxy (streamed every other
    session, with the usage chunk)."""
    import openai
    from fakes.openai_server import FakeOpenAIServer

    from regista.server import BackgroundServer, create_app
    from regista.server.record import book

    calls = session.calls()

    def answer(body: dict[str, Any]) -> dict[str, Any]:
        done = sum(1 for m in body["messages"] if m["role"] == "assistant")
        return _openai_answer(calls[done])

    with FakeOpenAIServer() as fake:
        ups = {"anthropic": "http://127.0.0.1:9", "openai": fake.url}
        app = create_app(folder, upstreams=ups, replay_ttl=3600)
        fake.answer_with(answer)
        with BackgroundServer(app) as server:
            client = openai.OpenAI(
                api_key="k", base_url=f"{server.url}/v1/record/openai", max_retries=0
            )
            messages: list[dict[str, Any]] = [
                {"role": "system", "content": "You are a weather bot."}
            ]
            for turn in session.turns:
                messages.append({"role": "user", "content": turn.prompt})
                for _ in turn.calls:
                    kwargs: dict[str, Any] = dict(
                        model=session.model, messages=messages, tools=_OPENAI_TOOLS
                    )
                    if session.seed % 2:
                        kwargs.update(stream=True, stream_options={"include_usage": True})
                        text, uses = "", {}
                        for chunk in client.chat.completions.create(**kwargs):
                            for choice in chunk.choices:
                                text += choice.delta.content or ""
                                for d in choice.delta.tool_calls or []:
                                    u = uses.setdefault(d.index, {"id": "", "name": "", "args": ""})
                                    u["id"] += d.id or ""
                                    u["name"] += (d.function.name or "") if d.function else ""
                                    u["args"] += (d.function.arguments or "") if d.function else ""
                        tool_calls = [
                            {"id": u["id"], "name": u["name"], "arguments": u["args"]}
                            for _, u in sorted(uses.items())
                        ]
                    else:
                        msg = client.chat.completions.create(**kwargs).choices[0].message
                        text = msg.content or ""
                        tool_calls = [
                            {"id": c.id, "name": c.function.name, "arguments": c.function.arguments}
                            for c in msg.tool_calls or []
                            if c.type == "function"
                        ]
                    reply: dict[str, Any] = {"role": "assistant", "content": text}
                    if tool_calls:
                        reply["tool_calls"] = [
                            {
                                "id": c["id"],
                                "type": "function",
                                "function": {"name": c["name"], "arguments": c["arguments"]},
                            }
                            for c in tool_calls
                        ]
                    messages.append(reply)
                    if not tool_calls:
                        break
                    for c in tool_calls:
                        tc = tool_reply(session, c["id"])
                        messages.append(
                            {"role": "tool", "tool_call_id": c["id"], "content": tc.output}
                        )
            book(app.state.ctx).close()
    return _only(folder)


def write_responses_proxy(session: Session, folder: Path) -> Path:
    """The real ``openai`` SDK's Responses API through the proxy (streamed every other
    session), the conversation sent whole each time as Codex sends it."""
    import openai
    from fakes.responses_server import FakeResponsesServer

    from regista.server import BackgroundServer, create_app
    from regista.server.record import book

    calls = session.calls()

    def answer(body: dict[str, Any]) -> dict[str, Any]:
        done = sum(
            1
            for item in body["input"]
            if item.get("type") == "message" and item.get("role") == "assistant"
        )
        call = calls[done]
        u = call.usage
        return {
            "text": call.text,
            "tool_calls": [
                {
                    "id": tc.id,
                    "name": tc.name,
                    "arguments": orjson.dumps({"city": tc.arg, "ref": tc.id}).decode(),
                }
                for tc in call.tools
            ],
            "usage": {
                "input_tokens": u.input + u.cache_read,
                "input_tokens_details": {"cached_tokens": u.cache_read},
                "output_tokens": u.output,
                "output_tokens_details": {"reasoning_tokens": u.reasoning},
                "total_tokens": u.input + u.cache_read + u.output,
            },
        }

    tools = [
        {"type": "function", "name": t["name"], "description": "Weather.",
         "parameters": t["input_schema"]}
        for t in _TOOLS
    ]  # fmt: skip
    with FakeResponsesServer() as fake:
        ups = {"anthropic": "http://127.0.0.1:9", "openai": fake.url}
        app = create_app(folder, upstreams=ups, replay_ttl=3600)
        fake.answer_with(answer)
        with BackgroundServer(app) as server:
            client = openai.OpenAI(
                api_key="k", base_url=f"{server.url}/v1/record/openai", max_retries=0
            )
            items: list[dict[str, Any]] = []
            for turn in session.turns:
                items.append({"type": "message", "role": "user", "content": turn.prompt})
                for _ in turn.calls:
                    kwargs: dict[str, Any] = dict(
                        model=session.model,
                        instructions="You are a weather bot.",
                        input=items,
                        tools=tools,
                    )
                    if session.seed % 2:
                        with client.responses.stream(**kwargs) as stream:
                            response = stream.get_final_response()
                    else:
                        response = client.responses.create(**kwargs)
                    uses = []
                    for out in response.output:
                        if out.type == "message":
                            text = "".join(c.text for c in out.content if c.type == "output_text")
                            items.append({"type": "message", "role": "assistant", "content": text})
                        elif out.type == "function_call":
                            uses.append(out.call_id)
                            items.append(
                                {"type": "function_call", "call_id": out.call_id,
                                 "name": out.name, "arguments": out.arguments}
                            )  # fmt: skip
                    if not uses:
                        break
                    for cid in uses:
                        items.append(
                            {"type": "function_call_output", "call_id": cid,
                             "output": tool_reply(session, cid).output}
                        )  # fmt: skip
            book(app.state.ctx).close()
    return _only(folder)


# -- Claude Code -----------------------------------------------------------------------------


def _cc_answer(s: CCSession, call: Call) -> None:
    blocks = [text(call.text)]
    blocks += [tool_use(tc.id, tc.name, city=tc.arg, ref=tc.id) for tc in call.tools]
    s.answer(*blocks, usage={**call.usage.usage_dict(), "service_tier": "standard"})


def claude_code_transcript(session: Session, src: Path) -> CCSession:
    """Write ``session`` as Claude Code would (and its compactions' agent files)."""
    s = CCSession(model=session.model)
    s.raw({"type": "summary", "summary": "Weather", "leafUuid": "elsewhere"})
    s.snapshot()
    compactions = 0
    for turn in session.turns:
        if turn.compaction is not None:
            compactions += 1
            s.compact(turn.compaction.summary)
            c = CCSession(
                session_id=s.session_id,
                agent_id=f"acompact-{compactions:06x}",
                sidechain=True,
                model=session.model,
            )
            c.prompt("Your task is to create a detailed summary of the conversation so far.")
            c.answer(text(turn.compaction.summary), usage=turn.compaction.usage.usage_dict())
            c.write(src.parent / src.stem / "subagents" / f"agent-acompact-{compactions:06x}.jsonl")
        s.prompt(turn.prompt)
        for call in turn.calls:
            _cc_answer(s, call)
            for tc in call.tools:
                s.progress(tc.id)
                s.tool_result(tc.id, tc.output, is_error=tc.fails)
    s.write(src)
    return s


def write_claude_code(session: Session, folder: Path) -> Path:
    from regista.importers import convert, write_runs

    src = folder / "cc" / "4f1c2a9e-8d3b-4e6f-a1b2-c3d4e5f60718.jsonl"
    claude_code_transcript(session, src)
    runs = write_runs(convert("claude-code", src), folder / "traces")
    return Path(runs[0])


# -- Codex -----------------------------------------------------------------------------------


def _codex_tokens(r: Rollout, call: Call) -> None:
    u = call.usage
    last = {
        "input_tokens": u.input + u.cache_read + u.cache_write,
        "cached_input_tokens": u.cache_read,
        "cache_write_input_tokens": u.cache_write,
        "output_tokens": u.output,
        "reasoning_output_tokens": u.reasoning,
        "total_tokens": u.input + u.cache_read + u.cache_write + u.output,
    }
    r._total += last["total_tokens"]
    info = {
        "total_token_usage": {**last, "total_tokens": r._total},
        "last_token_usage": last,
        "model_context_window": 272000,
    }
    r.line("event_msg", {"type": "token_count", "info": info, "rate_limits": None})


def codex_rollout(session: Session) -> Rollout:
    r = Rollout()
    r.meta()
    for turn in session.turns:
        if turn.compaction is not None:
            r.line("compacted", {"message": turn.compaction.summary, "replacement_history": []})
            r.line("event_msg", {"type": "context_compacted"})
        r.turn(session.model)
        r.line("event_msg", {"type": "task_started", "model_context_window": 272000})
        r.user(turn.prompt)
        for call in turn.calls:
            r.say(call.text)
            for tc in call.tools:
                r.call(tc.id, "shell", command=["weather", tc.arg], ref=tc.id)
            _codex_tokens(r, call)
            for tc in call.tools:
                code = 1 if tc.fails else 0
                r.output(tc.id, f"Exit code: {code}\nWall time: 0.2 seconds\nOutput:\n{tc.output}")
        r.line("event_msg", {"type": "task_complete", "last_agent_message": turn.calls[-1].text})
    return r


def write_codex(session: Session, folder: Path) -> Path:
    from regista.importers import convert, write_runs

    folder.mkdir(parents=True, exist_ok=True)
    src = folder / "rollout-2026-02-11T08-27-22-019b64e5.jsonl"
    src.write_bytes(codex_rollout(session).data())
    return Path(write_runs(convert("codex", src), folder / "traces")[0])


# -- OTLP spans to the receiver ---------------------------------------------------------------

_T0 = 1_767_225_600_000_000_000


def _kv(attrs: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for k, v in attrs.items():
        if isinstance(v, bool):
            out.append({"key": k, "value": {"boolValue": v}})
        elif isinstance(v, int):
            out.append({"key": k, "value": {"intValue": str(v)}})
        else:
            out.append({"key": k, "value": {"stringValue": str(v)}})
    return out


def otlp_body(session: Session) -> dict[str, Any]:
    """The spans of an agent instrumented with the GenAI conventions (input tokens count the
    cached ones, as the conventions say)."""
    spans: list[dict[str, Any]] = []
    trace_id = f"{session.seed + 1:032x}"
    at = 0  # ms since _T0

    def span(name: str, ms: int, attrs: dict[str, Any], error: bool = False) -> None:
        nonlocal at
        spans.append(
            {
                "traceId": trace_id,
                "spanId": f"{len(spans) + 2:016x}",
                "parentSpanId": f"{1:016x}",
                "name": name,
                "startTimeUnixNano": str(_T0 + at * 1_000_000),
                "endTimeUnixNano": str(_T0 + (at + ms) * 1_000_000),
                "attributes": _kv(attrs),
                "status": {"code": 2, "message": "failed"} if error else {},
            }
        )
        at += ms + 5

    def parts(blocks: list[dict[str, Any]]) -> list[dict[str, Any]]:
        out = []
        for b in blocks:
            if b["type"] == "text":
                out.append({"type": "text", "content": b["text"]})
            elif b["type"] == "tool_use":
                out.append(
                    {"type": "tool_call", "id": b["id"], "name": b["name"], "arguments": b["input"]}
                )
        return out

    history: list[dict[str, Any]] = []
    n = 0
    for turn in session.turns:
        history.append({"role": "user", "parts": [{"type": "text", "content": turn.prompt}]})
        for call in turn.calls:
            n += 1
            out = anthropic_answer(call)
            u = call.usage
            reply = {"role": "assistant", "parts": parts(out["content"])}
            span(
                f"chat {session.model}",
                100 + 37 * n,
                {
                    "gen_ai.operation.name": "chat",
                    "gen_ai.system": "anthropic",
                    "gen_ai.request.model": session.model,
                    "gen_ai.response.model": session.model,
                    "gen_ai.usage.input_tokens": u.input + u.cache_read + u.cache_write,
                    "gen_ai.usage.output_tokens": u.output,
                    "gen_ai.usage.cache_read.input_tokens": u.cache_read,
                    "gen_ai.usage.cache_creation.input_tokens": u.cache_write,
                    "gen_ai.usage.reasoning.output_tokens": u.reasoning,
                    "gen_ai.input.messages": orjson.dumps(history).decode(),
                    "gen_ai.output.messages": orjson.dumps([reply]).decode(),
                    "gen_ai.response.finish_reasons": orjson.dumps([out["stop_reason"]]).decode(),
                },
            )
            history.append(reply)
            responses = []
            for k, tc in enumerate(call.tools):
                span(
                    f"execute_tool {tc.name}",
                    20 + 11 * k,
                    {
                        "gen_ai.operation.name": "execute_tool",
                        "gen_ai.tool.name": tc.name,
                        "gen_ai.tool.call.id": tc.id,
                        "gen_ai.tool.call.arguments": orjson.dumps(
                            {"city": tc.arg, "ref": tc.id}
                        ).decode(),
                        "gen_ai.tool.call.result": orjson.dumps(tc.output).decode(),
                    },
                    error=tc.fails,
                )
                responses.append({"type": "tool_call_response", "id": tc.id, "response": tc.output})
            if responses:
                history.append({"role": "tool", "parts": responses})
    root = {
        "traceId": trace_id,
        "spanId": f"{1:016x}",
        "parentSpanId": "",
        "name": "invoke_agent weather",
        "startTimeUnixNano": str(_T0),
        "endTimeUnixNano": str(_T0 + at * 1_000_000),
        "attributes": _kv({"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "w"}),
        "status": {},
    }
    return {
        "resourceSpans": [
            {
                "resource": {"attributes": _kv({"service.name": "weather"})},
                "scopeSpans": [{"spans": [root, *spans]}],
            }
        ]
    }


def write_otlp(session: Session, folder: Path) -> Path:
    from starlette.testclient import TestClient

    from regista.server import create_app

    store = folder / "store"
    with TestClient(create_app(store)) as http:
        r = http.post("/v1/traces", json=otlp_body(session))
        assert r.status_code == 200, r.text
    return _only(store)


WRITERS: dict[str, Writer] = {
    "loop": write_loop,
    "proxy": write_proxy,
    "claude-code": write_claude_code,
    "codex": write_codex,
    "otlp": write_otlp,
    "openai-proxy": write_openai_proxy,
    "responses-proxy": write_responses_proxy,
}
