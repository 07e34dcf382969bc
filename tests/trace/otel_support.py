"""A small traced session for the OpenTelemetry export tests, and its spans."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from builders import Effects, answer, tool_use, weather_tools
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from regista import Agent, deny
from regista.loop import FakeClock
from regista.providers import ScriptedProvider
from regista.trace.otel import export_trace
from regista.trace.reader import Trace


def small_agent(trace_dir: Path, script: list[Any] | None = None) -> Agent:
    """One turn with a tool that works, one that raises and one the policy denies."""

    def policy(call: Any) -> Any:
        return deny("Rome is out of scope") if call.input.get("city") == "Rome" else True

    first = answer(
        tool_use("toolu_ok", "get_weather", city="Paris"),
        tool_use("toolu_boom", "flaky", reason="test"),
        tool_use("toolu_no", "get_weather", city="Rome"),
        text="Checking.",
    )
    first["usage"] = {
        "input_tokens": 12,
        "output_tokens": 9,
        "cache_read_input_tokens": 5,
        "cache_creation_input_tokens": 3,
    }
    return Agent(
        model="claude-sonnet-4-6",
        instructions="You are a weather bot.",
        tools=weather_tools(Effects()),
        provider=ScriptedProvider(script or [first, answer(text="Paris is sunny.")]),
        policy=policy,
        trace_dir=trace_dir,
        params={"temperature": 0.3, "stop_sequences": ["END"]},
        metadata={"agent_name": "weather-bot"},
        clock=FakeClock(),
    )


def spans_of(
    path: Path | Trace, include_content: bool = False
) -> tuple[list[ReadableSpan], dict[str, Any]]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    summary = export_trace(path, provider, include_content=include_content)
    spans = list(exporter.get_finished_spans())
    assert summary.spans == len(spans)
    return spans, {"summary": summary}
