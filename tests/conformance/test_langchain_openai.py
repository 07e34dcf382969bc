"""LangChain's ``ChatOpenAI`` under regista: a tool-calling agent (``bind_tools``, then a
loop that runs the tools asked for until the model answers)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from fakes.openai_server import FakeOpenAIServer

from conformance.flow import TASK, conform, get_weather
from conformance.matrix import pkg_version, row
from regista.cli.main import main


def tool_loop(llm: Any, system: str) -> str:
    """The loop of a LangChain tool-calling agent: call, run the tools, call again."""
    from langchain_core.messages import HumanMessage, SystemMessage, ToolMessage
    from langchain_core.tools import tool

    weather = tool(get_weather)
    bound = llm.bind_tools([weather])
    messages: list[Any] = [SystemMessage(system), HumanMessage(TASK)]
    for _ in range(10):
        ai = bound.invoke(messages)
        messages.append(ai)
        if not ai.tool_calls:
            return str(ai.content if isinstance(ai.content, str) else ai.text)
        for call in ai.tool_calls:
            messages.append(ToolMessage(weather.invoke(call["args"]), tool_call_id=call["id"]))
    raise AssertionError("the agent did not finish")


def _runner(stream: bool) -> Any:
    def run(base_url: str, system: str) -> str:
        from langchain_openai import ChatOpenAI

        llm = ChatOpenAI(model="gpt-4o", base_url=base_url, api_key="k", streaming=stream)  # type: ignore[arg-type]
        return tool_loop(llm, system)

    return run


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
def test_langchain_openai(tmp_path: Path, capsys: Any, stream: bool) -> None:
    name = "langchain-openai" + (" (stream)" if stream else "")
    r = row(name, pkg_version("langchain-openai"))
    conform(r, "openai", _runner(stream), tmp_path, capsys)


RETRYING = """
import sys
from langchain_openai import ChatOpenAI
llm = ChatOpenAI(model="gpt-4o", max_retries=0).with_retry(stop_after_attempt=3,
                                                           wait_exponential_jitter=False)
try:
    llm.invoke([("system", sys.argv[1]), ("user", "Weather in Paris?")])
except Exception as exc:
    print("FAILED", type(exc).__name__)
    sys.exit(3)
print("ANSWERED")
"""


def test_a_retrying_framework_is_counted_in_the_summary(
    tmp_path: Path, capfd: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``.with_retry()`` retries a 409 whatever ``x-should-retry`` says: regista cannot stop
    it, but its summary line counts every request it rejected."""
    pkg_version("langchain-openai")
    agent = tmp_path / "agent.py"
    agent.write_text(RETRYING)
    with FakeOpenAIServer() as fake:
        fake.script({"content": "Sunny."})
        monkeypatch.setenv("OPENAI_BASE_URL", fake.url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-lc")
        cmd = [sys.executable, str(agent)]
        assert main(["record", "--trace-dir", str(tmp_path / "t"), "--", *cmd, "A bot."]) == 0
    (path,) = (tmp_path / "t").glob("*.jsonl")
    capfd.readouterr()
    monkeypatch.delenv("OPENAI_BASE_URL")
    assert main(["replay", str(path), "--", *cmd, "A poet."]) == 3
    out = capfd.readouterr().out
    assert "FAILED ConflictError" in out
    assert "replayed: 0 of 1 model calls served, 0 matched, 3 requests rejected" in out
