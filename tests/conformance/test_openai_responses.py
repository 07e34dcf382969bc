"""The OpenAI Responses API's clients under regista (:mod:`conformance.flow`, its
``openai-responses`` provider): the plain ``openai`` SDK's ``client.responses.create`` and
``responses.stream`` with a function tool, the OpenAI Agents SDK (``openai-agents``, whose
default model is the Responses API), run and streamed, and LangChain's ``ChatOpenAI`` with
``use_responses_api=True``."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import openai
import pytest
from server.responses_agent import responses_agent

from conformance.flow import TASK, Client, conform, get_weather
from conformance.matrix import pkg_version, row


def _plain(stream: bool) -> Client:
    def run(base_url: str, instructions: str) -> str:
        client = openai.OpenAI(api_key="k", base_url=base_url)  # the SDK's own retries on
        return responses_agent(client, TASK, instructions, stream=stream, tool=get_weather)

    return run


def _agents_sdk(stream: bool) -> Client:
    def run(base_url: str, instructions: str) -> str:
        from agents import (
            Agent,
            OpenAIResponsesModel,
            Runner,
            function_tool,
            set_tracing_disabled,
        )

        set_tracing_disabled(True)  # its traces would go to OpenAI's servers
        client = openai.AsyncOpenAI(api_key="k", base_url=base_url)
        agent = Agent(
            name="weather",
            instructions=instructions,
            tools=[function_tool(get_weather)],
            model=OpenAIResponsesModel(model="gpt-5-mini", openai_client=client),
        )

        async def go() -> str:
            if stream:
                result = Runner.run_streamed(agent, TASK)
                async for _ in result.stream_events():
                    pass
                return str(result.final_output)
            return str((await Runner.run(agent, TASK)).final_output)

        return asyncio.run(go())

    return run


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
def test_openai_sdk_responses(tmp_path: Path, capsys: Any, stream: bool) -> None:
    name = "openai responses.create" + (" (stream)" if stream else "")
    conform(row(name, pkg_version("openai")), "openai-responses", _plain(stream), tmp_path, capsys)


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
def test_openai_agents_sdk(tmp_path: Path, capsys: Any, stream: bool) -> None:
    name = "openai-agents (responses" + (", stream)" if stream else ")")
    r = row(name, pkg_version("openai-agents"))
    conform(r, "openai-responses", _agents_sdk(stream), tmp_path, capsys)


def _langchain(base_url: str, instructions: str) -> str:
    from langchain_openai import ChatOpenAI

    from conformance.test_langchain_openai import tool_loop

    llm = ChatOpenAI(model="gpt-5-mini", base_url=base_url, api_key="k", use_responses_api=True)
    return tool_loop(llm, instructions)


def test_langchain_openai_on_the_responses_api(tmp_path: Path, capsys: Any) -> None:
    r = row("langchain-openai (responses)", pkg_version("langchain-openai"))
    conform(r, "openai-responses", _langchain, tmp_path, capsys)
