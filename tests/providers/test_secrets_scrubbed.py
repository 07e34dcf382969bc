"""Secrets: a key cut short in an error, a password in --otlp, a fork's edit text."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from anthropic_support import TOOL_ANSWER, get_weather, provider
from builders import answer, by_turn, simple_agent
from fakes.anthropic_server import FakeAnthropicServer, FakeError

from regista import Agent, ProviderError, ToolResultEdit, fork
from regista.cli.main import main
from regista.providers import ScriptedProvider
from regista.providers.scrub import scrub_secrets

KEY = "sk-ant-api03-Zq8xY3vB7nP2mK9LwR4tH6jF1dC5sA0eUxT"


@pytest.mark.parametrize("cut", [24, 12, len(KEY)])
async def test_a_key_echoed_cut_short_is_scrubbed(
    fake_anthropic: FakeAnthropicServer,
    tmp_path: Path,
    cut: int,
    capsys: pytest.CaptureFixture[str],
) -> None:
    echoed = KEY[:cut]
    fake_anthropic.script(
        TOOL_ANSWER, FakeError(401, message=f"invalid x-api-key: {echoed}… (check it)")
    )
    agent = Agent(
        tools=[get_weather], provider=provider(fake_anthropic, api_key=KEY), trace_dir=tmp_path
    )
    with pytest.raises(ProviderError) as failed:
        await agent.run("Weather in Paris?")
    assert echoed not in str(failed.value) and "***" in str(failed.value)
    (path,) = tmp_path.glob("*.jsonl")
    assert echoed not in path.read_text()
    assert main(["export", str(path), "--console", "--include-content"]) == 0
    out, err = capsys.readouterr()
    assert echoed not in out + err


def test_scrubbing_leaves_ordinary_text_and_short_runs_alone() -> None:
    assert scrub_secrets("hello world: sk-ant-", [KEY]) == "hello world: sk-ant-"
    assert scrub_secrets(f"a {KEY[5:20]} b", [KEY]) == "a *** b"
    assert scrub_secrets(f"{KEY}{KEY[:11]}", [KEY]) == "***"


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_a_password_in_the_otlp_url_is_not_printed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = simple_agent(tmp_path).run_sync("Weather?")
    url = f"http://alice:hunter2-secret@127.0.0.1:{_closed_port()}/v1/traces"
    assert main(["export", str(run.trace_path), "--otlp", url, "--timeout", "1"]) == 1
    out, err = capsys.readouterr()
    assert "hunter2" not in out + err
    assert "alice:***@127.0.0.1" in err and err.count("\n") == 1
    assert main(["export", str(run.trace_path), "--otlp", "ftp://bob:pw-secret@x"]) == 2
    assert "pw-secret" not in capsys.readouterr().err


async def test_the_default_export_leaves_out_a_forks_edit_text(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    parent = await simple_agent(tmp_path).run("Weather?")
    live = ScriptedProvider(by_turn([answer(text="ok")] * 3))
    forked = await fork(
        parent.trace_path,
        at_step=1,
        edit=ToolResultEdit("CONFIDENTIAL-EDIT-TEXT"),
        agent=simple_agent(tmp_path, provider=live),
        trace_dir=tmp_path / "forks",
    )
    assert main(["export", str(forked.trace_path), "--console"]) == 0
    out = capsys.readouterr().out
    assert "regista.forked_from" in out and "CONFIDENTIAL-EDIT-TEXT" not in out
    assert main(["export", str(forked.trace_path), "--console", "--include-content"]) == 0
    assert "CONFIDENTIAL-EDIT-TEXT" in capsys.readouterr().out
