"""The OpenAI Responses API through regista: recorded by the proxy, replayed strict and loose
(JSON and SSE), forked, chained by ``previous_response_id``, read back by the trace reader."""

from __future__ import annotations

import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openai
import pytest
from fakes.responses_server import FakeResponsesServer
from responses_agent import responses_agent
from sdk_agents import new_replay, regista_server

from regista.cli.main import main
from regista.client import ReplaySession
from regista.trace.reader import Trace


def weather(body: dict[str, Any]) -> dict[str, Any]:
    """Asks for the tool first; then says what the tool result said (with reasoning)."""
    items = body["input"]
    last = items[-1] if isinstance(items, list) else {}
    if last.get("type") == "function_call_output":
        return {
            "reasoning": "The tool answered.",
            "text": f"The tool says: {last['output']}",
            "usage": {
                "input_tokens": 120,
                "input_tokens_details": {"cached_tokens": 100, "cache_write_tokens": 0},
                "output_tokens": 30,
                "output_tokens_details": {"reasoning_tokens": 12},
                "total_tokens": 150,
            },
        }
    return {
        "tool_calls": [{"id": "call_w1", "name": "get_weather", "arguments": '{"city": "Paris"}'}]
    }


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeResponsesServer]:
    with FakeResponsesServer() as server:
        server.answer_with(weather)
        yield server


_RECORDINGS: dict[tuple[bool, bool], tuple[Path, str, list[Any]]] = {}


def record(
    fake: FakeResponsesServer, tmp: Path, *, stream: bool = False, chain: bool = False
) -> tuple[Path, str, list[Any]]:
    """The store, final text and the answers' bodies of one recording (made once per kind)."""
    key = (stream, chain)
    if key not in _RECORDINGS:
        origin = tmp / f"origin-{stream}-{chain}"
        before = len(fake.requests)
        with regista_server(origin, openai=fake.url) as server:
            client = openai.OpenAI(
                api_key="sk-resp-secret", base_url=f"{server.url}/v1/record/openai", max_retries=0
            )
            seen: list[Any] = []
            orig = client.responses.create

            def spy(**kw: Any) -> Any:
                r = orig(**kw)
                if not kw.get("stream"):
                    seen.append(r.model_dump(mode="json"))
                return r

            client.responses.create = spy  # type: ignore[method-assign]
            out = responses_agent(client, stream=stream, chain=chain)
            server.record_done()
        assert len(fake.requests) == before + 2
        assert fake.requests[before].headers["authorization"] == "Bearer sk-resp-secret"
        _RECORDINGS[key] = (origin, out, seen)
    origin, out, seen = _RECORDINGS[key]
    store = tmp / "store"
    if store.exists():
        shutil.rmtree(store)
    shutil.copytree(origin, store)
    return store, out, seen


def only_trace(store: Path) -> Trace:
    (path,) = store.glob("*.jsonl")
    assert "sk-resp-secret" not in path.read_text()
    return Trace.load(path)


@pytest.mark.parametrize("stream", [False, True])
def test_record_one_run_with_a_tool_step_that_reads_back(
    fake: FakeResponsesServer, tmp_path: Path, stream: bool
) -> None:
    store, out, _ = record(fake, tmp_path, stream=stream)
    assert out == "The tool says: Sunny in Paris, 21 C"
    trace = only_trace(store)
    assert main(["verify", str(trace.path)]) == 0
    assert [s.kind for s in trace.steps()] == ["model", "tool", "model"]
    assert trace.start.task == "Weather in Paris?"
    assert trace.start.instructions == "You are a weather bot."
    assert trace.start.metadata["api"] == "openai-responses"
    last = trace.llm_calls()[-1][1]
    assert last.usage.input_tokens == 20 and last.usage.cache_read_input_tokens == 100
    assert [b["type"] for b in last.content] == ["thinking", "text"]
    assert trace.end is not None and trace.end.stop_reason == "end_turn"


@pytest.mark.parametrize("stream", [False, True])
def test_strict_replay_serves_the_recorded_bodies_with_the_provider_down(
    fake: FakeResponsesServer, tmp_path: Path, stream: bool
) -> None:
    store, recorded, seen = record(fake, tmp_path, stream=stream)
    trace = only_trace(store)
    before = len(fake.requests)
    with regista_server(store) as server:  # no upstream: a closed port
        rp = new_replay(server, trace.session_id)
        client = openai.OpenAI(api_key="k", base_url=rp["openai_base_url"], max_retries=0)
        answers: list[Any] = []
        orig = client.responses.create

        def spy(**kw: Any) -> Any:
            r = orig(**kw)
            if not kw.get("stream"):
                answers.append(r.model_dump(mode="json"))
            return r

        client.responses.create = spy  # type: ignore[method-assign]
        assert responses_agent(client, stream=stream) == recorded
        status = server.http.get(f"/v1/replays/{rp['id']}").json()
    assert status["served"] == 2 and status["matched"] == 2
    assert len(fake.requests) == before
    if not stream:
        assert answers == seen  # ids, output items, usage (cached, reasoning): as recorded


def test_a_changed_prompt_gets_a_409_in_openai_shape_not_retried(
    fake: FakeResponsesServer, tmp_path: Path
) -> None:
    store, _, _ = record(fake, tmp_path)
    trace = only_trace(store)
    with regista_server(store) as server:
        rp = new_replay(server, trace.session_id)
        client = openai.OpenAI(api_key="k", base_url=rp["openai_base_url"])  # retries on
        with pytest.raises(openai.ConflictError) as err:
            responses_agent(client, task="Weather in Rome?")
        status = server.http.get(f"/v1/replays/{rp['id']}").json()
    body = err.value.body
    assert isinstance(body, dict) and body["type"] == "replay_divergence"
    assert "diverged at step 0" in body["message"]
    assert status["requests"] == 1  # x-should-retry: false


def test_loose_replay_serves_in_order(fake: FakeResponsesServer, tmp_path: Path) -> None:
    store, recorded, _ = record(fake, tmp_path, stream=True)
    trace = only_trace(store)
    with regista_server(store) as server:
        rp = new_replay(server, trace.session_id, mode="loose")
        client = openai.OpenAI(api_key="k", base_url=rp["openai_base_url"], max_retries=0)
        assert responses_agent(client, task="Weather in Rome?", stream=True) == recorded
        status = server.http.get(f"/v1/replays/{rp['id']}").json()
    assert status["served"] == 2 and status["matched"] == 0


@pytest.mark.parametrize("stream", [False, True])
def test_fork_substitutes_the_edited_tool_result_and_goes_live(
    fake: FakeResponsesServer, tmp_path: Path, stream: bool
) -> None:
    store, _, _ = record(fake, tmp_path, stream=stream)
    trace = only_trace(store)
    before = len(fake.requests)
    with regista_server(store, openai=fake.url) as server:
        rp = new_replay(
            server,
            trace.session_id,
            edits=[{"step": 1, "tool_result": "Snowing in Paris"}],
            live="proxy",
        )
        client = openai.OpenAI(api_key="k", base_url=rp["openai_base_url"], max_retries=0)
        out = responses_agent(client, stream=stream)
        server.http.delete(f"/v1/replays/{rp['id']}")
    assert out == "The tool says: Snowing in Paris"
    assert len(fake.requests) == before + 1
    sent = fake.requests[-1].body["input"][-1]
    assert sent == {
        "type": "function_call_output",
        "call_id": "call_w1",
        "output": "Snowing in Paris",
    }
    forks = [p for p in store.glob("*.jsonl") if p.stem != trace.session_id]
    (fork,) = forks
    forked = Trace.load(fork)
    assert [s.kind for s in forked.steps()] == ["model", "tool", "model"]
    assert forked.llm_calls()[-1][1].text == "The tool says: Snowing in Paris"


def test_previous_response_id_chains_within_a_recording_and_its_replay(
    fake: FakeResponsesServer, tmp_path: Path
) -> None:
    store, recorded, _ = record(fake, tmp_path, chain=True)
    trace = only_trace(store)  # one run: the chained call continues the conversation
    assert [s.kind for s in trace.steps()] == ["model", "tool", "model"]
    second = trace.llm_calls()[-1][0]
    assert [m["role"] for m in second.messages] == ["user", "assistant", "user"]
    with regista_server(store) as server:
        rp = new_replay(server, trace.session_id)
        client = openai.OpenAI(api_key="k", base_url=rp["openai_base_url"], max_retries=0)
        assert responses_agent(client, chain=True) == recorded
        with pytest.raises(openai.BadRequestError, match="not a response of this replay"):
            client.responses.create(model="m", input="more", previous_response_id="resp_unknown")


def test_other_endpoints_of_a_replay_say_what_is_served(
    fake: FakeResponsesServer, tmp_path: Path
) -> None:
    store, _, _ = record(fake, tmp_path)
    trace = only_trace(store)
    with regista_server(store) as server:
        rp = new_replay(server, trace.session_id)
        client = openai.OpenAI(api_key="k", base_url=rp["openai_base_url"], max_retries=0)
        with pytest.raises(openai.BadRequestError, match="POST /v1/responses"):
            client.responses.retrieve("resp_1")


def test_export_then_import_back_replays_through_the_responses_api(
    fake: FakeResponsesServer, tmp_path: Path, capsys: Any
) -> None:
    store, recorded, _ = record(fake, tmp_path)
    trace = only_trace(store)
    back = tmp_path / "back"
    with regista_server(back) as server:  # its OTLP receiver writes what it gets
        assert main(["export", str(trace.path), "--include-content",
                     "--otlp", f"{server.url}/v1/traces"]) == 0  # fmt: skip
        (path,) = back.glob("*.jsonl")
        assert main(["verify", str(path)]) == 0
        imported = Trace.load(path)
        assert [s.kind for s in imported.steps()] == ["model", "tool", "model"]
        assert imported.start.task == "Weather in Paris?"
        rp = new_replay(server, imported.session_id)  # loose: an imported run
        client = openai.OpenAI(api_key="k", base_url=rp["openai_base_url"], max_retries=0)
        assert responses_agent(client) == recorded
        rp = new_replay(server, imported.session_id)
        client = openai.OpenAI(api_key="k", base_url=rp["openai_base_url"], max_retries=0)
        assert responses_agent(client, stream=True) == recorded  # a stream built from it


def test_cli_record_replay_and_fork_a_responses_program(
    fake: FakeResponsesServer, tmp_path: Path, capfd: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    agent = [sys.executable, str(Path(__file__).parent / "responses_agent.py"), "stream"]
    monkeypatch.setenv("OPENAI_BASE_URL", fake.url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-resp-cli-secret")
    assert main(["record", "--trace-dir", str(tmp_path), "--", *agent]) == 0
    (path,) = tmp_path.glob("*.jsonl")
    assert "sk-resp-cli-secret" not in path.read_text()
    assert "FINAL: The tool says: Sunny in Paris, 21 C" in capfd.readouterr().out
    before = len(fake.requests)
    assert main(["replay", str(path), "--", *agent]) == 0
    out = capfd.readouterr().out
    assert "FINAL: The tool says: Sunny in Paris" in out and "2 matched" in out
    assert len(fake.requests) == before
    forks = tmp_path / "forks"
    code = main(["fork", str(path), "--at", "1", "--tool-result", "Hail in Paris",
                 "--trace-dir", str(forks), "--", *agent])  # fmt: skip
    out = capfd.readouterr().out
    assert code == 0, out
    assert "FINAL: The tool says: Hail in Paris" in out
    assert len(fake.requests) == before + 1
    (fork_path,) = forks.glob("*.jsonl")
    assert [s.kind for s in Trace.load(fork_path).steps()] == ["model", "tool", "model"]
    # a rewind with another model: the Responses call from step 2 asks for it
    code = main(["rewind", str(path), "--at", "2", "--model", "gpt-other",
                 "--trace-dir", str(tmp_path / "other"), "--", *agent])  # fmt: skip
    assert code == 0, capfd.readouterr().out
    assert fake.requests[-1].body["model"] == "gpt-other"
    assert len(fake.requests) == before + 2
    (other,) = (tmp_path / "other").glob("*.jsonl")
    asked = [s.request_event.model for s in Trace.load(other).steps() if s.kind == "model"]  # type: ignore[union-attr]
    assert asked[-1] == "gpt-other" and asked[0] != "gpt-other"


@pytest.mark.parametrize("stream", [False, True])
def test_replay_session_wraps_responses_and_writes_the_fork(
    fake: FakeResponsesServer, tmp_path: Path, stream: bool
) -> None:
    store, _, _ = record(fake, tmp_path, stream=stream)
    trace = only_trace(store)
    before = len(fake.requests)
    with regista_server(store) as server:  # "signal": live calls go through the real client
        real = openai.OpenAI(api_key="k", base_url=fake.url, max_retries=0)
        with ReplaySession(
            server.url,
            trace.session_id,
            edits=[{"step": 1, "tool_result": "Fog in Paris"}],
            trace_dir=tmp_path / "forks",
        ) as rs:
            assert responses_agent(rs.wrap(real), stream=stream) == "The tool says: Fog in Paris"
    assert len(fake.requests) == before + 1
    assert fake.requests[-1].body["input"][-1]["output"] == "Fog in Paris"
    (path,) = rs.trace_paths
    fork = Trace.load(path)
    assert [e.source for e in fork.events if e.type == "llm.response"] == ["recorded", "live"]
    assert [s.kind for s in fork.steps()] == ["model", "tool", "model"]
    live = fork.llm_calls()[-1][1]
    assert live.text == "The tool says: Fog in Paris"
    assert live.usage.cache_read_input_tokens == 100  # the usage the answer carried


def test_a_replayed_stream_adds_up_to_the_recorded_response(
    fake: FakeResponsesServer, tmp_path: Path
) -> None:
    ask: dict[str, Any] = {
        "model": "gpt-5",
        "instructions": "Be brief.",
        "input": [
            {"role": "user", "content": "Weather?"},
            {"type": "function_call", "call_id": "call_0", "name": "get_weather",
             "arguments": "{}"},
            {"type": "function_call_output", "call_id": "call_0", "output": "hot"},
        ],
    }  # fmt: skip
    finals = []
    with regista_server(tmp_path, openai=fake.url) as server:
        client = openai.OpenAI(
            api_key="k", base_url=f"{server.url}/v1/record/openai", max_retries=0
        )
        with client.responses.stream(**ask) as events:
            finals.append(events.get_final_response())
        server.record_done()
    (path,) = tmp_path.glob("*.jsonl")
    with regista_server(tmp_path) as server:
        rp = new_replay(server, path.stem)
        client = openai.OpenAI(api_key="k", base_url=rp["openai_base_url"], max_retries=0)
        with client.responses.stream(**ask) as events:
            kinds = [e.type for e in events]
            finals.append(events.get_final_response())
    recorded, replayed = (f.model_dump(mode="json") for f in finals)
    assert replayed == recorded
    assert finals[1].output_text == "The tool says: hot"
    assert finals[1].usage is not None and finals[1].usage.input_tokens_details.cached_tokens == 100
    assert finals[1].usage.output_tokens_details.reasoning_tokens == 12
    assert kinds[:2] == ["response.created", "response.in_progress"]
    assert "response.reasoning_summary_text.delta" in kinds
    assert kinds[-1] == "response.completed"


def test_a_fork_going_live_sends_a_chained_call_whole(
    fake: FakeResponsesServer, tmp_path: Path
) -> None:
    store, _, _ = record(fake, tmp_path, chain=True)
    trace = only_trace(store)
    before = len(fake.requests)
    with regista_server(store, openai=fake.url) as server:
        rp = new_replay(
            server, trace.session_id, edits=[{"step": 1, "tool_result": "Fog"}], live="proxy"
        )
        client = openai.OpenAI(api_key="k", base_url=rp["openai_base_url"], max_retries=0)
        assert responses_agent(client, chain=True) == "The tool says: Fog"
        server.http.delete(f"/v1/replays/{rp['id']}")
    assert len(fake.requests) == before + 1
    # the provider never saw the recorded answer: it gets the conversation, not its id
    sent = fake.requests[-1].body
    assert "previous_response_id" not in sent
    kinds = [i.get("type", "message") for i in sent["input"]]
    assert kinds == ["message", "function_call", "function_call_output"]
    assert sent["input"][1]["call_id"] == "call_w1"
    assert sent["input"][-1] == {"type": "function_call_output", "call_id": "call_w1",
                                 "output": "Fog"}  # fmt: skip
    (fork,) = [p for p in store.glob("*.jsonl") if p.stem != trace.session_id]
    assert [s.kind for s in Trace.load(fork).steps()] == ["model", "tool", "model"]


def test_replay_session_sends_a_chained_live_call_whole(
    fake: FakeResponsesServer, tmp_path: Path
) -> None:
    store, _, _ = record(fake, tmp_path, chain=True)
    trace = only_trace(store)
    with regista_server(store) as server:
        real = openai.OpenAI(api_key="k", base_url=fake.url, max_retries=0)
        with ReplaySession(
            server.url,
            trace.session_id,
            edits=[{"step": 1, "tool_result": "Dust"}],
            trace_dir=tmp_path / "forks",
        ) as rs:
            assert responses_agent(rs.wrap(real), chain=True) == "The tool says: Dust"
    sent = fake.requests[-1].body
    assert "previous_response_id" not in sent
    assert [i.get("type", "message") for i in sent["input"]] == [
        "message", "function_call", "function_call_output"
    ]  # fmt: skip
    assert sent["input"][-1]["output"] == "Dust"
