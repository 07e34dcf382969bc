"""Recorded SDK sessions end when idle and when the server stops (a fake clock, no sleeps)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import anthropic
import pytest
from fakes.anthropic_server import FakeAnthropicServer
from sdk_agents import anthropic_agent

from regista.server import BackgroundServer, create_app
from regista.server.lifecycle import SessionReaper, sweep_sessions
from regista.trace.reader import Trace
from regista.types import LlmRequest, LlmResponse
from regista.wire.sessions import SessionBook

HERE = Path(__file__).parent


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _answer(text: str) -> LlmResponse:
    return LlmResponse.model_validate(
        {"content": [{"type": "text", "text": text}], "stop_reason": "end_turn"}
    )


def _request(*texts: str) -> LlmRequest:
    messages = []
    for i, t in enumerate(texts):
        messages.append({"role": "user" if i % 2 == 0 else "assistant", "content": t})
    return LlmRequest(model="m", system="sys", messages=messages)


def test_a_session_ends_after_the_idle_time_and_a_late_call_continues_it(
    tmp_path: Path,
) -> None:
    clock = FakeClock()
    book = SessionBook(tmp_path, idle_seconds=60, clock=clock)
    book.record("anthropic", _request("hi"), _answer("hello"))
    clock.now += 59
    assert book.sweep() == 0
    book.record("anthropic", _request("hi", "hello", "more"), _answer("sure"))
    clock.now += 59.5  # idle time counts from the last call
    assert book.sweep() == 0 and book.open_sessions == 1
    clock.now += 1
    assert book.sweep() == 1 and book.open_sessions == 0
    (first,) = book.paths
    trace = Trace.load(first)
    assert trace.end is not None and trace.end.stop_reason == "end_turn"
    assert trace.end.output == "sure" and len(trace.llm_calls()) == 2

    # the agent comes back later with the same conversation: a new trace, linked
    clock.now += 3600
    book.record("anthropic", _request("hi", "hello", "more", "sure", "again"), _answer("ok"))
    second = book.paths[-1]
    assert second != first
    start = Trace.load(second).start
    assert start is not None
    assert start.metadata["continues"] == Trace.load(first).start.session_id  # type: ignore[union-attr]
    assert Trace.load(second).end is None
    book.close()
    assert Trace.load(second).end is not None


def test_a_new_conversation_is_a_new_session_and_idle_ends_only_the_quiet_one(
    tmp_path: Path,
) -> None:
    clock = FakeClock()
    book = SessionBook(tmp_path, idle_seconds=10, clock=clock)
    book.record("anthropic", _request("first"), _answer("a"))
    clock.now += 8
    book.record("anthropic", _request("second"), _answer("b"))
    assert len(book.paths) == 2
    clock.now += 5  # the first is 13 s quiet, the second 5 s
    assert book.sweep() == 1
    ends = [Trace.load(p).end for p in book.paths]
    assert ends[0] is not None and ends[1] is None
    assert "continues" not in Trace.load(book.paths[1]).start.metadata  # type: ignore[union-attr]


def test_a_sessions_length_runs_from_its_first_call_to_its_last_answer(tmp_path: Path) -> None:
    clock = FakeClock()
    book = SessionBook(tmp_path, clock=clock)
    book.record("anthropic", _request("hi"), _answer("hello"), duration_ms=500)
    clock.now += 12
    book.record("anthropic", _request("hi", "hello", "more"), _answer("sure"), duration_ms=250)
    clock.now += 40  # quiet time after the last answer is not part of it
    book.close()
    (path,) = book.paths
    end = Trace.load(path).end
    assert end is not None and end.duration_ms == pytest.approx(12_500)


def test_without_an_idle_time_sessions_end_only_when_closed(tmp_path: Path) -> None:
    clock = FakeClock()
    book = SessionBook(tmp_path, clock=clock)
    book.record("anthropic", _request("hi"), _answer("hello"))
    clock.now += 10**6
    assert book.sweep() == 0 and book.open_sessions == 1


def test_the_proxy_under_a_server_ends_idle_sessions_and_the_rest_at_shutdown(
    tmp_path: Path,
) -> None:
    clock = FakeClock()
    with FakeAnthropicServer() as fake:
        fake.answer_with(lambda body: {"content": [{"type": "text", "text": "sunny"}]})
        app = create_app(tmp_path, upstreams={"anthropic": fake.url}, session_idle=30)
        ctx = app.state.ctx
        ctx.state["record_book"] = SessionBook(tmp_path, idle_seconds=30, clock=clock)
        reaper = SessionReaper(ctx, interval=3600)  # sweeps are driven by hand here
        with BackgroundServer(app) as server, reaper:
            client = anthropic.Anthropic(
                api_key="sk-ant-idle", base_url=f"{server.url}/v1/record/anthropic"
            )
            assert anthropic_agent(client, task="Weather in Paris?") == "sunny"
            assert ctx.state["record_book"].wait_written()  # written right after answering
            clock.now += 31
            sweep_sessions(ctx)
            (done,) = tmp_path.glob("*.jsonl")
            trace = Trace.load(done)
            assert trace.end is not None and trace.end.output == "sunny"
            anthropic_agent(client, task="Weather in Rome?")
            assert ctx.state["record_book"].wait_written()
            assert len(list(tmp_path.glob("*.jsonl"))) == 2
        # the server stopped: the second session ended too
        assert all(Trace.load(p).end is not None for p in tmp_path.glob("*.jsonl"))
        assert "sk-ant-idle" not in "".join(p.read_text() for p in tmp_path.glob("*.jsonl"))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL])
def test_regista_serve_stopped_or_killed_leaves_readable_traces(
    tmp_path: Path, sig: signal.Signals
) -> None:
    port = _free_port()
    with FakeAnthropicServer() as fake:
        fake.answer_with(lambda body: {"content": [{"type": "text", "text": "sunny"}]})
        env = {**os.environ, "ANTHROPIC_BASE_URL": fake.url}
        proc = subprocess.Popen(
            [sys.executable, "-m", "regista", "serve", "--store", str(tmp_path),
             "--port", str(port), "--session-idle", "0"],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )  # fmt: skip
        try:
            base = f"http://127.0.0.1:{port}"
            deadline = time.monotonic() + 30
            while True:  # wait until it listens
                try:
                    urllib.request.urlopen(f"{base}/v1/health", timeout=1).close()
                    break
                except OSError:
                    assert proc.poll() is None and time.monotonic() < deadline
                    time.sleep(0.05)
            client = anthropic.Anthropic(
                api_key="sk-ant-kill", base_url=f"{base}/v1/record/anthropic", max_retries=0
            )
            anthropic_agent(client)
            # the proxy answers first and writes right after: the first call is surely on
            # disk once a later request has been answered (the later one may be lost)
            anthropic_agent(client)
        finally:
            os.killpg(proc.pid, sig)
            proc.wait(timeout=30)
            if proc.stderr is not None:
                proc.stderr.close()
    path = min(tmp_path.glob("*.jsonl"))  # ULIDs sort by time: the first session
    trace = Trace.load(path)
    assert trace.llm_calls()[0][1].text == "sunny"
    if sig == signal.SIGTERM:
        assert trace.end is not None and trace.end.output == "sunny"
    else:
        assert trace.end is None  # unfinished, not corrupt
    assert "sk-ant-kill" not in path.read_text()


def test_serve_refuses_a_negative_idle_time(capfd: pytest.CaptureFixture[str]) -> None:
    from regista.cli.main import main

    assert main(["serve", "--session-idle", "-1"]) == 2
    assert capfd.readouterr().err.count("\n") == 1


def test_a_live_forks_sessions_end_when_its_replay_is_deleted(tmp_path: Path) -> None:
    from sdk_agents import new_replay, regista_server

    def weather(body: dict[str, object]) -> dict[str, object]:
        last = body["messages"][-1]  # type: ignore[index]
        if isinstance(last["content"], str):  # type: ignore[index]
            return {"content": [{"type": "tool_use", "id": "toolu_1", "name": "get_weather",
                                 "input": {"city": "Paris"}}]}  # fmt: skip
        return {"content": [{"type": "text", "text": "done"}]}

    with FakeAnthropicServer() as fake, regista_server(tmp_path, anthropic=fake.url) as server:
        fake.answer_with(weather)
        client = anthropic.Anthropic(api_key="k", base_url=f"{server.url}/v1/record/anthropic")
        anthropic_agent(client)
        server.record_done()
        (parent,) = tmp_path.glob("*.jsonl")
        rp = new_replay(server, parent.stem, live_after=0, live="proxy")
        forked = anthropic.Anthropic(api_key="k", base_url=rp["anthropic_base_url"])
        assert anthropic_agent(forked) == "done"
        (fork,) = [p for p in tmp_path.glob("*.jsonl") if p != parent]
        assert Trace.load(fork).end is None
        assert server.http.delete(f"/v1/replays/{rp['id']}").status_code in (200, 204)
        trace = Trace.load(fork)
        assert trace.end is not None and trace.end.output == "done"


def test_a_streamed_call_is_written_right_after_the_stream_ends(tmp_path: Path) -> None:
    from sdk_agents import regista_server

    from regista.server.record import book

    with FakeAnthropicServer() as fake, regista_server(tmp_path, anthropic=fake.url) as server:
        fake.answer_with(lambda body: {"content": [{"type": "text", "text": "sunny"}]})
        client = anthropic.Anthropic(api_key="k", base_url=f"{server.url}/v1/record/anthropic")
        for n in range(1, 6):
            assert anthropic_agent(client, stream=True) == "sunny"
            assert book(server.app.state.ctx).wait_written()
            traces = [Trace.load(p) for p in tmp_path.glob("*.jsonl")]
            assert len(traces) == n
            assert all([r.text for _, r in t.llm_calls()] == ["sunny"] for t in traces)
        server.record_done()
