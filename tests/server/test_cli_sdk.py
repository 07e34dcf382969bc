"""`regista record|replay|fork|rewind … -- CMD` with a plain SDK agent program."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fakes.anthropic_server import FakeAnthropicServer
from fakes.openai_server import FakeOpenAIServer

from regista.cli.main import main
from regista.trace.reader import Trace

HERE = Path(__file__).parent
AGENT = [sys.executable, str(HERE / "agent_main.py")]


def _weather_answer(body: dict[str, Any]) -> dict[str, Any]:
    """Asks for the tool first; then says what the tool result said."""
    last = body["messages"][-1]
    if isinstance(last["content"], str):
        return {"content": [{"type": "tool_use", "id": "toolu_1", "name": "get_weather",
                             "input": {"city": "Paris"}}]}  # fmt: skip
    result = last["content"][0]["content"]
    return {"content": [{"type": "text", "text": f"The tool says: {result}"}]}


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHONPATH", str(HERE))
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-cli-secret")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeAnthropicServer]:
    with FakeAnthropicServer() as server:
        server.answer_with(_weather_answer)
        yield server


@pytest.fixture(scope="module")
def recorded(fake: FakeAnthropicServer, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One recording, made once for the module (each program run costs an SDK import)."""
    folder = tmp_path_factory.mktemp("recorded")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PYTHONPATH", str(HERE))
        mp.setenv("ANTHROPIC_API_KEY", "sk-ant-cli-secret")
        mp.setenv("ANTHROPIC_BASE_URL", fake.url)
        before = len(fake.requests)
        code = main(["record", "--trace-dir", str(folder), "--", *AGENT, "anthropic"])
        assert code == 0
        assert len(fake.requests) == before + 2
        # the child's own key goes on (a placeholder is only for a child without one)
        assert _key_sent(fake.requests[-1].headers) == "sk-ant-cli-secret"
    (path,) = folder.glob("*.jsonl")
    assert "sk-ant-cli-secret" not in path.read_text()
    return path


def test_record_prints_the_trace_and_the_childs_output(recorded: Path, capfd: Any) -> None:
    trace = Trace.load(recorded)
    assert [s.kind for s in trace.steps()] == ["model", "tool", "model"]
    assert trace.end is not None and trace.end.output == "The tool says: sunny in Paris"


def test_replay_then_a_divergence(
    recorded: Path, fake: FakeAnthropicServer, env: None, capfd: Any,
    monkeypatch: pytest.MonkeyPatch
) -> None:  # fmt: skip
    before = len(fake.requests)
    code = main(["replay", str(recorded), "--", *AGENT, "anthropic"])
    out = capfd.readouterr().out
    assert code == 0
    assert "The tool says: sunny in Paris" in out
    assert "replayed: 2 of 2 model calls served, 2 matched" in out
    monkeypatch.setenv("AGENT_SYSTEM", "You are a poet.")
    code = main(["replay", str(recorded), "--", *AGENT, "anthropic"])
    captured = capfd.readouterr()
    assert code == 3  # the child's own exit code
    assert "first divergence at step 0: system: recorded 'You are a weather bot.'" in (captured.out)
    assert len(fake.requests) == before  # nothing reached the provider


def test_fork_with_an_edited_tool_result_goes_live_after_it(
    recorded: Path, fake: FakeAnthropicServer, tmp_path: Path, env: None, capfd: Any,
    monkeypatch: pytest.MonkeyPatch
) -> None:  # fmt: skip
    path = recorded
    before = len(fake.requests)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
    forks = tmp_path / "forks"
    code = main(
        ["fork", str(path), "--at", "1", "--tool-result", "rainy in Paris",
         "--trace-dir", str(forks), "--", *AGENT, "anthropic"]
    )  # fmt: skip
    out = capfd.readouterr().out
    assert code == 0, out
    # the agent ran its real tool ("sunny"), but the model saw the edit
    assert "The tool says: rainy in Paris" in out
    assert len(fake.requests) == before + 1  # only the live call reached the provider
    sent = fake.requests[-1]
    assert sent.body["messages"][-1]["content"][0]["content"] == "rainy in Paris"
    assert sent.headers.get("authorization", "").endswith("sk-ant-cli-secret") or (
        sent.headers.get("x-api-key") == "sk-ant-cli-secret"
    )
    (fork_path,) = forks.glob("*.jsonl")
    fork = Trace.load(fork_path)
    assert fork.start.forked_from is not None
    assert fork.start.forked_from["session_id"] == Trace.load(path).session_id
    assert [s.kind for s in fork.steps()] == ["model", "tool", "model"]
    assert "sk-ant-cli-secret" not in fork_path.read_text()
    assert "fork at step 1: end_turn after 3 steps (1 recorded, 1 edited, 1 live)" in out
    assert "parent " in out
    assert f"compare: regista-tui {path} {fork_path}" in out


def test_rewind_goes_live_from_the_step(
    recorded: Path, fake: FakeAnthropicServer, tmp_path: Path, env: None, capfd: Any,
    monkeypatch: pytest.MonkeyPatch
) -> None:  # fmt: skip
    path = recorded
    before = len(fake.requests)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
    code = main(
        ["rewind", str(path), "--at", "2", "--trace-dir", str(tmp_path / "r"),
         "--", *AGENT, "anthropic"]
    )  # fmt: skip
    assert code == 0
    assert len(fake.requests) == before + 1  # step 0 from the tape, step 2 live
    out = capfd.readouterr().out
    assert "recorded prefix: 1 of 2 model calls served" in out
    assert "rewind to step 2: end_turn after 3 steps (2 recorded, 0 edited, 1 live)" in out
    # from the tool step: its result is the agent's own, live
    code = main(
        ["rewind", str(path), "--at", "1", "--trace-dir", str(tmp_path / "r1"),
         "--", *AGENT, "anthropic"]
    )  # fmt: skip
    assert code == 0
    assert "rewind to step 1: end_turn after 3 steps (1 recorded, 0 edited, 2 live)" in (
        capfd.readouterr().out
    )
    (fork_path,) = (tmp_path / "r1").glob("*.jsonl")
    assert [s.source for s in Trace.load(fork_path).steps()] == ["recorded", "live", "live"]


def test_openai_agent_record_and_replay(
    tmp_path: Path, env: None, capfd: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    with FakeOpenAIServer() as fake:
        fake.script(
            {
                "tool_calls": [
                    {"id": "call_9", "name": "get_weather", "arguments": '{"city":"Oslo"}'}
                ]
            },
            {"content": "Sunny in Oslo."},
        )
        monkeypatch.setenv("OPENAI_BASE_URL", fake.url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-cli")
        code = main(["record", "--trace-dir", str(tmp_path), "--", *AGENT, "openai"])
        assert code == 0
        (path,) = tmp_path.glob("*.jsonl")
        recorded_out = capfd.readouterr().out
        assert f"trace: {path}" in recorded_out and "Sunny in Oslo." in recorded_out
        assert "sk-openai-cli" not in path.read_text()
        monkeypatch.delenv("OPENAI_BASE_URL")
        monkeypatch.delenv("OPENAI_API_KEY")
        capfd.readouterr()
        assert main(["replay", str(path), "--", *AGENT, "openai"]) == 0
        out = capfd.readouterr().out
        assert "Sunny in Oslo." in out and "2 matched" in out
        assert len(fake.requests) == 2


def test_bad_commands_are_one_line_errors(tmp_path: Path, capfd: Any) -> None:
    assert main(["record", "--trace-dir", str(tmp_path)]) == 2
    assert main(["record", "--", "no-such-program-xyz"]) == 2
    err = capfd.readouterr().err
    assert "no such program" in err and "Traceback" not in err


def test_a_command_after_dashes_only_where_one_is_run(capfd: Any) -> None:
    with pytest.raises(SystemExit) as info:
        main(["show", "x.jsonl", "--", "python", "agent.py"])
    assert info.value.code == 2
    assert "takes no command after --" in capfd.readouterr().err


def test_fork_and_rewind_without_a_command_say_how_to_run_one(recorded: Path, capfd: Any) -> None:
    """A recorded SDK program has no agent_ref: the one line names `-- CMD`."""
    for argv in (["fork", str(recorded), "--at", "1", "--tool-result", "x"],
                 ["rewind", str(recorded), "--at", "1"]):  # fmt: skip
        assert main(argv) == 2
        err = capfd.readouterr().err
        assert err.count("\n") == 1 and "-- CMD" in err


def test_fork_and_rewind_usage_show_the_command(capfd: Any) -> None:
    for cmd in ("fork", "rewind"):
        with pytest.raises(SystemExit):
            main([cmd, "--help"])
        assert "-- CMD [ARGS...]" in capfd.readouterr().out


def test_rewind_to_a_step_the_run_does_not_have_is_one_line(
    recorded: Path, env: None, capfd: Any
) -> None:
    for at in ("3", "-1"):
        assert main(["rewind", str(recorded), "--at", at, "--", *AGENT, "anthropic"]) == 2
        err = capfd.readouterr().err
        assert err.count("\n") == 1 and "the trace has steps 0..2" in err


def test_a_fork_that_ends_at_its_edit_says_one_step(
    recorded: Path, fake: FakeAnthropicServer, tmp_path: Path, env: None, capfd: Any
) -> None:
    before = len(fake.requests)
    argv = ["fork", str(recorded), "--at", "0", "--answer", "Done.", "--trace-dir", str(tmp_path)]
    assert main([*argv, "--", *AGENT, "anthropic"]) == 0
    out = capfd.readouterr().out
    assert "Done." in out and "fork at step 0: end_turn after 1 step (0 recorded, 1 edited" in out
    assert len(fake.requests) == before


def test_a_command_killed_by_a_signal_exits_as_a_shell_says(tmp_path: Path, capfd: Any) -> None:
    """128 + the signal's number, as `sh` reports it (not a negative code wrapped to 241)."""
    suicide = "import os, signal; os.kill(os.getpid(), signal.SIGTERM)"
    assert (
        main(["record", "--trace-dir", str(tmp_path), "--", sys.executable, "-c", suicide]) == 143
    )


def _key_sent(headers: dict[str, str]) -> str | None:
    """The key an upstream got (as ``x-api-key``, or as a bearer token)."""
    bearer = headers.get("authorization", "").removeprefix("Bearer ")
    return headers.get("x-api-key") or bearer or None


@pytest.fixture
def no_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHONPATH", str(HERE))
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)


def test_record_against_a_local_upstream_needs_no_key(
    fake: FakeAnthropicServer, tmp_path: Path, no_keys: None, capfd: Any,
    monkeypatch: pytest.MonkeyPatch
) -> None:  # fmt: skip
    """A fake or a model server on this machine takes any key: the SDK gets a placeholder,
    which, like any key, is forwarded and never written."""
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url.replace("127.0.0.1", "localhost"))
    before = len(fake.requests)
    assert main(["record", "--trace-dir", str(tmp_path), "--", *AGENT, "anthropic"]) == 0
    assert "The tool says: sunny in Paris" in capfd.readouterr().out
    assert len(fake.requests) == before + 2
    assert _key_sent(fake.requests[-1].headers) == "regista-replay-needs-no-key"
    (path,) = tmp_path.glob("*.jsonl")
    assert "needs-no-key" not in path.read_text()
    # a fork that goes live there needs none either
    forks = tmp_path / "forks"
    argv = ["rewind", str(path), "--at", "2", "--trace-dir", str(forks)]
    assert main([*argv, "--", *AGENT, "anthropic"]) == 0
    (fork,) = forks.glob("*.jsonl")
    assert len(fake.requests) == before + 3
    assert "needs-no-key" not in fork.read_text()


def test_record_with_openai_against_a_local_upstream_needs_no_key(
    tmp_path: Path, no_keys: None, capfd: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    with FakeOpenAIServer() as fake:
        fake.script({"content": "Sunny in Oslo."})
        monkeypatch.setenv("OPENAI_BASE_URL", fake.url)
        assert main(["record", "--trace-dir", str(tmp_path), "--", *AGENT, "openai"]) == 0
        assert "Sunny in Oslo." in capfd.readouterr().out
        assert fake.requests[-1].headers.get("authorization") == (
            "Bearer regista-replay-needs-no-key"
        )
    (path,) = tmp_path.glob("*.jsonl")
    assert "needs-no-key" not in path.read_text()


@pytest.mark.parametrize(
    ("url", "local"),
    [
        ("http://127.0.0.1:8080", True),
        ("http://localhost:11434/v1", True),
        ("http://[::1]:9000", True),
        ("http://127.5.0.1", True),
        ("https://api.anthropic.com", False),
        ("http://10.0.0.5:8080", False),
        ("http://localhost.example.com", False),
        ("", False),
    ],
)
def test_which_upstreams_are_local(url: str, local: bool) -> None:
    from regista.cli.sdk_child import is_local

    assert is_local(url) is local
