"""Where a model call went and whether it streamed: recorded by the loop on each answer,
carried by replays, exported as ``server.address`` / ``server.port`` /
``gen_ai.request.stream`` (real SDK against a fake on 127.0.0.1, real OpenTelemetry SDK),
and received back by the OTLP importer."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
from fakes.anthropic_server import FakeAnthropicServer
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from regista import Agent, replay
from regista.providers import AnthropicProvider, ScriptedProvider
from regista.providers.base import server_of
from regista.trace.events import LlmResponseEvent
from regista.trace.otel import export_trace
from regista.trace.reader import Trace


def chat_spans(path: Path | Trace) -> list[ReadableSpan]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    export_trace(path, provider, include_content=True)
    return [s for s in exporter.get_finished_spans() if s.name.startswith("chat ")]


def answers(path: Path) -> list[LlmResponseEvent]:
    return [e for e in Trace.load(path).events if isinstance(e, LlmResponseEvent)]


async def run_through_sdk(fake: FakeAnthropicServer, trace_dir: Path, stream: bool) -> Path:
    fake.script({"content": [{"type": "text", "text": "Sunny in Paris."}]})
    provider = AnthropicProvider(
        "claude-sonnet-4-6", api_key="sk-ant-test", base_url=fake.url, stream=stream, max_retries=0
    )
    agent = Agent(model="claude-sonnet-4-6", provider=provider, trace_dir=trace_dir)
    result = await agent.run("Weather in Paris?")
    await provider.aclose()
    return result.trace_path


@pytest.mark.parametrize("stream", [False, True])
async def test_the_loop_records_stream_and_server_and_exports_them(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path, stream: bool
) -> None:
    path = await run_through_sdk(fake_anthropic, tmp_path, stream)
    port = int(fake_anthropic.url.rsplit(":", 1)[1].split("/")[0])
    (resp,) = answers(path)
    extra = resp.model_extra or {}
    assert extra["stream"] is stream
    assert extra["server"] == {"address": "127.0.0.1", "port": port}
    assert b"sk-ant-test" not in path.read_bytes()

    (span,) = chat_spans(path)
    attrs = dict(span.attributes or {})
    assert attrs["gen_ai.request.stream"] is stream
    assert attrs["server.address"] == "127.0.0.1"
    assert attrs["server.port"] == port

    # A replay serves the recorded call: it says how that call was made.
    replayed = await replay(path)
    (again,) = answers(replayed.trace_path)
    assert again.source == "recorded"
    assert (again.model_extra or {})["server"] == extra["server"]
    (rspan,) = chat_spans(replayed.trace_path)
    assert rspan.attributes is not None
    assert rspan.attributes["server.port"] == port
    assert rspan.attributes["gen_ai.request.stream"] is stream


async def test_received_spans_keep_stream_and_server(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path
) -> None:
    """export (the real OTLP/HTTP exporter) → ``regista serve``'s receiver: the same
    ``stream`` and ``server`` come back."""
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    from regista.server import BackgroundServer, create_app

    path = await run_through_sdk(fake_anthropic, tmp_path / "traces", True)
    store = tmp_path / "store"
    with BackgroundServer(create_app(store)) as server:
        provider = TracerProvider()
        provider.add_span_processor(
            SimpleSpanProcessor(OTLPSpanExporter(endpoint=f"{server.url}/v1/traces"))
        )
        export_trace(path, provider, include_content=True)
        provider.shutdown()
    (received,) = store.glob("*.jsonl")
    (resp,) = answers(received)
    (orig,) = answers(path)
    assert (resp.model_extra or {})["stream"] is True
    assert (resp.model_extra or {})["server"] == (orig.model_extra or {})["server"]


async def test_traces_without_them_load_and_export_without_them(tmp_path: Path) -> None:
    agent = Agent(
        model="claude-sonnet-4-6",
        provider=ScriptedProvider([{"content": [{"type": "text", "text": "hi"}]}]),
        trace_dir=tmp_path,
    )
    result = await agent.run("hello")
    line = next(
        orjson.loads(x)
        for x in result.trace_path.read_bytes().splitlines()
        if b'"llm.response"' in x
    )
    assert "stream" not in line and "server" not in line  # nothing invented
    (span,) = chat_spans(result.trace_path)
    attrs = dict(span.attributes or {})
    assert not {"server.address", "server.port", "gen_ai.request.stream"} & set(attrs)


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://api.anthropic.com", {"address": "api.anthropic.com", "port": 443}),
        ("http://127.0.0.1:8787/v1", {"address": "127.0.0.1", "port": 8787}),
        (
            "http://user:sk-secret@proxy.local:3128/x?key=sk-abc",
            {"address": "proxy.local", "port": 3128},
        ),
        ("http://[::1]:9000", {"address": "::1", "port": 9000}),
        ("gopher://host.example", {"address": "host.example"}),
        ("http://host:notaport", None),
        ("", None),
        (None, None),
        ("not a url", None),
    ],
)
def test_server_of_keeps_only_host_and_port(url: str | None, expected: Any) -> None:
    got = server_of(url)
    assert got == expected
    assert "secret" not in repr(got) and "key" not in repr(got)
