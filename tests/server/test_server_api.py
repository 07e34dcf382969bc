"""The HTTP API around replays: signal forks with regista.client, API forks through the
proxy, tools/next, expiry, runs and diff, and bad input."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import anthropic
import pytest
from fakes.anthropic_server import FakeAnthropicServer
from sdk_agents import (
    anthropic_agent,
    anthropic_agent_async,
    new_replay,
    regista_server,
    weather_answer,
)

from regista.client import ReplaySession
from regista.diff import diff_runs
from regista.server.replays import registry
from regista.trace.reader import Trace


def test_signal_fork_with_the_python_client(recorded: Path, tmp_path: Path) -> None:
    store = recorded.parent
    with FakeAnthropicServer() as fake, regista_server(store) as server:
        fake.answer_with(weather_answer)
        real = anthropic.Anthropic(api_key="k", base_url=fake.url)
        with ReplaySession(
            server.url,
            recorded.stem,
            edits=[{"step": 1, "tool_result": "rainy in Paris"}],
            trace_dir=tmp_path / "forks",
        ) as rs:
            assert anthropic_agent(rs.wrap(real)) == "Tool: rainy in Paris"
        assert len(fake.requests) == 1  # step 0 from the tape, step 2 live
        (fork_path,) = rs.trace_paths
    fork = Trace.load(fork_path)
    assert fork.start.forked_from is not None
    assert fork.start.forked_from["session_id"] == recorded.stem
    assert fork.end is not None and fork.end.stop_reason == "end_turn"
    sources = [e.source for e in fork.events if e.type == "llm.response"]
    assert sources == ["recorded", "live"]
    # the edited tool step is the edit, with the edited result, as the harness writes it
    assert [s.source for s in fork.steps()] == ["recorded", "edit", "live"]
    result = fork.steps()[1].result
    assert result is not None and result.content == "rainy in Paris"
    assert fork.start.forked_from["edit"] == {
        "kind": "tool_result", "content": "rainy in Paris", "is_error": False
    }  # fmt: skip


def test_signal_fork_with_an_async_client(recorded: Path, tmp_path: Path) -> None:
    with FakeAnthropicServer() as fake, regista_server(recorded.parent) as server:
        fake.answer_with(weather_answer)
        real = anthropic.AsyncAnthropic(api_key="k", base_url=fake.url)
        with ReplaySession(server.url, recorded.stem, live_after=0, trace_dir=tmp_path) as rs:
            out = asyncio.run(anthropic_agent_async(rs.wrap(real)))
        assert out == "Tool: sunny in Paris" and len(fake.requests) == 1


def test_api_fork_through_the_proxy_with_an_edited_answer(recorded: Path) -> None:
    store = recorded.parent
    with FakeAnthropicServer() as fake, regista_server(store, anthropic=fake.url) as server:
        fake.answer_with(weather_answer)
        rp = new_replay(
            server,
            recorded.stem,
            edits=[{"step": 2, "answer": "Edited: bring an umbrella."}],
            live="proxy",
        )
        client = anthropic.Anthropic(api_key="k", base_url=rp["anthropic_base_url"])
        assert anthropic_agent(client) == "Edited: bring an umbrella."
        assert fake.requests == []
        forks = [p for p in store.glob("*.jsonl") if p != recorded]
        (fork_path,) = forks
        delete = server.http.delete(f"/v1/replays/{rp['id']}")  # the fork's session ends
        assert delete.status_code == 204
        listed = {r["id"]: r for r in server.http.get("/v1/runs").json()["runs"]}
        assert listed[fork_path.stem]["links"] == {
            "self": f"/v1/runs/{fork_path.stem}",
            "parent": f"/v1/runs/{recorded.stem}",
            "diff_with_parent": f"/v1/diff?a={recorded.stem}&b={fork_path.stem}",
        }
        assert listed[recorded.stem]["links"] == {"self": f"/v1/runs/{recorded.stem}"}
    fork = Trace.load(fork_path)
    assert fork.start.forked_from is not None and fork.start.forked_from["at_step"] == 2
    assert [e.source for e in fork.events if e.type == "llm.response"] == ["recorded", "edit"]


def test_api_fork_through_the_proxy_writes_the_edited_tool_result_as_an_edit(
    recorded: Path,
) -> None:
    """The tool step whose result was edited is the edit (as the harness's fork writes it),
    not a live step, though its result reached the model with a live call."""
    store = recorded.parent
    with FakeAnthropicServer() as fake, regista_server(store, anthropic=fake.url) as server:
        fake.answer_with(weather_answer)
        edits = [{"step": 1, "tool_result": "rainy in Paris"}]
        rp = new_replay(server, recorded.stem, edits=edits, live="proxy")
        client = anthropic.Anthropic(api_key="k", base_url=rp["anthropic_base_url"])
        assert anthropic_agent(client) == "Tool: rainy in Paris"
        (fork_path,) = [p for p in store.glob("*.jsonl") if p != recorded]
        status = server.http.get(f"/v1/replays/{rp['id']}").json()
        assert server.http.delete(f"/v1/replays/{rp['id']}").status_code == 204
    fork = Trace.load(fork_path)
    assert [s.source for s in fork.steps()] == ["recorded", "edit", "live"]
    result = fork.steps()[1].result
    assert result is not None and result.content == "rainy in Paris"
    edit = {"kind": "tool_result", "content": "rainy in Paris", "is_error": False}
    assert fork.start.forked_from is not None and fork.start.forked_from["edit"] == edit
    assert status["forked_from"] == fork.start.forked_from
    assert fork.end is not None and fork.end.replay is not None
    assert (fork.end.replay["recorded"], fork.end.replay["edit"]) == (1, 1)


#: The model a fork asks for in place of the program's own (``"model"``).
OTHER = "claude-opus-4-1"


def test_an_api_fork_through_the_proxy_carries_on_with_another_model(recorded: Path) -> None:
    """``"model"`` in ``POST /v1/replays``, as ``rewind --model NAME -- CMD``: the program
    asks for its own model; the recorded prefix is served as it was, and each live call
    reaches the provider asking for NAME and is written so; ``forked_from.model`` names it."""
    store = recorded.parent
    with FakeAnthropicServer() as fake, regista_server(store, anthropic=fake.url) as server:
        fake.answer_with(weather_answer)
        rp = new_replay(server, recorded.stem, live_after=0, live="proxy", model=OTHER)
        client = anthropic.Anthropic(api_key="k", base_url=rp["anthropic_base_url"])
        assert anthropic_agent(client) == "Tool: sunny in Paris"
        status = server.http.get(f"/v1/replays/{rp['id']}").json()
        assert server.http.delete(f"/v1/replays/{rp['id']}").status_code == 204
        (fork_path,) = [p for p in store.glob("*.jsonl") if p != recorded]
        listed = {r["id"]: r for r in server.http.get("/v1/runs").json()["runs"]}
    assert fake.bodies and {b["model"] for b in fake.bodies} == {OTHER}
    fork = Trace.load(fork_path)
    assert fork.start.forked_from is not None and fork.start.forked_from["model"] == OTHER
    assert status["forked_from"] == fork.start.forked_from
    asked = [(s.source, s.request_event.model) for s in fork.steps() if s.request_event]
    assert asked == [("recorded", "claude-sonnet-4-6"), ("live", OTHER)]
    assert listed[fork_path.stem]["model"] == "claude-sonnet-4-6"  # as the run began


def test_tools_next_expiry_and_delete(recorded: Path) -> None:
    with regista_server(recorded.parent) as server:
        rp = new_replay(server, recorded.stem, edits=[{"step": 1, "tool_result": "snow"}])
        got = server.http.get(f"/v1/replays/{rp['id']}/tools/next?tool_use_id=toolu_1").json()
        assert got["content"] == "snow" and got["source"] == "edit"
        rp2 = new_replay(server, recorded.stem)
        got = server.http.get(f"/v1/replays/{rp2['id']}/tools/next").json()
        assert got == {
            "tool_use_id": "toolu_1",
            "name": "get_weather",
            "step": 1,
            "content": "sunny in Paris",
            "is_error": False,
            "source": "recorded",
        }
        assert server.http.get(f"/v1/replays/{rp2['id']}/tools/next").status_code == 404
        # expiry: an expired replay is gone, for the API and for the SDK
        reg = registry(server.app.state.ctx)
        reg.get(rp2["id"]).expires_at = 0
        assert server.http.get(f"/v1/replays/{rp2['id']}").status_code == 404
        client = anthropic.Anthropic(api_key="k", base_url=rp2["anthropic_base_url"])
        with pytest.raises(anthropic.NotFoundError):
            anthropic_agent(client)
        assert server.http.delete(f"/v1/replays/{rp['id']}").status_code == 204
        assert server.http.delete(f"/v1/replays/{rp['id']}").status_code == 404


def test_creating_a_replay_snapshots_and_changes_nothing_on_disk(recorded: Path) -> None:
    before = {p: p.read_bytes() for p in recorded.parent.iterdir()}
    with regista_server(recorded.parent) as server:
        rp = new_replay(server, recorded.stem)
        with recorded.open("ab") as f:  # a later write to the file
            f.write(b'{"garbage": true}\n')
        client = anthropic.Anthropic(api_key="k", base_url=rp["anthropic_base_url"])
        assert anthropic_agent(client) == "Tool: sunny in Paris"
    after = {p: p.read_bytes() for p in recorded.parent.iterdir()}
    assert set(after) == set(before)


def test_runs_and_diff(recorded: Path) -> None:
    with regista_server(recorded.parent) as server:
        runs = server.http.get("/v1/runs").json()["runs"]
        assert [r["id"] for r in runs] == [recorded.stem]
        assert runs[0]["outcome"] == "end_turn" and runs[0]["steps"] == 3
        assert "path" not in runs[0]
        one = server.http.get(f"/v1/runs/{recorded.stem}").json()
        assert one["task"] == "Weather in Paris?" and len(one["step_kinds"]) == 3
        assert server.http.get("/v1/runs/..%2F..%2Fetc%2Fpasswd").status_code == 404
        d = server.http.get(f"/v1/diff?a={recorded.stem}&b={recorded.stem}").json()
        # `regista diff --json`'s JSON, with the runs named inside the store (where the
        # store lives is the server's business)
        assert d["a"]["path"] == d["b"]["path"] == recorded.name
        expected = __import__("json").loads(diff_runs(recorded, recorded).to_json())
        expected["a"]["path"] = expected["b"]["path"] = recorded.name
        assert d == expected
        assert server.http.get("/v1/diff?a=x").status_code == 400


def test_a_renamed_trace_is_found_by_the_id_it_is_listed_under(
    recorded: Path, tmp_path: Path
) -> None:
    """Every link ``/v1/runs`` hands out resolves, whatever the trace's file is called; a
    trace outside the store is not found through a symlink, nor a path by ``..``."""
    store, run_id = recorded.parent, recorded.stem
    renamed = recorded.rename(store / "renamed.jsonl")
    outside = tmp_path / "outside"
    outside.mkdir()
    secret = outside / "secret.jsonl"
    text = renamed.read_text()
    secret.write_text(text.replace(run_id, "secret-run"))
    (store / "link.jsonl").symlink_to(secret)
    with regista_server(store) as server:
        runs = server.http.get("/v1/runs").json()["runs"]
        assert [r["id"] for r in runs] == [run_id]
        one = server.http.get(runs[0]["links"]["self"])
        assert one.status_code == 200, one.text
        assert one.json()["session_id"] == run_id and len(one.json()["step_kinds"]) == 3
        d = server.http.get(f"/v1/diff?a={run_id}&b={run_id}").json()
        assert d["a"]["path"] == d["b"]["path"] == "renamed.jsonl"
        rp = new_replay(server, run_id)
        client = anthropic.Anthropic(api_key="k", base_url=rp["anthropic_base_url"])
        assert anthropic_agent(client) == "Tool: sunny in Paris"
        for bad in ("secret-run", "link", "..%2Foutside%2Fsecret", "..%2F..%2Fetc%2Fpasswd"):
            assert server.http.get(f"/v1/runs/{bad}").status_code == 404, bad
            r = server.http.post("/v1/replays", json={"run": bad.replace("%2F", "/")})
            assert r.status_code == 404, (bad, r.text)


BAD = [
    (b"{nope", 400),
    (b"[]", 400),
    (b'{"run": 3}', 400),
    (b'{"run": "nope"}', 404),
    (b'{"run": "../../etc/passwd"}', 404),
    (b'{"run": "RUN", "mode": "chaos"}', 400),
    (b'{"run": "RUN", "edits": [{"step": 0, "tool_result": "x"}]}', 400),
    (b'{"run": "RUN", "edits": [{"step": 99, "answer": "x"}]}', 400),
    (b'{"run": "RUN", "edits": [{"step": 1}]}', 400),
    (b'{"run": "RUN", "live": "maybe"}', 400),
    (b'{"run": "RUN", "live_after": -2}', 400),
    (b'{"run": "RUN", "live_afer": 1}', 400),  # a misspelt key is not silently ignored
    (b'{"run": "RUN", "edits": [{"step": 1, "tool_result": "x", "is_eror": true}]}', 400),
    # a tool result is text or content blocks, as the harness's fork takes it
    (b'{"run": "RUN", "edits": [{"step": 1, "tool_result": [1]}], "live": "proxy"}', 400),
    (b'{"run": "RUN", "edits": [{"step": 1, "tool_result": [{"text": "x"}]}]}', 400),
    # another model: a name, for a fork whose live calls the server sends
    (b'{"run": "RUN", "live_after": 0, "live": "proxy", "model": ""}', 400),
    (b'{"run": "RUN", "live_after": 0, "live": "proxy", "model": "  "}', 400),
    (b'{"run": "RUN", "live_after": 0, "live": "proxy", "model": 3}', 400),
    (b'{"run": "RUN", "live_after": 0, "live": "proxy", "model": null}', 400),
    (b'{"run": "RUN", "live_after": 0, "live": "proxy", "model": ["m"]}', 400),
    (b'{"run": "RUN", "live_after": 0, "live": "proxy", "model": "a\\nb"}', 400),
    (b'{"run": "RUN", "live": "proxy", "model": "claude-opus-4-1"}', 400),  # never goes live
    (b'{"run": "RUN", "live_after": 0, "model": "claude-opus-4-1"}', 400),  # the client's call
    (b'{"run": "RUN", "live_after": 0, "live": "signal", "model": "claude-opus-4-1"}', 400),
]


def test_bad_replay_requests(recorded: Path) -> None:
    with regista_server(recorded.parent) as server:
        for body, status in BAD:
            content = body.replace(b"RUN", recorded.stem.encode())
            r = server.http.post("/v1/replays", content=content)
            assert r.status_code == status, (body, r.text)
            assert r.json()["error"]["message"] and "Traceback" not in r.text
        assert server.http.get("/v1/replays/rp_unknown").status_code == 404


def test_an_edited_tool_result_can_be_an_error(recorded: Path) -> None:
    from regista.wire.sessions import substitute_tool_results

    with regista_server(recorded.parent) as server:
        edit = {"step": 1, "tool_result": "no such city", "is_error": True}
        rp = new_replay(server, recorded.stem, edits=[edit])
        got = server.http.get(f"/v1/replays/{rp['id']}/tools/next?tool_use_id=toolu_1").json()
        assert got["content"] == "no such city" and got["is_error"] is True
    body: dict[str, Any] = {
        "messages": [
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": "sunny"},
                {"type": "tool_result", "tool_use_id": "toolu_2", "content": "ok",
                 "is_error": True},
            ]}
        ]
    }  # fmt: skip
    substitute_tool_results(body, "anthropic", {"toolu_1": "x", "toolu_2": "y"}, ["toolu_1"])
    blocks = body["messages"][0]["content"]
    assert blocks[0] == {"type": "tool_result", "tool_use_id": "toolu_1", "content": "x",
                         "is_error": True}  # fmt: skip
    assert blocks[1] == {"type": "tool_result", "tool_use_id": "toolu_2", "content": "y"}


def test_an_imported_run_replays_loosely_unless_told(tmp_path: Path) -> None:
    """Transcripts lack what a strict digest needs: an imported run's default mode is loose."""
    from importers.cc_fixtures import basic_session

    from regista.importers import convert, write_runs

    source = basic_session().write(tmp_path / "s.jsonl")
    (path,) = write_runs(convert("claude-code", source), tmp_path / "store")
    with regista_server(path.parent) as server:
        for spec, mode in (({}, "loose"), ({"mode": "strict"}, "strict")):
            rp = new_replay(server, path.stem, **spec)
            assert server.http.get(f"/v1/replays/{rp['id']}").json()["mode"] == mode
    # `regista replay IMPORTED -- CMD` without --mode: loose too; --mode strict is strict
    from regista.cli.sdk_child import replay_child

    for mode, expected in ((None, "loose"), ("strict", "strict")):
        code, replay, _ = replay_child(path, [sys.executable, "-c", "pass"], mode=mode)
        assert code == 0 and replay.spec.mode == expected
