"""Apps using the real anthropic and openai SDKs, instrumented by OpenLLMetry or
OpenInference, exporting their spans over OTLP/HTTP. Run as a script by the end-to-end tests:

    python openllmetry_app.py OTLP_URL ANTHROPIC_URL OPENAI_URL [--openinference|--native] [--plain]

``--plain`` runs the loop people write (tests/server/sdk_agents.py) on each SDK, with a tool
call, a tool result and a system prompt, and no span of its own around it: every model call
is a root span. The tracer provider is the global one, as ``Traceloop.init`` or Phoenix's
``register`` set it, so the anthropic SDK's own spans are exported too; ``--native`` leaves
the instrumentations out: only the SDK's own spans are sent.
"""

from __future__ import annotations

import sys
from pathlib import Path

import anthropic
import openai
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "server"))


def _instrument(provider: TracerProvider, openinference: bool) -> None:
    if openinference:
        from openinference.instrumentation.anthropic import (
            AnthropicInstrumentor as OIAnthropic,
        )
        from openinference.instrumentation.openai import OpenAIInstrumentor as OIOpenAI

        OIAnthropic().instrument(tracer_provider=provider)
        OIOpenAI().instrument(tracer_provider=provider)
        return
    from opentelemetry.instrumentation.anthropic import AnthropicInstrumentor
    from opentelemetry.instrumentation.openai import OpenAIInstrumentor

    AnthropicInstrumentor().instrument(tracer_provider=provider)
    OpenAIInstrumentor().instrument(tracer_provider=provider)


def _plain(anthropic_url: str, openai_url: str) -> None:
    from sdk_agents import anthropic_agent, openai_agent

    claude = anthropic.Anthropic(api_key="test-key", base_url=anthropic_url, max_retries=0)
    print("anthropic:", anthropic_agent(claude))
    gpt = openai.OpenAI(api_key="test-key", base_url=openai_url, max_retries=0)
    print("openai:", openai_agent(gpt))


def _wrapped(provider: TracerProvider, anthropic_url: str, openai_url: str) -> None:
    tracer = provider.get_tracer("shop")
    claude = anthropic.Anthropic(api_key="test-key", base_url=anthropic_url, max_retries=0)
    with tracer.start_as_current_span("refund conversation"):
        messages: list[dict[str, object]] = [{"role": "user", "content": "Refund order ORD-7?"}]
        first = claude.messages.create(model="claude-sonnet-4-5", max_tokens=256, messages=messages)
        messages += [{"role": "assistant", "content": [b.model_dump() for b in first.content]}]
        tool = next(b for b in first.content if b.type == "tool_use")
        messages.append(
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": tool.id, "content": "ORD-7: $40, paid"}
                ],
            }
        )
        final = claude.messages.create(model="claude-sonnet-4-5", max_tokens=256, messages=messages)
        print("anthropic:", final.content[0].text)  # type: ignore[union-attr]

    gpt = openai.OpenAI(api_key="test-key", base_url=openai_url, max_retries=0)
    with tracer.start_as_current_span("summary"):
        answer = gpt.chat.completions.create(
            model="gpt-4o-mini",
            messages=[{"role": "user", "content": "Summarise: ORD-7 refunded."}],
        )
        print("openai:", answer.choices[0].message.content)


def main() -> None:
    otlp, anthropic_url, openai_url = sys.argv[1:4]
    flags = set(sys.argv[4:])
    provider = TracerProvider(resource=Resource.create({"service.name": "shop-assistant"}))
    provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=otlp)))
    trace.set_tracer_provider(provider)
    if "--native" not in flags:
        _instrument(provider, "--openinference" in flags)
    if "--plain" in flags:
        _plain(anthropic_url, openai_url)
    else:
        _wrapped(provider, anthropic_url, openai_url)
    provider.shutdown()


if __name__ == "__main__":
    main()
