"""LangChain's ``ChatAnthropic`` under regista: a tool-calling agent (``bind_tools``, then a
loop that runs the tools asked for until the model answers)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from conformance.flow import conform
from conformance.matrix import pkg_version, row
from conformance.test_langchain_openai import tool_loop


def _runner(stream: bool) -> Any:
    def run(base_url: str, system: str) -> str:
        from langchain_anthropic import ChatAnthropic

        llm = ChatAnthropic(  # type: ignore[call-arg]
            model_name="claude-sonnet-4-6", base_url=base_url, api_key="k", streaming=stream
        )
        return tool_loop(llm, system)

    return run


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
def test_langchain_anthropic(tmp_path: Path, capsys: Any, stream: bool) -> None:
    name = "langchain-anthropic" + (" (stream)" if stream else "")
    r = row(name, pkg_version("langchain-anthropic"))
    conform(r, "anthropic", _runner(stream), tmp_path, capsys)
