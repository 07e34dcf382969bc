"""pydantic-ai (``pydantic-ai-slim``) under regista, with its OpenAI and Anthropic models.

pydantic-ai always sends a ``tool_choice`` on OpenAI (``auto``): the recording keeps it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from conformance.flow import TASK, conform, get_weather
from conformance.matrix import pkg_version, row


def _openai(base_url: str, system: str) -> str:
    from pydantic_ai import Agent
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    model = OpenAIChatModel("gpt-4o", provider=OpenAIProvider(base_url=base_url, api_key="k"))
    agent = Agent(model, system_prompt=system, tools=[get_weather])
    return str(agent.run_sync(TASK).output)


def _anthropic(base_url: str, system: str) -> str:
    from pydantic_ai import Agent
    from pydantic_ai.models.anthropic import AnthropicModel
    from pydantic_ai.providers.anthropic import AnthropicProvider

    provider = AnthropicProvider(api_key="k", base_url=base_url)
    agent = Agent(
        AnthropicModel("claude-sonnet-4-6", provider=provider),
        system_prompt=system,
        tools=[get_weather],
    )
    return str(agent.run_sync(TASK).output)


def test_pydantic_ai_openai(tmp_path: Path, capsys: Any) -> None:
    r = row("pydantic-ai (openai)", pkg_version("pydantic-ai-slim"))
    conform(r, "openai", _openai, tmp_path, capsys)


def test_pydantic_ai_anthropic(tmp_path: Path, capsys: Any) -> None:
    r = row("pydantic-ai (anthropic)", pkg_version("pydantic-ai-slim"))
    conform(r, "anthropic", _anthropic, tmp_path, capsys)
