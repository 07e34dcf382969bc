"""The plain ``anthropic`` and ``openai`` (chat completions) SDKs, streaming and not.

A small tool-using agent (``plain_sdk_agent.py``, the SDK's own defaults: retries on) runs
under ``regista record|replay|fork … -- CMD`` against a fake provider on 127.0.0.1. One
recording per client, shared by that client's tests; each fills its row of the matrix.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from fakes.anthropic_server import FakeAnthropicServer
from fakes.openai_server import FakeOpenAIServer

from conformance.matrix import Row, pkg_version, row
from regista.cli.main import main
from regista.trace.reader import Trace

AGENT = [sys.executable, str(Path(__file__).with_name("plain_sdk_agent.py"))]
TASK = "Weather in Paris?"
ANSWER = "The tool says: sunny in Paris"
#: Nothing listens here: the provider is down.
DOWN = "http://127.0.0.1:9"


@dataclass(frozen=True)
class Client:
    name: str  # the row
    provider: str  # anthropic | openai
    stream: bool

    @property
    def argv(self) -> list[str]:
        return [*AGENT, self.provider, *(["stream"] if self.stream else [])]

    def row(self) -> Row:
        return row(self.name, pkg_version(self.provider))


CLIENTS = [
    Client("anthropic", "anthropic", False),
    Client("anthropic (stream)", "anthropic", True),
    Client("openai chat", "openai", False),
    Client("openai chat (stream)", "openai", True),
]


def _anthropic_answer(body: dict[str, Any]) -> dict[str, Any]:
    last = body["messages"][-1]["content"]
    if isinstance(last, str):
        use = {"type": "tool_use", "id": "toolu_1", "name": "get_weather",
               "input": {"city": "Paris"}}  # fmt: skip
        return {"content": [use]}
    return {"content": [{"type": "text", "text": f"The tool says: {last[0]['content']}"}]}


def _openai_answer(body: dict[str, Any]) -> dict[str, Any]:
    last = body["messages"][-1]
    if last["role"] != "tool":
        args = json.dumps({"city": "Paris"})
        return {"tool_calls": [{"id": "call_1", "name": "get_weather", "arguments": args}]}
    return {"content": f"The tool says: {last['content']}"}


@pytest.fixture(scope="module")
def fakes() -> Iterator[dict[str, Any]]:
    with FakeAnthropicServer() as a, FakeOpenAIServer() as o:
        a.answer_with(_anthropic_answer)
        o.answer_with(_openai_answer)
        yield {"anthropic": a, "openai": o}


def _env(mp: pytest.MonkeyPatch, fakes: dict[str, Any] | None) -> None:
    """The child's environment: keys, and the fakes as upstreams (``None``: provider down)."""
    mp.setenv("ANTHROPIC_API_KEY", "sk-ant-conformance")
    mp.setenv("OPENAI_API_KEY", "sk-openai-conformance")
    mp.setenv("ANTHROPIC_BASE_URL", fakes["anthropic"].url if fakes else DOWN)
    mp.setenv("OPENAI_BASE_URL", fakes["openai"].url if fakes else DOWN + "/v1")
    mp.delenv("AGENT_SYSTEM", raising=False)


@dataclass
class Recorded:
    client: Client
    paths: list[Path]

    @property
    def path(self) -> Path:
        return self.paths[0]


def _id(client: Client) -> str:
    """``openai-chat-stream`` for ``openai chat (stream)``: an id ``-k`` can take."""
    return client.name.replace(" (stream)", "-stream").replace(" ", "-")


@pytest.fixture(scope="module", params=CLIENTS, ids=_id)
def recorded(
    request: pytest.FixtureRequest, fakes: dict[str, Any], tmp_path_factory: pytest.TempPathFactory
) -> Recorded:
    """One recording per client (model, tool, model)."""
    client: Client = request.param
    client.row()  # skips when the SDK is not installed
    folder = tmp_path_factory.mktemp("recorded")
    with pytest.MonkeyPatch.context() as mp:
        _env(mp, fakes)
        code = main(["record", "--trace-dir", str(folder), "--", *client.argv])
    assert code == 0
    return Recorded(client, sorted(folder.glob("*.jsonl")))


def _run(argv: list[str], capfd: Any) -> tuple[int, str, str]:
    capfd.readouterr()
    code = main(argv)
    captured = capfd.readouterr()
    return code, captured.out, captured.err


def _sent(err: str) -> int:
    found = re.findall(r"^requests: (\d+)$", err, re.M)
    assert found, err
    return int(found[-1])


def test_record_gives_one_run_that_verifies_and_shows_the_task(
    recorded: Recorded, capfd: Any
) -> None:
    r = recorded.client.row()
    r.record_ok = False
    assert len(recorded.paths) == 1, f"{len(recorded.paths)} runs for one conversation"
    trace = Trace.load(recorded.path)
    assert [s.kind for s in trace.steps()] == ["model", "tool", "model"]
    assert trace.start.task == TASK
    assert trace.end is not None and trace.end.output == ANSWER
    code, out, _ = _run(["verify", str(recorded.path)], capfd)
    assert code == 0 and ": OK: " in out
    code, out, _ = _run(["show", str(recorded.path)], capfd)
    assert code == 0 and TASK in out
    r.record_ok = True


def test_strict_replay_with_the_provider_down_serves_every_call(
    recorded: Recorded, fakes: dict[str, Any], capfd: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    r = recorded.client.row()
    _env(monkeypatch, None)
    before = len(fakes[recorded.client.provider].requests)
    code, out, err = _run(["replay", str(recorded.path), "--", *recorded.client.argv], capfd)
    found = re.search(r"replayed: (\d+) of (\d+) model calls served, (\d+) matched", out)
    assert found, out
    r.strict_served, r.strict_total = int(found[1]), int(found[2])
    assert code == 0, err
    assert ANSWER in out  # the agent exits as it did
    assert (r.strict_served, r.strict_total, int(found[3])) == (2, 2, 2)
    assert _sent(err) == 2
    assert len(fakes[recorded.client.provider].requests) == before


def test_a_changed_prompt_gets_a_409_the_sdk_does_not_retry(
    recorded: Recorded, capfd: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    r = recorded.client.row()
    _env(monkeypatch, None)
    monkeypatch.setenv("AGENT_SYSTEM", "You are a poet.")
    code, out, err = _run(["replay", str(recorded.path), "--", *recorded.client.argv], capfd)
    r.conflict_requests = _sent(err)
    r.conflict_surfaced = code == 3 and "conflict:" in err and "diverged at step 0" in err
    r.notes.append(f"409 replay summary: {out.strip().splitlines()[-1]}")
    assert code == 3, err  # the agent's own exit on a ConflictError
    assert r.conflict_surfaced, err
    assert r.conflict_requests == 1  # x-should-retry: false, so the SDK's retries stay off
    assert "1 request rejected" in out  # the summary counts what the client sent


def test_loose_replay_serves_in_order(
    recorded: Recorded, capfd: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    r = recorded.client.row()
    r.loose_ok = False
    _env(monkeypatch, None)
    monkeypatch.setenv("AGENT_SYSTEM", "You are a poet.")
    argv = ["replay", str(recorded.path), "--mode", "loose", "--", *recorded.client.argv]
    code, out, err = _run(argv, capfd)
    assert code == 0, err
    assert ANSWER in out
    assert "replayed: 2 of 2 model calls served, 0 matched" in out
    r.loose_ok = True


def test_a_fork_with_an_edited_tool_result_goes_live_after_it(
    recorded: Recorded, fakes: dict[str, Any], tmp_path: Path, capfd: Any,
    monkeypatch: pytest.MonkeyPatch
) -> None:  # fmt: skip
    r = recorded.client.row()
    r.fork_ok = False
    fake = fakes[recorded.client.provider]
    _env(monkeypatch, fakes)
    before = len(fake.requests)
    argv = ["fork", str(recorded.path), "--at", "1", "--tool-result", "rainy in Paris",
            "--trace-dir", str(tmp_path), "--", *recorded.client.argv]  # fmt: skip
    code, out, err = _run(argv, capfd)
    assert code == 0, err
    assert "The tool says: rainy in Paris" in out
    (body,) = [q.body for q in fake.requests[before:]]  # only the call after the edit
    assert "rainy in Paris" in json.dumps(body["messages"])
    (path,) = tmp_path.glob("*.jsonl")
    fork = Trace.load(path)
    assert [s.source for s in fork.steps()] == ["recorded", "edit", "live"]
    assert fork.start.forked_from is not None
    assert fork.start.forked_from["session_id"] == Trace.load(recorded.path).session_id
    code, _, _ = _run(["verify", str(path)], capfd)
    assert code == 0
    r.fork_ok = True
