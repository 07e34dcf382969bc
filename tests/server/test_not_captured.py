"""A model step recorded without its content (spans with content capture off) is not served
as an empty answer: a replay answers 409 naming the step, and the harness replay says so."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anthropic
import orjson
import pytest
from builders import get_weather
from sdk_agents import new_replay, regista_server

from regista import Agent
from regista.cli.main import main
from regista.providers import ScriptedProvider
from regista.trace.reader import Trace

STEP = 2  # model, tool, model: the last answer is the one not captured


@pytest.fixture(scope="module")
def trace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("uncaptured")
    script = [
        {"content": [{"type": "tool_use", "id": "toolu_1", "name": "get_weather",
                      "input": {"city": "Paris"}}], "stop_reason": "tool_use"},
        {"content": [{"type": "text", "text": "Sunny."}], "stop_reason": "end_turn"},
    ]  # fmt: skip
    agent = Agent(
        model="claude-sonnet-4-6",
        instructions="You are a weather bot.",
        tools=[get_weather],
        provider=ScriptedProvider(script),
        trace_dir=folder,
    )
    path = agent.run_sync("Weather in Paris?").trace_path
    lines = path.read_bytes().splitlines()
    for i, raw in enumerate(lines):
        event = orjson.loads(raw)
        if event["type"] == "llm.response" and event["step"] == STEP:
            event["response"]["content"] = []
            event["response"]["content_captured"] = False
            lines[i] = orjson.dumps(event)
    path.write_bytes(b"\n".join(lines) + b"\n")
    Trace.load(path)  # reads back
    return path


AGENT = """
import sys, anthropic
client = anthropic.Anthropic(max_retries=0)
messages = [{"role": "user", "content": "Weather in Paris?"}]
try:
    while True:
        msg = client.messages.create(model="claude-sonnet-4-6", max_tokens=512,
                                     system="You are a weather bot.", messages=messages)
        messages.append({"role": "assistant", "content": [b.model_dump() for b in msg.content]})
        uses = [b for b in msg.content if b.type == "tool_use"]
        if not uses:
            break
        messages.append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": u.id, "content": "sunny in Paris"}
            for u in uses]})
except anthropic.ConflictError as exc:
    print("CONFLICT", exc.body)
    sys.exit(3)
print("FINAL: " + "".join(b.text for b in msg.content if b.type == "text"))
"""


def test_a_replay_of_a_command_names_the_step(
    trace: Path, tmp_path: Path, capfd: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    agent = tmp_path / "agent.py"
    agent.write_text(AGENT)
    code = main(["replay", str(trace), "--mode", "loose", "--", sys.executable, str(agent)])
    out = capfd.readouterr().out
    assert code == 3, out
    assert "FINAL: " not in out
    assert f"step {STEP} cannot be replayed: its answer's content was not recorded" in out
    assert "'type': 'content_not_recorded'" in out
    assert "replayed: 1 of 2 model calls served, 1 matched, 1 request rejected" in out


def test_post_replays_answers_409_naming_the_step(trace: Path) -> None:
    with regista_server(trace.parent) as server:
        rp = new_replay(server, Trace.load(trace).session_id, mode="loose")
        for stream in (False, True):
            client = anthropic.Anthropic(
                api_key="k", base_url=rp["anthropic_base_url"], max_retries=0
            )
            kwargs: dict[str, Any] = dict(
                model="claude-sonnet-4-6",
                max_tokens=64,
                messages=[{"role": "user", "content": "Weather in Paris?"}],
            )
            if not stream:
                client.messages.create(**kwargs)  # step 0, served
            r = server.http.post(
                f"/v1/replays/{rp['id']}/anthropic/v1/messages", json={**kwargs, "stream": stream}
            )
            assert r.status_code == 409
            assert r.headers["x-should-retry"] == "false"
            error = r.json()["error"]
            assert error["type"] == "content_not_recorded"
            assert error["step"] == STEP
            assert f"step {STEP}" in error["message"]
        status = server.http.get(f"/v1/replays/{rp['id']}").json()
        assert status["served"] == 1 and status["rejected"] == 2


def test_the_harness_replay_says_so(trace: Path, tmp_path: Path, capsys: Any) -> None:
    assert main(["replay", str(trace), "--trace-dir", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert f"step {STEP} cannot be replayed: its answer's content was not recorded" in err
    assert "Traceback" not in err


def test_an_answer_edit_serves_the_step(trace: Path) -> None:
    with regista_server(trace.parent) as server:
        rp = new_replay(
            server,
            Trace.load(trace).session_id,
            mode="loose",
            edits=[{"step": STEP, "answer": "Edited."}],
            live="signal",
        )
        client = anthropic.Anthropic(api_key="k", base_url=rp["anthropic_base_url"], max_retries=0)
        messages: list[dict[str, Any]] = [{"role": "user", "content": "Weather in Paris?"}]
        first = client.messages.create(model="m", max_tokens=64, messages=messages)  # type: ignore[arg-type]
        messages += [
            {"role": "assistant", "content": [b.model_dump() for b in first.content]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": "sunny in Paris"}]},
        ]  # fmt: skip
        last = client.messages.create(model="m", max_tokens=64, messages=messages)  # type: ignore[arg-type]
        assert [b.text for b in last.content if b.type == "text"] == ["Edited."]


def test_a_forks_session_end_counts_the_rejected_requests(trace: Path) -> None:
    from fakes.anthropic_server import FakeAnthropicServer

    store = trace.parent / "fork-store"
    store.mkdir(exist_ok=True)
    (store / trace.name).write_bytes(trace.read_bytes())
    with FakeAnthropicServer() as fake, regista_server(store, anthropic=fake.url) as server:
        fake.script({"content": [{"type": "text", "text": "Rainy, then."}]})
        rp = new_replay(
            server,
            Trace.load(trace).session_id,
            edits=[{"step": 1, "tool_result": "rainy in Paris"}],
            live="proxy",
        )
        client = anthropic.Anthropic(api_key="k", base_url=rp["anthropic_base_url"], max_retries=0)
        ask: dict[str, Any] = dict(model="claude-sonnet-4-6", max_tokens=64)
        messages: list[dict[str, Any]] = [{"role": "user", "content": "Weather in Paris?"}]
        with pytest.raises(anthropic.ConflictError):
            client.messages.create(**ask, system="You are a poet.", messages=messages)
        first = client.messages.create(**ask, system="You are a weather bot.", messages=messages)
        said = [b.model_dump(exclude_none=True) for b in first.content]
        messages += [
            {"role": "assistant", "content": said},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": "sunny in Paris"}]},
        ]  # fmt: skip
        client.messages.create(**ask, system="You are a weather bot.", messages=messages)
        assert server.http.delete(f"/v1/replays/{rp['id']}").status_code == 204
    (fork,) = [p for p in store.glob("*.jsonl") if p.name != trace.name]
    end = Trace.load(fork).end
    assert end is not None and end.replay is not None
    assert end.replay["rejected"] == 1


async def test_a_hybrid_replay_goes_live_at_the_step(trace: Path, tmp_path: Path) -> None:
    from regista.replay import replay

    live = ScriptedProvider([{"content": [{"type": "text", "text": "Live answer."}]}])
    result = await replay(trace, "hybrid", fallback=live, trace_dir=tmp_path)
    assert result.output == "Live answer."
    end = Trace.load(result.trace_path).end
    assert end is not None and end.replay is not None and end.replay["diverged_at"] == STEP
