"""End to end: an app on the real SDKs, instrumented by OpenLLMetry with content capture,
exports over the real OTLP exporter to ``regista serve``; the runs hold the conversation, and
the same app replayed through the SDK replay server on those runs gets the same answers."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from fakes.anthropic_server import FakeAnthropicServer
from fakes.openai_server import FakeOpenAIServer

from regista.server import BackgroundServer, create_app
from regista.trace.reader import Trace

pytest.importorskip("opentelemetry.instrumentation.anthropic")
pytest.importorskip("opentelemetry.instrumentation.openai")

APP = Path(__file__).with_name("openllmetry_app.py")


def test_openllmetry_spans_become_runs(tmp_path: Path) -> None:
    store = tmp_path / "store"
    with (
        FakeAnthropicServer() as claude,
        FakeOpenAIServer() as gpt,
        BackgroundServer(create_app(store)) as server,
    ):
        claude.script(
            {
                "content": [
                    {
                        "type": "tool_use",
                        "id": "toolu_7",
                        "name": "get_order",
                        "input": {"order_id": "ORD-7"},
                    }
                ],
                "stop_reason": "tool_use",
                "usage": {"input_tokens": 21, "output_tokens": 9},
            },
            {
                "content": [{"type": "text", "text": "Refunded $40 for ORD-7."}],
                "usage": {"input_tokens": 40, "output_tokens": 8},
            },
        )
        gpt.script({"content": "ORD-7 was refunded."})
        env = {**os.environ, "TRACELOOP_TRACE_CONTENT": "true"}
        done = subprocess.run(
            [sys.executable, str(APP), f"{server.url}/v1/traces", claude.url, gpt.url],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        assert "Refunded $40" in done.stdout
        runs = sorted((Trace.load(p) for p in store.glob("*.jsonl")), key=lambda t: t.start.ts)
        # The received runs replay through the SDK replay server to the same answers
        # (loose: spans do not hold everything a request's digest needs).
        import httpx2

        with httpx2.Client(base_url=server.url) as http:
            urls = [
                http.post("/v1/replays", json={"run": r.session_id, "mode": "loose"}).json()
                for r in runs
            ]
        sink = tmp_path / "sink"  # the replayed app's own spans go to another store
        with BackgroundServer(create_app(sink)) as other:
            again = subprocess.run(
                [
                    sys.executable,
                    str(APP),
                    f"{other.url}/v1/traces",
                    urls[0]["anthropic_base_url"],
                    urls[1]["openai_base_url"],
                ],
                capture_output=True,
                text=True,
                env=env,
                timeout=120,
            )
        assert again.returncode == 0, again.stderr
        assert again.stdout == done.stdout
        assert len(claude.requests) == 2 and len(gpt.requests) == 1  # nothing reached them
    assert len(runs) == 2
    claude_run, gpt_run = runs
    steps = claude_run.steps()
    assert [s.kind for s in steps] == ["model", "model"]
    assert claude_run.start.task == "Refund order ORD-7?"
    first, last = steps[0].response, steps[1].response
    assert first is not None and last is not None
    assert first.tool_uses[0]["name"] == "get_order"
    assert last.text == "Refunded $40 for ORD-7."
    assert last.usage.output_tokens == 8
    request = claude_run.request_for(steps[1].request_event)  # type: ignore[arg-type]
    assert request.messages[0]["content"][0]["text"] == "Refund order ORD-7?"
    assert claude_run.start.metadata["service_name"] == "shop-assistant"
    assert gpt_run.steps()[0].response.text == "ORD-7 was refunded."  # type: ignore[union-attr]
