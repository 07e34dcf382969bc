"""An app using the real anthropic and openai SDKs, instrumented by OpenLLMetry, exporting
its spans over OTLP/HTTP. Run as a script by the end-to-end test:

    python openllmetry_app.py OTLP_URL ANTHROPIC_URL OPENAI_URL
"""

from __future__ import annotations

import sys

import anthropic
import openai
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.instrumentation.anthropic import AnthropicInstrumentor
from opentelemetry.instrumentation.openai import OpenAIInstrumentor
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor


def main() -> None:
    otlp, anthropic_url, openai_url = sys.argv[1:4]
    provider = TracerProvider(resource=Resource.create({"service.name": "shop-assistant"}))
    provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=otlp)))
    AnthropicInstrumentor().instrument(tracer_provider=provider)
    OpenAIInstrumentor().instrument(tracer_provider=provider)
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
    provider.shutdown()


if __name__ == "__main__":
    main()
