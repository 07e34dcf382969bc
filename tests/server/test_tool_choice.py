"""An OpenAI request's ``tool_choice``, in each form the API takes, records and reads back.

The real ``openai`` SDK sends ``auto``, ``required``, ``none`` and a named function through
the recording proxy; the trace then reads, shows, exports, shares, answers MCP and replays
(``POST /v1/replays`` and ``regista replay -- CMD``).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openai
import pytest
from fakes.openai_server import FakeOpenAIServer
from files import found
from sdk_agents import TOOLS_OPENAI, new_replay, regista_server

from regista.cli.main import main
from regista.store.mcp_server import RunsTools
from regista.trace.reader import Trace
from regista.wire.shapes import openai_request

NAMED = {"type": "function", "function": {"name": "get_weather"}}
#: Each form, and the Anthropic shape it is normalised to.
FORMS: list[tuple[Any, dict[str, Any]]] = [
    ("auto", {"type": "auto"}),
    ("required", {"type": "any"}),
    ("none", {"type": "none"}),
    (NAMED, {"type": "tool", "name": "get_weather"}),
]


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """One recorded conversation per form of ``tool_choice``."""
    folder = tmp_path_factory.mktemp("tool_choice")
    with FakeOpenAIServer() as fake, regista_server(folder, openai=fake.url) as server:
        fake.answer_with(lambda body: {"content": f"ok {json.dumps(body.get('tool_choice'))}"})
        client = openai.OpenAI(api_key="sk-k", base_url=f"{server.url}/v1/record/openai")
        for i, (choice, _) in enumerate(FORMS):
            client.chat.completions.create(
                model="gpt-4o",
                messages=[{"role": "user", "content": f"conversation {i}"}],
                tools=TOOLS_OPENAI,  # type: ignore[arg-type]
                tool_choice=choice,
            )
        server.record_done()
    yield folder


def _traces(store: Path) -> dict[str, Path]:
    return {Trace.load(p).start.task: p for p in found(store)}


def test_each_form_is_normalised_and_keeps_the_original(store: Path) -> None:
    paths = _traces(store)
    assert len(paths) == len(FORMS)
    for i, (choice, shape) in enumerate(FORMS):
        trace = Trace.load(paths[f"conversation {i}"])
        ((request, _),) = trace.llm_calls()
        assert request.tool_choice == {**shape, "openai": choice}


def test_the_trace_shows_exports_shares_and_answers_mcp(
    store: Path, tmp_path: Path, capsys: Any
) -> None:
    for path in _traces(store).values():
        assert main(["show", str(path)]) == 0
        assert main(["verify", str(path)]) == 0
        assert main(["export", str(path), "--console"]) == 0
        assert main(["share", str(path), "-o", str(tmp_path / "page.html")]) == 0
        tools = RunsTools(store)
        run = Trace.load(path).session_id
        assert tools.run_summary(run)["steps"] == 1
        assert tools.get_step(run, 0)
    capsys.readouterr()


def test_post_replays_serves_it(store: Path) -> None:
    with regista_server(store) as server:
        for i, (choice, _) in enumerate(FORMS):
            path = _traces(store)[f"conversation {i}"]
            rp = new_replay(server, Trace.load(path).session_id)
            client = openai.OpenAI(api_key="k", base_url=rp["openai_base_url"], max_retries=0)
            out = client.chat.completions.create(
                model="gpt-4o",
                messages=[{"role": "user", "content": f"conversation {i}"}],
                tools=TOOLS_OPENAI,  # type: ignore[arg-type]
                tool_choice=choice,
            )
            assert out.choices[0].message.content == f"ok {json.dumps(choice)}"


AGENT = """
import sys, openai
choice = {choice!r}
out = openai.OpenAI(max_retries=0).chat.completions.create(
    model="gpt-4o", messages=[{{"role": "user", "content": "conversation {i}"}}],
    tools={tools!r}, tool_choice=choice)
print("FINAL:", out.choices[0].message.content)
"""


def test_regista_replay_of_a_command_serves_it(
    store: Path, tmp_path: Path, capfd: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    i, (choice, _) = 3, FORMS[3]
    agent = tmp_path / "agent.py"
    agent.write_text(AGENT.format(choice=choice, i=i, tools=TOOLS_OPENAI))
    path = _traces(store)[f"conversation {i}"]
    assert main(["replay", str(path), "--", sys.executable, str(agent)]) == 0
    out = capfd.readouterr().out
    assert f"FINAL: ok {json.dumps(choice)}" in out
    assert "replayed: 1 of 1 model calls served, 1 matched" in out


def test_harness_replay_of_the_recording(store: Path, tmp_path: Path, capsys: Any) -> None:
    path = _traces(store)["conversation 3"]
    assert main(["replay", str(path), "--trace-dir", str(tmp_path)]) == 0


@pytest.mark.parametrize(
    "choice",
    [
        {"type": "allowed_tools", "allowed_tools": {"mode": "auto", "tools": [NAMED]}},
        {"type": "custom", "custom": {"name": "grep"}},
        ["not", "a", "shape"],
        7,
    ],
)
def test_a_shape_regista_does_not_model_is_kept_verbatim_and_marked(choice: Any) -> None:
    request = openai_request(
        {"model": "m", "messages": [{"role": "user", "content": "x"}], "tool_choice": choice}
    )
    assert request.tool_choice == {"type": "openai_tool_choice", "openai": choice}


def test_the_reader_takes_an_older_recording_of_openai_tool_choice(tmp_path: Path) -> None:
    """What earlier versions wrote (``{"openai": "auto"}``, no ``type``) reads back."""
    from regista.trace.recorder import TraceRecorder
    from regista.types import LlmRequest, LlmResponse

    path = tmp_path / "old.jsonl"
    with TraceRecorder.create(path, "01JOLDTOOLCHOICE0000000000") as rec:
        rec.start(task="t", model="gpt-4o", provider="openai")
        req = LlmRequest(
            model="gpt-4o",
            messages=[{"role": "user", "content": "x"}],
            tool_choice={"openai": "auto"},
        )
        rec.model_step(req, LlmResponse(content=[]), provider="openai")
        rec.end("end_turn")
    ((request, _),) = Trace.load(path).llm_calls()
    assert request.tool_choice == {"openai": "auto"}
