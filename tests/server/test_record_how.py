"""The record proxy says how each call was made: whether the SDK streamed it and the host
and port of the upstream it went to (never the key), and the export sends them."""

from __future__ import annotations

from pathlib import Path

import anthropic
import pytest
from fakes.anthropic_server import FakeAnthropicServer
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from sdk_agents import anthropic_agent

from regista.server import BackgroundServer, create_app
from regista.trace.events import LlmResponseEvent
from regista.trace.otel import export_trace
from regista.trace.reader import Trace


@pytest.mark.parametrize("stream", [False, True])
def test_recorded_calls_say_stream_and_server(tmp_path: Path, stream: bool) -> None:
    with FakeAnthropicServer() as fake:
        fake.answer_with(lambda body: {"content": [{"type": "text", "text": "sunny"}]})
        port = int(fake.url.rstrip("/").rsplit(":", 1)[1])
        app = create_app(tmp_path, upstreams={"anthropic": fake.url})
        with BackgroundServer(app) as server:
            client = anthropic.Anthropic(
                api_key="sk-ant-how", base_url=f"{server.url}/v1/record/anthropic"
            )
            assert anthropic_agent(client, stream=stream) == "sunny"
    (path,) = tmp_path.glob("*.jsonl")
    assert b"sk-ant-how" not in path.read_bytes()
    (resp,) = [e for e in Trace.load(path).events if isinstance(e, LlmResponseEvent)]
    assert (resp.model_extra or {})["stream"] is stream
    assert (resp.model_extra or {})["server"] == {"address": "127.0.0.1", "port": port}
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    export_trace(path, provider)
    (chat,) = [s for s in exporter.get_finished_spans() if s.name.startswith("chat ")]
    assert chat.attributes is not None
    assert chat.attributes["gen_ai.request.stream"] is stream
    assert chat.attributes["server.port"] == port
