"""OpenTelemetry GenAI spans in: files, the OTLP receiver, and export → receiver → same run."""

from __future__ import annotations

import random
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest
from files import found
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from regista.breakdown import step_time
from regista.cli.main import main
from regista.errors import RegistaError
from regista.importers import convert
from regista.importers.otlp import convert as otlp_file_convert
from regista.importers.otlp import convert_request, parse_protobuf
from regista.server import BackgroundServer, create_app
from regista.trace.otel import export_trace
from regista.trace.reader import Trace

from .cc_fixtures import basic_session

SAMPLES = Path(__file__).resolve().parents[2] / "sample_traces"


def _spans(trace: Trace, content: bool = True) -> list[Any]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    export_trace(trace, provider, include_content=content)
    return list(exporter.get_finished_spans())


def _body(trace: Trace, content: bool = True) -> dict[str, Any]:
    return parse_protobuf(encode_spans(_spans(trace, content)).SerializeToString())


def assert_same_run(a: Trace, b: Trace, content: bool = True) -> None:
    """The same steps, kinds, tokens, times and (when exported) content. A step's time is
    where it ends and how long it took (:func:`regista.breakdown.step_time`): a span starts
    that long before its end, so a tool step whose result recorded less than its call and
    decision span comes back with its call at the span's start."""
    assert b.session_id == a.session_id
    sa, sb = a.steps(), b.steps()
    assert [(s.index, s.kind, s.turn) for s in sa] == [(s.index, s.kind, s.turn) for s in sb]
    for x, y in zip(sa, sb, strict=True):
        assert step_time(x) == step_time(y)
        if x.kind == "model":
            rx, ry = x.response, y.response
            assert rx is not None and ry is not None
            keys = ("input_tokens", "output_tokens", "cache_read_input_tokens")
            assert [getattr(rx.usage, k) for k in keys] == [getattr(ry.usage, k) for k in keys]
            assert rx.usage.cache_creation_input_tokens == ry.usage.cache_creation_input_tokens
            assert x.response_event.ts == y.response_event.ts  # type: ignore[union-attr]
            if content:
                assert rx.content == ry.content
                assert rx.stop_reason == ry.stop_reason
                ex, ey = x.request_event, y.request_event
                assert a.request_for(ex).messages == b.request_for(ey).messages  # type: ignore[arg-type]
            else:
                assert ry.content == []
                assert y.response_event.model_extra["not_captured"] == ["input", "output"]  # type: ignore[union-attr]
        elif x.kind == "tool":
            assert x.tool_call.name == y.tool_call.name  # type: ignore[union-attr]
            assert x.is_error == y.is_error and x.denied == y.denied
            if content:
                assert x.tool_call.input == y.tool_call.input  # type: ignore[union-attr]
                if x.result is not None:
                    assert y.result is not None and x.result.content == y.result.content
        else:
            if content:
                assert x.compaction.summary == y.compaction.summary  # type: ignore[union-attr]
            else:
                assert y.compaction.model_extra["not_captured"] == ["input", "output"]  # type: ignore[union-attr]
            assert x.compaction.tokens_before == y.compaction.tokens_before  # type: ignore[union-attr]
    assert b.summary().usage == a.summary().usage
    if a.end is not None:  # how and when it ended, and how long it ran
        assert b.end is not None and b.end.stop_reason == a.end.stop_reason
        assert b.end.ts == a.end.ts
        assert abs(b.end.duration_ms - a.end.duration_ms) < 1.0


def _generated(tmp_path: Path) -> list[Trace]:
    """Sessions other than the samples: imported Claude Code runs."""
    path = basic_session().write(tmp_path / "s.jsonl")
    return [Trace.from_bytes(r.to_bytes(), path) for r in convert("claude-code", path).runs]


@pytest.mark.parametrize("content", [True, False])
def test_export_then_import_gives_the_same_run(tmp_path: Path, content: bool) -> None:
    traces = [Trace.load(p) for p in found(SAMPLES)] + _generated(tmp_path)
    for trace in traces:
        conv = convert_request(_body(trace, content))
        assert len(conv.runs) == 1
        back = Trace.from_bytes(conv.main.to_bytes(), "<otlp>")
        assert_same_run(trace, back, content)
        if content and trace.start.provider == "scripted":
            # Everything a request holds was exported: the same request hashes.
            assert back.request_hashes()[:1] == trace.request_hashes()[:1]


def _random_run(rng: random.Random, folder: Path) -> Trace:
    """A seeded run of the real loop: parallel tool calls, denials, failing tools, thinking,
    cache tokens, compactions and max_turns stops, in random amounts."""
    from builders import answer, rich_agent, tool_use

    from regista.providers import ScriptedProvider

    script: list[dict[str, Any]] = []
    for turn in range(rng.randint(1, 7)):
        blocks = []
        for k in range(rng.choice([0, 0, 1, 1, 2, 3])):
            name = rng.choice(["get_weather", "get_forecast", "flaky"])
            city = rng.choice(["Paris", "Rome", "Oslo", "Lima"])
            args: dict[str, Any] = {"reason": city} if name == "flaky" else {"city": city}
            blocks.append(tool_use(f"toolu_{turn}_{k}", name, **args))
        if rng.random() < 0.3:
            blocks.insert(0, {"type": "thinking", "thinking": f"step {turn}", "signature": "s"})
        item = answer(*blocks, text=rng.choice([None, f'Turn {turn} ✓ «quoted» "x"']))
        if not item["content"]:
            item["content"] = [{"type": "text", "text": "Done."}]
        item["usage"] = {
            "input_tokens": rng.randint(1, 5000),
            "output_tokens": rng.randint(1, 900),
            "cache_read_input_tokens": rng.choice([0, rng.randint(1, 4000)]),
            "cache_creation_input_tokens": rng.choice([0, rng.randint(1, 300)]),
        }
        script.append(item)
    script += [answer(text="The end.")] * 10  # compactions ask the model too
    agent = rich_agent(folder, provider=ScriptedProvider(script), max_turns=rng.randint(1, 9))
    return Trace.load(agent.run_sync("Weather in Paris, Rome and Oslo?").trace_path)


@pytest.mark.parametrize("content", [True, False])
def test_export_then_receive_gives_the_same_generated_run(tmp_path: Path, content: bool) -> None:
    """The property over generated runs (REGISTA_FUZZ_RUNS sets how many; default 6)."""
    import os

    import httpx2

    runs = int(os.environ.get("REGISTA_FUZZ_RUNS", "6"))
    store = tmp_path / "store"
    with BackgroundServer(create_app(store)) as server, httpx2.Client(base_url=server.url) as c:
        for seed in range(runs):
            trace = _random_run(random.Random(seed), tmp_path / f"run{seed}")
            data = encode_spans(_spans(trace, content)).SerializeToString()
            r = c.post(
                "/v1/traces", content=data, headers={"content-type": "application/x-protobuf"}
            )
            assert r.status_code == 200, (seed, r.text)
            back = Trace.load(store / f"{trace.session_id}.jsonl")
            assert_same_run(trace, back, content)


def test_the_receiver_on_regista_serve_takes_protobuf_and_json(tmp_path: Path) -> None:
    import httpx2
    from google.protobuf import json_format  # type: ignore[import-untyped]

    store = tmp_path / "store"
    trace = Trace.load(SAMPLES / "refund_happy.jsonl")
    other = Trace.load(SAMPLES / "refund_denied_compaction.jsonl")
    with BackgroundServer(create_app(store)) as server:
        exporter = OTLPSpanExporter(endpoint=f"{server.url}/v1/traces")
        assert exporter.export(_spans(trace)).name == "SUCCESS"
        exporter.shutdown()  # type: ignore[no-untyped-call]
        as_json = json_format.MessageToDict(encode_spans(_spans(other)))
        with httpx2.Client(base_url=server.url) as client:
            ok = client.post("/v1/traces", json=as_json)
            assert ok.status_code == 200
            bad = client.post(
                "/v1/traces", content=b"{nope", headers={"content-type": "application/json"}
            )
            assert bad.status_code == 400
            garbage = client.post(
                "/v1/traces",
                content=b"\xff\x00",
                headers={"content-type": "application/x-protobuf"},
            )
            assert garbage.status_code == 400
    assert_same_run(trace, Trace.load(store / f"{trace.session_id}.jsonl"))
    assert_same_run(other, Trace.load(store / f"{other.session_id}.jsonl"))


def test_a_run_exported_again_to_the_receiver_is_the_same_run(tmp_path: Path) -> None:
    """Span ids are derived from the session and step: a re-export replaces, never adds."""
    store = tmp_path / "store"
    trace = Trace.load(SAMPLES / "refund_happy.jsonl")
    with BackgroundServer(create_app(store)) as server:
        for _ in range(2):
            exporter = OTLPSpanExporter(endpoint=f"{server.url}/v1/traces")
            assert exporter.export(_spans(trace)).name == "SUCCESS"
            exporter.shutdown()  # type: ignore[no-untyped-call]
            back = Trace.load(store / f"{trace.session_id}.jsonl")
            assert len(back.steps()) == len(trace.steps())
            assert_same_run(trace, back)


def test_import_otlp_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from google.protobuf import json_format

    trace = Trace.load(SAMPLES / "refund_happy.jsonl")
    path = tmp_path / "spans.json"
    path.write_bytes(orjson.dumps(json_format.MessageToDict(encode_spans(_spans(trace)))))
    out = tmp_path / "traces"
    assert main(["import", "otlp", str(path), "--trace-dir", str(out)]) == 0
    assert_same_run(trace, Trace.load(out / f"{trace.session_id}.jsonl"))
    empty = tmp_path / "empty.json"
    empty.write_text('{"resourceSpans": []}')
    capsys.readouterr()
    assert main(["import", "otlp", str(empty)]) == 1
    assert "no OpenTelemetry GenAI spans" in capsys.readouterr().err


def _kv(attrs: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for k, v in attrs.items():
        if isinstance(v, bool):
            val: dict[str, Any] = {"boolValue": v}
        elif isinstance(v, int):
            val = {"intValue": str(v)}
        else:
            val = {"stringValue": v}
        out.append({"key": k, "value": val})
    return out


def _request(*spans: dict[str, Any]) -> dict[str, Any]:
    return {
        "resourceSpans": [
            {
                "resource": {"attributes": _kv({"service.name": "shop"})},
                "scopeSpans": [{"spans": list(spans)}],
            }
        ]
    }


def _span(
    span_id: str, name: str, start: int, attrs: dict[str, Any], parent: str = ""
) -> dict[str, Any]:
    return {
        "traceId": "5b8efff798038103d269b633813fc60c",
        "spanId": span_id,
        "parentSpanId": parent,
        "name": name,
        "startTimeUnixNano": str(1767225600_000_000_000 + start * 1_000_000),
        "endTimeUnixNano": str(1767225600_000_000_000 + (start + 400) * 1_000_000),
        "attributes": _kv(attrs),
        "status": {},
    }


def test_older_attribute_styles_and_spans_without_content() -> None:
    body = _request(
        _span(
            "eee19b7ec3c1b174",
            "anthropic.chat",
            0,
            {
                "llm.request.type": "chat",
                "gen_ai.system": "Anthropic",
                "gen_ai.request.model": "claude-sonnet-4-5",
                "gen_ai.prompt.0.role": "user",
                "gen_ai.prompt.0.content": "What is 2+2?",
                "gen_ai.completion.0.role": "assistant",
                "gen_ai.completion.0.content": "4",
                "gen_ai.completion.0.finish_reason": "end_turn",
                "gen_ai.usage.prompt_tokens": 12,
                "gen_ai.usage.completion_tokens": 1,
            },
        ),
        _span(
            "eee19b7ec3c1b175",
            "ChatOpenAI",
            1000,
            {
                "openinference.span.kind": "LLM",
                "llm.model_name": "gpt-4o",
                "llm.input_messages.0.message.role": "user",
                "llm.input_messages.0.message.content": "And 3+3?",
                "llm.output_messages.0.message.role": "assistant",
                "llm.output_messages.0.message.content": "6",
                "llm.token_count.prompt": 20,
                "llm.token_count.completion": 1,
            },
        ),
        _span(
            "eee19b7ec3c1b176",
            "chat claude-sonnet-4-5",
            2000,
            {
                "gen_ai.operation.name": "chat",
                "gen_ai.request.model": "claude-sonnet-4-5",
                "gen_ai.usage.input_tokens": 30,
                "gen_ai.usage.output_tokens": 2,
            },
        ),
        _span(
            "eee19b7ec3c1b177",
            "execute_tool lookup",
            3000,
            {
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": "lookup",
                "gen_ai.tool.call.id": "call_9",
            },
        ),
        _span("eee19b7ec3c1b178", "GET /health", 4000, {"http.method": "GET"}),
    )
    conv = convert_request(body)
    trace = Trace.from_bytes(conv.main.to_bytes(), "<otlp>")
    steps = trace.steps()
    assert [s.kind for s in steps] == ["model", "model", "model", "tool"]
    assert steps[0].response.text == "4"  # type: ignore[union-attr]
    assert (
        trace.request_for(steps[0].request_event).messages[0]["content"][0]["text"]
        == "What is 2+2?"
    )  # type: ignore[arg-type]
    assert steps[0].response.usage.input_tokens == 12  # type: ignore[union-attr]
    assert steps[1].response.text == "6"  # type: ignore[union-attr]
    assert steps[1].response.usage.input_tokens == 20  # type: ignore[union-attr]
    # Content not captured: still a step, and marked so.
    assert steps[2].response_event.model_extra["not_captured"] == ["input", "output"]  # type: ignore[union-attr]
    assert steps[2].response.usage.output_tokens == 2  # type: ignore[union-attr]
    assert steps[3].result.model_extra["not_captured"] == ["content"]  # type: ignore[union-attr]
    assert trace.start.task == "What is 2+2?"
    assert trace.start.metadata["service_name"] == "shop"


def test_fuzzed_otlp_bodies_give_runs_or_one_clear_error() -> None:
    from .fuzzing import CASES, _mutate_value, rng_for

    seed = _body(Trace.load(SAMPLES / "refund_denied_compaction.jsonl"))
    rng = rng_for("otlp")
    for case in range(CASES):
        body = seed
        for _ in range(rng.randint(1, 4)):
            body = _mutate_value(rng, body)
        try:  # `regista import otlp FILE` reads any JSON: a file's bytes go in whole
            otlp_file_convert(Path("fuzz.json"), orjson.dumps(body))
        except RegistaError:
            pass
        except Exception as exc:  # pragma: no cover - the failure report
            raise AssertionError(f"case {case} (file): {type(exc).__name__}: {exc}") from exc
        if not isinstance(body, dict):
            continue
        try:
            conv = convert_request(body)
        except RegistaError:
            continue
        except Exception as exc:  # pragma: no cover - the failure report
            raise AssertionError(f"case {case}: {type(exc).__name__}: {exc}") from exc
        for run in conv.runs:
            Trace.from_bytes(run.to_bytes(), "<fuzz>").steps()


@pytest.mark.parametrize(
    "data", [b'{"resourceSpans": 5}', b'{"resourceSpans": {"a": 1}}', b"[1]", b'"x"', b"{nope"]
)
def test_import_otlp_of_a_file_without_spans_is_one_line(
    tmp_path: Path, data: bytes, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "spans.json"
    path.write_bytes(data)
    assert main(["import", "otlp", str(path), "--trace-dir", str(tmp_path / "out")]) != 0
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no OpenTelemetry GenAI spans" in err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    "body",
    [
        {"resourceSpans": 5},
        {"resourceSpans": [5]},
        {"resourceSpans": [{"scopeSpans": 3}]},
        {"resourceSpans": [{"scopeSpans": [5]}]},
        {"resourceSpans": [{"scopeSpans": [{"spans": [1, {"traceId": "x"}]}]}]},
    ],
)
def test_the_receiver_answers_a_misshapen_json_body_without_a_500(
    tmp_path: Path, body: dict[str, Any]
) -> None:
    import httpx2

    with BackgroundServer(create_app(tmp_path)) as server, httpx2.Client(base_url=server.url) as c:
        r = c.post("/v1/traces", json=body)
        assert r.status_code in (200, 400), r.text
        assert "internal error" not in r.text


@pytest.mark.parametrize("api", ["anthropic", "openai"])
def test_a_recorded_sdk_run_exported_and_received_replays_strictly(
    tmp_path: Path, api: str
) -> None:
    """An SDK agent with a tool result, recorded by the proxy, exported over OTLP with its
    content and received again: the same request hashes, and a strict replay through the
    real SDK serves every call (the strict digest matches) with the provider down."""
    import anthropic
    import openai
    from fakes.anthropic_server import FakeAnthropicServer
    from fakes.openai_server import FakeOpenAIServer

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "server"))
    from sdk_agents import anthropic_agent, new_replay, openai_agent, regista_server

    fake: Any = FakeAnthropicServer() if api == "anthropic" else FakeOpenAIServer()
    if api == "anthropic":
        fake.script(
            {"content": [{"type": "tool_use", "id": "toolu_1", "name": "get_weather",
                          "input": {"city": "Paris"}}]},
            {"content": [{"type": "text", "text": "Sunny in Paris."}]},
        )  # fmt: skip
    else:
        fake.script(
            {"tool_calls": [{"id": "call_1", "name": "get_weather",
                             "arguments": '{"city": "Paris"}'}]},
            {"content": "Sunny in Paris."},
        )  # fmt: skip

    def agent(base_url: str) -> str:
        if api == "anthropic":
            return anthropic_agent(anthropic.Anthropic(api_key="k", base_url=base_url))
        return openai_agent(openai.OpenAI(api_key="k", base_url=base_url))

    with fake, regista_server(tmp_path / "rec", **{api: fake.url}) as server:
        recorded = agent(f"{server.url}/v1/record/{api}")
        server.record_done()
    (path,) = (tmp_path / "rec").glob("*.jsonl")
    original = Trace.load(path)
    assert [s.kind for s in original.steps()] == ["model", "tool", "model"]
    store = tmp_path / "store"
    with regista_server(store) as server:  # no upstream: nothing can be asked live
        exporter = OTLPSpanExporter(endpoint=f"{server.url}/v1/traces")
        assert exporter.export(_spans(original)).name == "SUCCESS"
        exporter.shutdown()  # type: ignore[no-untyped-call]
        back = Trace.load(store / f"{original.session_id}.jsonl")
        assert back.request_hashes() == original.request_hashes()
        rp = new_replay(server, back.session_id, mode="strict")
        assert agent(rp[f"{api}_base_url"]) == recorded
        status = server.http.get(f"/v1/replays/{rp['id']}").json()
        assert status["served"] == status["matched"] == status["calls"] == 2, status


def test_tool_choice_tools_and_sampling_come_back_from_an_export(tmp_path: Path) -> None:
    """What the GenAI attributes do not carry (tool choice, tools as sent, sampling
    parameters) is exported too, so an imported request has the recorded request hash."""
    import anthropic
    from fakes.anthropic_server import FakeAnthropicServer

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "server"))
    from sdk_agents import regista_server

    tools: list[Any] = [
        {
            "name": "get_weather",
            "description": "Current weather for a city.",
            "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}},
            "cache_control": {"type": "ephemeral"},
        }
    ]
    with (
        FakeAnthropicServer() as fake,
        regista_server(tmp_path / "rec", anthropic=fake.url) as server,
    ):
        fake.script(
            {"content": [{"type": "tool_use", "id": "toolu_1", "name": "get_weather",
                          "input": {"city": "Paris"}}]},
            {"content": [{"type": "text", "text": "Sunny."}]},
        )  # fmt: skip
        client = anthropic.Anthropic(api_key="k", base_url=f"{server.url}/v1/record/anthropic")
        messages: list[Any] = [{"role": "user", "content": "Weather in Paris?"}]
        first = client.messages.create(
            model="claude-sonnet-4-6",
            max_tokens=300,
            messages=messages,
            tools=tools,
            tool_choice={"type": "tool", "name": "get_weather"},
            extra_body={"temperature": 0.2, "top_k": 5},
        )
        messages.append({"role": "assistant", "content": first.content})
        messages.append(
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "sunny"}],
            }
        )
        client.messages.create(
            model="claude-sonnet-4-6",
            max_tokens=300,
            messages=messages,
            tools=tools,
            tool_choice={"type": "none"},
            metadata={"user_id": "u-1"},
        )
        server.record_done()
    (path,) = (tmp_path / "rec").glob("*.jsonl")
    original = Trace.load(path)
    back = Trace.from_bytes(convert_request(_body(original)).main.to_bytes(), "<otlp>")
    assert back.request_hashes() == original.request_hashes()
    for x, y in zip(original.llm_calls(), back.llm_calls(), strict=True):
        assert (y[0].tool_choice, y[0].params, y[0].tools) == (
            x[0].tool_choice,
            x[0].params,
            x[0].tools,
        )


def _plain_agent_body() -> dict[str, Any]:
    """The span shapes of a plain agent (a root span per call, in a trace of its own), as
    OpenLLMetry, OpenInference and the anthropic SDK write them: system messages, tool calls,
    tool messages, raw bodies, content left out, and the SDK's own duplicate spans."""
    system = {"role": "system", "parts": [{"type": "text", "content": "Be brief."}]}
    user = {"role": "user", "parts": [{"type": "text", "content": "Weather?"}]}
    call = {"type": "tool_call", "id": "call_1", "name": "w", "arguments": {"city": "Oslo"}}
    spans = []
    for n, (trace, scope_attrs) in enumerate(
        [
            (
                "a1",
                {
                    "gen_ai.input.messages": orjson.dumps([system, user]).decode(),
                    "gen_ai.output.messages": orjson.dumps(
                        [{"role": "assistant", "parts": [call]}]
                    ).decode(),
                },
            ),
            (
                "a2",
                {
                    "gen_ai.input.messages": orjson.dumps(
                        [
                            system,
                            user,
                            {"role": "assistant", "parts": [call]},
                            {
                                "role": "tool",
                                "parts": [
                                    {
                                        "type": "tool_call_response",
                                        "id": "call_1",
                                        "response": "cold",
                                    }
                                ],
                            },
                        ]
                    ).decode()
                },
            ),
            (
                "b1",
                {
                    "openinference.span.kind": "LLM",
                    "llm.provider": "anthropic",
                    "input.mime_type": "application/json",
                    "input.value": orjson.dumps(
                        {
                            "model": "m",
                            "system": "S",
                            "max_tokens": 9,
                            "messages": [{"role": "user", "content": "q"}],
                        }
                    ).decode(),
                    "output.mime_type": "application/json",
                    "output.value": orjson.dumps(
                        {
                            "id": "msg_1",
                            "role": "assistant",
                            "content": [{"type": "tool_use", "id": "t", "name": "w", "input": {}}],
                        }
                    ).decode(),
                    "llm.input_messages.0.message.role": "system",
                    "llm.input_messages.0.message.content": "S",
                    "llm.output_messages.0.message.tool_calls.0.tool_call.id": "t",
                    "llm.output_messages.0.message.tool_calls.0.tool_call.function.name": "w",
                    "llm.token_count.prompt": 3,
                },
            ),
            (
                "b2",
                {
                    "openinference.span.kind": "LLM",
                    "llm.system": "openai",
                    "llm.model_name": "gpt-4o",
                    "llm.input_messages.0.message.role": "user",
                    "llm.input_messages.0.message.content": "q",
                    "llm.input_messages.1.message.role": "assistant",
                    "llm.input_messages.1.message.tool_calls.0.tool_call.id": "c",
                    "llm.input_messages.1.message.tool_calls.0.tool_call.function.arguments": "{}",
                    "llm.input_messages.2.message.role": "tool",
                    "llm.input_messages.2.message.tool_call_id": "c",
                    "llm.input_messages.2.message.content": "r",
                    "llm.tools.0.tool.json_schema": '{"type": "function", "function": {}}',
                    "llm.invocation_parameters": '{"max_tokens": 5}',
                },
            ),
        ]
    ):
        attrs = {"gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai",
                 "gen_ai.request.model": "gpt-4o", "gen_ai.response.id": f"r{n}",
                 "gen_ai.usage.input_tokens": 5, **scope_attrs}  # fmt: skip
        span = _span(f"{n + 1:016x}", "chat", n * 1000, attrs)
        span["traceId"] = trace * 16
        spans.append(span)
    native = _span("00000000000000ff", "anthropic.messages.create", 10, {
        "gen_ai.operation.name": "chat", "gen_ai.provider.name": "anthropic",
        "gen_ai.request.model": "gpt-4o", "gen_ai.response.id": "r0",
        "gen_ai.usage.cache_write.input_tokens": 1})  # fmt: skip
    native["traceId"] = "ff" * 16
    body = _request(*spans)
    body["resourceSpans"].append(
        {"scopeSpans": [{"scope": {"name": "com.anthropic.sdk.python"}, "spans": [native]}]}
    )
    return body


def test_plain_agent_span_shapes_group_and_drop_duplicates() -> None:
    conv = convert_request(_plain_agent_body())
    runs = [Trace.from_bytes(r.to_bytes(), "<otlp>") for r in conv.runs]
    kinds = sorted([s.kind for s in r.steps()] for r in runs)
    assert kinds == [["model", "model"], ["model", "tool", "model"]]
    grouped = next(r for r in runs if len(r.steps()) == 3)
    request = grouped.request_for(grouped.steps()[2].request_event)  # type: ignore[arg-type]
    assert request.system == "Be brief."
    assert request.messages[-1]["content"][0]["content"] == [{"type": "text", "text": "cold"}]
    assert conv.report.skipped["model span seen twice (SDK-native duplicate)"] == 1


def test_fuzzed_plain_agent_spans_give_runs_that_read_back_or_one_clear_error() -> None:
    from .fuzzing import CASES, _mutate_value, rng_for

    seed = _plain_agent_body()
    rng = rng_for("otlp-plain")
    for case in range(CASES):
        body = seed
        for _ in range(rng.randint(1, 6)):
            body = _mutate_value(rng, body)
        if not isinstance(body, dict):
            continue
        try:
            conv = convert_request(body)
        except RegistaError:
            continue
        except Exception as exc:  # pragma: no cover - the failure report
            raise AssertionError(f"case {case}: {type(exc).__name__}: {exc}") from exc
        for run in conv.runs:
            Trace.from_bytes(run.to_bytes(), "<fuzz>").steps()


def test_the_receiver_gives_the_same_runs_whatever_order_the_spans_arrive_in(
    tmp_path: Path,
) -> None:
    """A plain agent's spans posted one by one, in seeded random orders: the store ends with
    the runs of the whole body (a conversation's traces joined, the SDK's duplicates gone,
    earlier conversions removed)."""
    import httpx2

    from .fuzzing import rng_for

    body = _plain_agent_body()
    expected = {r.session_id: r.to_bytes() for r in convert_request(body, "otlp").runs}
    assert expected
    singles = [
        {"resourceSpans": [{**rs, "scopeSpans": [{**ss, "spans": [sp]}]}]}
        for rs in body["resourceSpans"]
        for ss in rs["scopeSpans"]
        for sp in ss["spans"]
    ]
    rng = rng_for("otlp-order")
    for attempt in range(4):
        rng.shuffle(singles)
        store = tmp_path / f"store{attempt}"
        with BackgroundServer(create_app(store)) as server, httpx2.Client(base_url=server.url) as c:
            for single in singles:
                assert c.post("/v1/traces", json=single).status_code == 200
        got = {p.stem: p.read_bytes() for p in store.glob("*.jsonl")}
        assert got.keys() == expected.keys(), attempt
        for sid, data in expected.items():
            a, b = Trace.from_bytes(data, "a"), Trace.from_bytes(got[sid], "b")
            assert a.request_hashes() == b.request_hashes()
            assert [s.kind for s in a.steps()] == [s.kind for s in b.steps()]


def test_openinference_tool_spans_are_the_tool_steps() -> None:
    """A framework instrumented by OpenInference: an AGENT span over LLM and TOOL spans. The
    TOOL span's input.value / output.value are the call's input and result, and the tool
    results in the next call's messages do not make a second tool step."""
    oi_call = {
        "llm.input_messages.0.message.role": "user",
        "llm.input_messages.0.message.content": "Weather?",
        "llm.output_messages.0.message.role": "assistant",
        "llm.output_messages.0.message.tool_calls.0.tool_call.id": "call_9",
        "llm.output_messages.0.message.tool_calls.0.tool_call.function.name": "weather",
        "llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments": '{"c": 1}',
    }
    again = {
        "llm.input_messages.0.message.role": "user",
        "llm.input_messages.0.message.content": "Weather?",
        "llm.input_messages.1.message.role": "assistant",
        "llm.input_messages.1.message.tool_calls.0.tool_call.id": "call_9",
        "llm.input_messages.1.message.tool_calls.0.tool_call.function.name": "weather",
        "llm.input_messages.2.message.role": "tool",
        "llm.input_messages.2.message.tool_call_id": "call_9",
        "llm.input_messages.2.message.content": "cold",
        "llm.output_messages.0.message.role": "assistant",
        "llm.output_messages.0.message.content": "Cold.",
    }
    common = {"openinference.span.kind": "LLM", "llm.system": "openai", "llm.model_name": "m"}
    body = _request(
        _span("00000000000000a0", "agent", 0, {"openinference.span.kind": "AGENT"}),
        _span("00000000000000a1", "llm", 10, {**common, **oi_call}, "00000000000000a0"),
        _span(
            "00000000000000a2",
            "weather",
            500,
            {
                "openinference.span.kind": "TOOL",
                "tool.name": "weather",
                "tool_call.id": "call_9",
                "input.value": '{"c": 1}',
                "input.mime_type": "application/json",
                "output.value": "cold",
            },
            "00000000000000a0",
        ),
        _span("00000000000000a3", "llm", 1000, {**common, **again}, "00000000000000a0"),
    )
    trace = Trace.from_bytes(convert_request(body).main.to_bytes(), "<otlp>")
    steps = trace.steps()
    assert [s.kind for s in steps] == ["model", "tool", "model"]
    tool = steps[1]
    assert tool.tool_call is not None and tool.tool_call.tool_use_id == "call_9"
    assert tool.tool_call.input == {"c": 1}
    assert tool.result is not None and tool.result.content == "cold"
    assert steps[0].response.tool_uses[0]["name"] == "weather"  # type: ignore[union-attr]
    assert steps[0].response_event.provider == "openai"  # type: ignore[union-attr]
    assert trace.start.model == "m"


def test_a_batch_the_receiver_refuses_does_not_spoil_later_ones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import httpx2

    import regista.importers.otlp as otlp

    real = otlp.convert_request

    def picky(body: dict[str, Any], source: str = "<request>") -> Any:
        if any(s["name"] == "poison" for s in otlp.spans_of(body)):
            raise RegistaError("a span that does not read back")
        return real(body, source)

    monkeypatch.setattr(otlp, "convert_request", picky)
    body = _plain_agent_body()
    first, *rest = body["resourceSpans"]
    poison = _span("00000000000000ee", "poison", 5, {"gen_ai.operation.name": "chat"})
    poison["traceId"] = "a1" * 16
    with BackgroundServer(create_app(tmp_path)) as server, httpx2.Client(base_url=server.url) as c:
        assert c.post("/v1/traces", json={"resourceSpans": [first]}).status_code == 200
        assert c.post("/v1/traces", json=_request(poison)).status_code == 400
        assert c.post("/v1/traces", json={"resourceSpans": rest}).status_code == 200
    assert len(list(tmp_path.glob("*.jsonl"))) == len(real(body).runs)


def test_messages_come_back_from_an_export_as_they_were() -> None:
    """Fields besides role and content (an OpenAI message's kept fields, a meta message's
    origin), system-role messages and two user messages in a row survive export → import."""
    from regista.importers._otlp_calls import genai_messages
    from regista.trace.otel_messages import input_messages

    messages = [
        {"role": "user", "content": [{"type": "text", "text": "hi"}], "origin": "meta"},
        {"role": "user", "content": [{"type": "text", "text": "again"}]},
        {"role": "system", "content": [{"type": "text", "text": "Be brief."}]},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t1", "name": "f", "input": {}}],
            "openai": {"refusal": None},
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "t1", "content": "ok"},
                {"type": "text", "text": "and also"},
            ],
        },
    ]
    assert genai_messages(orjson.dumps(input_messages(messages)).decode(), system=[]) == messages


def test_an_export_keeps_one_hour_cache_writes_and_reasoning(tmp_path: Path) -> None:
    """Spans carried only the sum of cache writes and no reasoning count: an exported
    session's 1-hour writes read as 5-minute ones (priced lower) and its reasoning was lost,
    in the backend and in the run the receiver made of the spans."""
    from regista.tokens import Tokens
    from regista.trace.otel_spans import CACHE_1H, REASONING

    from .cc_fixtures import CCSession, text

    s = CCSession(model="claude-opus-4-7")
    s.prompt("Think hard")
    usage = {
        "input_tokens": 10,
        "output_tokens": 100,
        "reasoning_output_tokens": 40,
        "cache_creation_input_tokens": 3000,
        "cache_read_input_tokens": 500,
        "cache_creation": {"ephemeral_5m_input_tokens": 1000, "ephemeral_1h_input_tokens": 2000},
    }
    s.answer(text("Done."), usage=usage)
    src = s.write(tmp_path / "s.jsonl")
    trace = Trace.from_bytes(convert("claude-code", src).main.to_bytes(), src)
    want = Tokens(10, 100, 500, 1000, 2000, 40)
    assert trace.summary().tokens == want
    spans = _spans(trace)
    for span in spans:
        attrs = span.attributes or {}
        if "gen_ai.usage.output_tokens" in attrs:
            assert (attrs[CACHE_1H], attrs[REASONING]) == (2000, 40), span.name
            assert attrs["gen_ai.usage.cache_creation.input_tokens"] == 3000
    back = Trace.from_bytes(convert_request(_body(trace)).main.to_bytes(), "<otlp>")
    assert back.summary().tokens == want
    assert back.summary().cost_usd == pytest.approx(trace.summary().cost_usd)


def test_the_turns_of_spans_are_what_the_person_typed() -> None:
    """Spans that say no turn (other instrumentations') were one turn whatever was asked:
    a conversation of two prompts read "1 turn"."""

    def chat(span_id: str, start: int, *said: str) -> dict[str, Any]:
        history = []
        for i, text in enumerate(said):
            role = "user" if i % 2 == 0 else "assistant"
            history.append({"role": role, "parts": [{"type": "text", "content": text}]})
        reply = [{"role": "assistant", "parts": [{"type": "text", "content": "Sunny."}]}]
        return _span(
            span_id,
            "chat m",
            start,
            {
                "gen_ai.operation.name": "chat",
                "gen_ai.request.model": "m",
                "gen_ai.input.messages": orjson.dumps(history).decode(),
                "gen_ai.output.messages": orjson.dumps(reply).decode(),
            },
        )

    body = _request(
        chat("a1", 0, "Weather in Oslo?"),
        chat("a2", 1000, "Weather in Oslo?", "Sunny.", "<system-reminder>x</system-reminder>"),
        chat("a3", 2000, "Weather in Oslo?", "Sunny.", "And in Rome?"),
    )
    trace = Trace.from_bytes(convert_request(body).main.to_bytes(), "<otlp>")
    assert [s.turn for s in trace.steps()] == [0, 0, 1]
    assert trace.summary().turns == 2
