"""The record proxy when the upstream fails: a dropped connection is a 502 in the provider's
error shape (the SDK raises, nothing is written), a stream cut halfway reaches the SDK as it came
and is not written, and the next call goes through and is recorded."""

from __future__ import annotations

from pathlib import Path

import anthropic
import pytest
from fakes.anthropic_server import FakeAnthropicServer, FakeDisconnect
from sdk_agents import regista_server

from regista.server.record import book
from regista.trace.reader import Trace

ASK = {
    "model": "claude-sonnet-4-6",
    "max_tokens": 64,
    "system": "You are a weather bot.",
    "messages": [{"role": "user", "content": "Weather in Paris?"}],
}
SUNNY = {"content": [{"type": "text", "text": "It is sunny in Paris, enjoy the walk."}]}


@pytest.mark.parametrize("keep_alive", [False, True], ids=["close", "keep-alive"])
def test_upstream_faults_are_answered_and_not_written(tmp_path: Path, keep_alive: bool) -> None:
    with (
        FakeAnthropicServer(keep_alive=keep_alive) as fake,
        regista_server(tmp_path, anthropic=fake.url) as server,
    ):
        fake.script(FakeDisconnect(), FakeDisconnect(SUNNY, after_events=4), SUNNY, SUNNY)
        client = anthropic.Anthropic(
            api_key="sk-ant-faults", base_url=f"{server.url}/v1/record/anthropic", max_retries=0
        )
        with pytest.raises(anthropic.APIStatusError) as err:
            client.messages.create(**ASK)  # type: ignore[arg-type]
        assert err.value.status_code == 502
        assert "could not be reached" in str(err.value.body)
        # a stream the upstream cut short is passed on as it came (the fake's close ends a
        # close-delimited answer, so the SDK sees a stream without message_stop); not written
        with client.messages.stream(**ASK) as stream:  # type: ignore[arg-type]
            assert [e.type for e in stream][-1] != "message_stop"
        assert client.messages.create(**ASK).content[0].text.startswith("It is sunny")  # type: ignore[arg-type, union-attr]
        with client.messages.stream(**ASK) as stream:  # type: ignore[arg-type]
            assert stream.get_final_message().stop_reason == "end_turn"
        assert book(server.app.state.ctx).wait_written()
        server.record_done()
        assert len(fake.requests) == 4
    traces = [Trace.load(p) for p in sorted(tmp_path.glob("*.jsonl"))]
    calls = [r for t in traces for _, r in t.llm_calls()]
    assert [r.text for r in calls] == ["It is sunny in Paris, enjoy the walk."] * 2
    assert all("sk-ant-faults" not in p.read_text() for p in tmp_path.glob("*.jsonl"))
