"""LangChain's ``ChatAnthropic`` under regista: a tool-calling agent (``bind_tools``, then a
loop that runs the tools asked for until the model answers)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from conformance.flow import conform
from conformance.matrix import pkg_version, row
from conformance.test_langchain_openai import tool_loop


def _run(base_url: str, system: str) -> str:
    from langchain_anthropic import ChatAnthropic

    llm = ChatAnthropic(model_name="claude-sonnet-4-6", base_url=base_url, api_key="k")  # type: ignore[call-arg]
    return tool_loop(llm, system)


def test_langchain_anthropic(tmp_path: Path, capsys: Any) -> None:
    r = row("langchain-anthropic", pkg_version("langchain-anthropic"))
    conform(r, "anthropic", _run, tmp_path, capsys)
