"""A ``signal`` fork whose trace the server writes (``"trace": "server"``), its live URLs
(``regista.server.live``), and a strict replay judged as a tape (``tape_failure``, and
``regista test -- CMD``).

The real Anthropic SDK drives them, with a transport that does what the TypeScript client's
``fetch`` does: a call answered ``409 replay_live`` is sent again to the live URL, and every
later call goes there directly.
"""

from __future__ import annotations

import os
import random
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import anthropic
import httpx2
import orjson
import pytest
from fakes.anthropic_server import FakeAnthropicServer
from sdk_agents import (
    TOOLS_ANTHROPIC,
    anthropic_agent,
    new_replay,
    regista_server,
    weather_answer,
)

SEED = int(os.environ.get("REGISTA_FUZZ_SEED", "3131"))
CASES = int(os.environ.get("REGISTA_FUZZ_CASES", "60"))
HERE = Path(__file__).parent
KEY = "sk-live-signal-secret-3131"


class SwitchingTransport(httpx2.BaseTransport):
    """The TypeScript client's ``fetch``, for the Python SDK: replay, then live."""

    def __init__(self, replay_base: str, live_base: str) -> None:
        self.replay_base, self.live_base = replay_base, live_base
        self.inner = httpx2.HTTPTransport()
        self.live = False

    def _to_live(self, request: httpx2.Request) -> httpx2.Request:
        url = str(request.url).replace(self.replay_base, self.live_base, 1)
        return httpx2.Request(request.method, url, headers=request.headers, content=request.content)

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        if self.live:
            return self.inner.handle_request(self._to_live(request))
        response = self.inner.handle_request(request)
        if response.status_code != 409:
            return response
        response.read()
        if response.json().get("error", {}).get("type") != "replay_live":
            return response
        self.live = True
        return self.inner.handle_request(self._to_live(request))


def test_a_signal_fork_written_by_the_server_goes_live_through_its_live_url(
    recorded: Path,
) -> None:
    with FakeAnthropicServer() as fake, regista_server(recorded.parent, anthropic=fake.url) as s:
        fake.answer_with(weather_answer)
        rp = new_replay(
            s,
            recorded.stem,
            edits=[{"step": 1, "tool_result": "rainy in Paris"}],
            live="signal",
            trace="server",
        )
        assert rp["anthropic_live_url"].endswith(f"/v1/replays/{rp['id']}/live/anthropic")
        assert rp["openai_live_url"].endswith(f"/v1/replays/{rp['id']}/live/openai")
        transport = SwitchingTransport(rp["anthropic_base_url"], rp["anthropic_live_url"])
        client = anthropic.Anthropic(
            api_key=KEY,
            base_url=rp["anthropic_base_url"],
            http_client=httpx2.Client(transport=transport),
        )
        # the agent's own tool says "sunny": the live model sees the edit
        assert anthropic_agent(client) == "Tool: rainy in Paris"
        assert transport.live
        assert len(fake.requests) == 1  # only the call past the live point went upstream
        # a call that is no model call (a token count) is passed on, not written
        counted = client.messages.count_tokens(
            model="claude-sonnet-4-6", messages=[{"role": "user", "content": "hi"}]
        )
        assert counted.input_tokens > 0
        status = s.http.get(f"/v1/replays/{rp['id']}").json()
        assert status["live_calls"] == 1
        (run,) = status["runs"]
        assert s.http.delete(f"/v1/replays/{rp['id']}").status_code == 204
        fork = s.http.get(f"/v1/runs/{run}").json()
        runs = {r["id"]: r for r in s.http.get("/v1/runs").json()["runs"]}
    assert fork["forked_from"]["session_id"] == recorded.stem
    assert fork["forked_from"]["at_step"] == 1
    assert fork["outcome"] == "end_turn"
    assert fork["steps"] == 3
    assert runs[run]["links"]["parent"].startswith("/v1/runs/")
    written = (recorded.parent / f"{run}.jsonl").read_text()
    assert '"session.end"' in written
    assert KEY not in written


def test_a_signal_fork_sends_its_live_calls_with_another_model(recorded: Path) -> None:
    """``"model"`` with a signal fork whose trace the server writes: the calls the client
    sends to the live URL reach the provider asking for that model, and are written so."""
    other = "claude-opus-4-1"
    with FakeAnthropicServer() as fake, regista_server(recorded.parent, anthropic=fake.url) as s:
        fake.answer_with(weather_answer)
        edits = [{"step": 1, "tool_result": "rainy in Paris"}]
        spec = {"edits": edits, "live": "signal", "trace": "server", "model": other}
        rp = new_replay(s, recorded.stem, **spec)
        transport = SwitchingTransport(rp["anthropic_base_url"], rp["anthropic_live_url"])
        client = anthropic.Anthropic(
            api_key=KEY,
            base_url=rp["anthropic_base_url"],
            http_client=httpx2.Client(transport=transport),
        )
        assert anthropic_agent(client) == "Tool: rainy in Paris"
        assert transport.live
        (run,) = s.http.get(f"/v1/replays/{rp['id']}").json()["runs"]
        assert s.http.delete(f"/v1/replays/{rp['id']}").status_code == 204
        fork = s.http.get(f"/v1/runs/{run}").json()
    assert [b["model"] for b in fake.bodies] == [other]
    assert fork["forked_from"]["model"] == other
    from regista.trace.reader import Trace

    trace = Trace.load(recorded.parent / f"{run}.jsonl")
    asked = [(st.source, st.request_event.model) for st in trace.steps() if st.request_event]
    assert asked == [("recorded", "claude-sonnet-4-6"), ("live", other)]


def test_a_signal_fork_without_a_server_trace_has_no_live_half(recorded: Path) -> None:
    with regista_server(recorded.parent) as s:
        rp = new_replay(s, recorded.stem, edits=[{"step": 1, "tool_result": "x"}])
        assert "anthropic_live_url" not in rp
        r = s.http.post(f"/v1/replays/{rp['id']}/live/anthropic/v1/messages", json={})
        assert r.status_code == 400
        assert '"trace": "server"' in r.json()["error"]["message"]
        r = s.http.post("/v1/replays", json={"run": recorded.stem, "trace": "disk"})
        assert r.status_code == 400
        assert r.json()["error"]["message"] == "'trace' must be 'client' or 'server', not 'disk'"
        r = s.http.post("/v1/replays/rp_none/live/anthropic/v1/messages", json={})
        assert r.status_code == 404
        r = s.http.post(f"/v1/replays/{rp['id']}/live/gemini/v1/x", json={})
        assert r.status_code == 404


def _status(s: Any, rid: str) -> dict[str, Any]:
    data: dict[str, Any] = s.http.get(f"/v1/replays/{rid}").json()
    return data


def test_tape_failure_names_the_step_and_the_field(recorded: Path) -> None:
    name = recorded.name
    with regista_server(recorded.parent) as s:
        rp = new_replay(s, recorded.stem, mode="strict")
        client = anthropic.Anthropic(api_key="k", base_url=rp["anthropic_base_url"], max_retries=0)
        assert anthropic_agent(client) == "Tool: sunny in Paris"
        assert _status(s, rp["id"])["tape_failure"] is None
        with pytest.raises(anthropic.ConflictError):  # one call more than the recording
            anthropic_agent(client)
        assert _status(s, rp["id"])["tape_failure"] == (
            f"{name}: diverged at step 3 (model call): the run made more model calls than "
            "the recording's 2"
        )

        rp = new_replay(s, recorded.stem, mode="strict")
        client = anthropic.Anthropic(api_key="k", base_url=rp["anthropic_base_url"], max_retries=0)
        with pytest.raises(anthropic.ConflictError):
            anthropic_agent(client, task="Weather in Lyon?")
        failure = _status(s, rp["id"])["tape_failure"]
        assert failure == (
            f"{name}: diverged at step 0 (model call): messages[0].content[0].text: "
            "recorded 'Weather in Paris?' != live 'Weather in Lyon?'"
        )

        rp = new_replay(s, recorded.stem, mode="strict")
        client = anthropic.Anthropic(api_key="k", base_url=rp["anthropic_base_url"], max_retries=0)
        client.messages.create(
            model="claude-sonnet-4-6",
            max_tokens=512,
            system="You are a weather bot.",
            tools=TOOLS_ANTHROPIC,
            messages=[{"role": "user", "content": "Weather in Paris?"}],
        )
        failure = _status(s, rp["id"])["tape_failure"]
        assert failure == (
            f"{name}: diverged at step 2 (end of run): the run made 1 model calls; "
            "the recording made 2"
        )


def _regista(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "regista", *args],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {}), "PYTHONPATH": str(HERE.parent) + os.pathsep + str(HERE)},
        timeout=120,
    )


def test_regista_test_plays_every_tape_to_a_command(recorded: Path, tmp_path: Path) -> None:
    agent = [sys.executable, str(HERE / "agent_main.py"), "anthropic"]
    report = tmp_path / "report.xml"
    done = _regista("test", str(recorded.parent), "--junit", str(report), "--", *agent)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"[1/1] PASS {recorded.parent}/{recorded.name} (3 steps" in done.stdout
    assert "1 passed, 0 failed" in done.stdout

    changed = _regista(
        "test",
        str(recorded),
        "--junit",
        str(report),
        "--",
        *agent,
        env={"AGENT_SYSTEM": "You are a terse weather bot."},
    )
    assert changed.returncode == 1
    message = (
        f"{recorded.name}: diverged at step 0 (model call): system: recorded 'You are a "
        "weather bot.' != live 'You are a terse weather bot.'"
    )
    assert f"    {message}" in changed.stdout.splitlines(), changed.stdout
    failure = ET.parse(report).getroot().find("testsuite/testcase/failure")
    assert failure is not None and failure.get("message") == message

    both = _regista("test", str(recorded), "--agent", "x:y", "--", *agent)
    assert both.returncode != 0 and "Traceback" not in both.stderr


def test_regista_serve_on_port_0_says_the_port_it_took(tmp_path: Path) -> None:
    """``--port 0`` takes a free port and names it; ``--until-stdin-closes`` stops the
    server, gracefully, once the program that started it closes its input."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "regista", "serve", "--store", str(tmp_path), "--port", "0",
         "--until-stdin-closes"],
        stdin=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()
        m = re.search(r"on http://127\.0\.0\.1:(\d+)", line)
        assert m is not None, line
        assert int(m.group(1)) > 0
        assert httpx2.get(f"http://127.0.0.1:{m.group(1)}/v1/health").json() == {"ok": True}
        assert proc.stdin is not None
        proc.stdin.close()
        assert proc.wait(timeout=60) == 0
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def _fuzzed(rng: random.Random) -> bytes:
    body: Any = {
        "model": "claude-sonnet-4-6",
        "max_tokens": 16,
        "messages": [{"role": "user", "content": "Weather in Paris?"}],
    }
    for _ in range(rng.randrange(1, 4)):
        key = rng.choice(["model", "messages", "max_tokens", "stream", "tools", "system", "x"])
        body[key] = rng.choice([None, 1, -1, "", "\x00", [], {}, [{}], [{"role": 3}], True])
    raw = orjson.dumps(body)
    if rng.random() < 0.2:
        raw = raw[: rng.randrange(len(raw))]
    return raw


def test_fuzzed_bodies_on_the_live_url_never_break_the_server(recorded: Path) -> None:
    rng = random.Random(SEED)
    with FakeAnthropicServer() as fake, regista_server(recorded.parent, anthropic=fake.url) as s:
        fake.answer_with(weather_answer)
        rp = new_replay(
            s, recorded.stem, edits=[{"step": 1, "tool_result": "x"}], live="signal", trace="server"
        )
        for n in range(CASES):
            body = _fuzzed(rng)
            r = s.http.post(f"/v1/replays/{rp['id']}/live/anthropic/v1/messages", content=body)
            where = f"seed {SEED}, case {n}: {body[:200]!r}"
            assert r.status_code < 500 or r.status_code == 502, where
            assert "Traceback" not in r.text, where
        assert s.http.delete(f"/v1/replays/{rp['id']}").status_code == 204
