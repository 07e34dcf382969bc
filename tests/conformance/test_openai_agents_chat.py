"""The OpenAI Agents SDK (``openai-agents``) under regista, on chat completions
(``set_default_openai_api("chat_completions")``; its default, the Responses API, has a row
of its own)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from conformance.flow import TASK, conform, get_weather
from conformance.matrix import pkg_version, row


def _run(base_url: str, system: str) -> str:
    from agents import (
        Agent,
        Runner,
        function_tool,
        set_default_openai_api,
        set_default_openai_client,
        set_tracing_disabled,
    )
    from openai import AsyncOpenAI

    set_tracing_disabled(True)  # its traces would go to OpenAI
    set_default_openai_api("chat_completions")
    set_default_openai_client(AsyncOpenAI(base_url=base_url, api_key="k"), use_for_tracing=False)
    agent = Agent(
        name="weather", instructions=system, tools=[function_tool(get_weather)], model="gpt-4o"
    )
    return str(Runner.run_sync(agent, TASK).final_output)


def test_openai_agents_chat_completions(tmp_path: Path, capsys: Any) -> None:
    r = row("openai-agents (chat completions)", pkg_version("openai-agents"))
    conform(r, "openai", _run, tmp_path, capsys)
