"""What the AnthropicProvider tests share: a provider on the fake server, a request, a tool."""

from __future__ import annotations

from typing import Any

from fakes.anthropic_server import FakeAnthropicServer

from regista import tool
from regista.providers.anthropic import AnthropicProvider
from regista.types import LlmRequest

MODEL = "claude-sonnet-4-6"
SECRET = "sk-ant-test-SECRET-123"


def provider(server: FakeAnthropicServer, **kwargs: Any) -> AnthropicProvider:
    kwargs.setdefault("api_key", "sk-ant-test-key")
    kwargs.setdefault("max_retries", 0)
    return AnthropicProvider(MODEL, base_url=server.url, **kwargs)


def request(**kwargs: Any) -> LlmRequest:
    kwargs.setdefault("model", MODEL)
    kwargs.setdefault("messages", [{"role": "user", "content": [{"type": "text", "text": "hi"}]}])
    return LlmRequest(**kwargs)


@tool
def get_weather(
    city: str, units: dict[str, str | None] | None = None, days: list[int] | None = None
) -> str:
    """Current weather for a city.

    Args:
        city: The city.
        units: Units per quantity.
        days: Days ahead to forecast.
    """
    return f"Sunny in {city}, 21°C"


TOOL_ANSWER = {
    "content": [
        {"type": "text", "text": "Let me check the weather."},
        {
            "type": "tool_use",
            "id": "toolu_01",
            "name": "get_weather",
            "input": {"city": "Paris", "units": {"temp": "C", "extra": None}, "days": [1, 2]},
        },
    ],
    "usage": {
        "input_tokens": 120,
        "output_tokens": 42,
        "cache_creation_input_tokens": 30,
        "cache_read_input_tokens": 900,
    },
}
THINKING_ANSWER = {
    "content": [
        {"type": "thinking", "thinking": "The user greets me; I greet back.", "signature": "c2ln"},
        {"type": "redacted_thinking", "data": "ZW5jcnlwdGVk"},
        {"type": "text", "text": "Hello! How can I help you today?"},
    ],
    "stop_reason": "end_turn",
}


def auth_values(headers: dict[str, str]) -> str:
    """The credential headers' values, joined."""
    return " ".join(v for k, v in headers.items() if k in ("authorization", "x-api-key"))
