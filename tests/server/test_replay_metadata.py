"""A replayed answer carries what the client's loop needs: the stop or finish reason and the
usage, as recorded, or derived where the source lacks them (imported runs).

A Claude Code transcript and a Codex rollout are imported, then replayed to a plain SDK
tool loop (``while stop_reason == "tool_use"``) under ``regista replay TRACE -- CMD``: the
loop must go on past the first call, and see the usage in its provider's own fields.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from importers.cc_fixtures import basic_session
from importers.codex_fixtures import basic_rollout

from regista.cli.main import main
from regista.types import LlmResponse
from regista.wire.shapes import anthropic_body, openai_body, openai_response

ANTHROPIC_LOOP = """
import json, anthropic
client = anthropic.Anthropic(max_retries=0)
messages = [{"role": "user", "content": "The refund test fails. Can you fix it?"}]
seen = []
while True:
    msg = client.messages.create(model="m", max_tokens=512, messages=messages)
    seen.append({"stop": msg.stop_reason, "usage": msg.usage.model_dump()})
    messages.append({"role": "assistant", "content": [b.model_dump() for b in msg.content]})
    if msg.stop_reason != "tool_use":
        break
    messages.append({"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": b.id, "content": "done"}
        for b in msg.content if b.type == "tool_use"]})
print("SEEN " + json.dumps(seen))
"""

OPENAI_LOOP = """
import json, openai
client = openai.OpenAI(max_retries=0)
messages = [{"role": "user", "content": "Fix the refund rounding bug"}]
seen = []
while True:
    out = client.chat.completions.create(model="gpt-5-codex", messages=messages)
    choice = out.choices[0]
    seen.append({"finish": choice.finish_reason, "usage": out.usage.model_dump()})
    messages.append(choice.message.model_dump(exclude_none=True))
    if choice.finish_reason != "tool_calls":
        break
    for call in choice.message.tool_calls:
        messages.append({"role": "tool", "tool_call_id": call.id, "content": "done"})
print("SEEN " + json.dumps(seen))
"""


def _seen(out: str) -> list[dict[str, Any]]:
    line = next(ln for ln in out.splitlines() if ln.startswith("SEEN "))
    seen: list[dict[str, Any]] = json.loads(line[5:])
    return seen


def _import(kind: str, source: Path, tmp_path: Path) -> Path:
    traces = tmp_path / "traces"
    assert main(["import", kind, str(source), "--trace-dir", str(traces)]) == 0
    (path,) = traces.glob("*.jsonl")
    return path


@pytest.fixture
def no_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for key in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(key, raising=False)


def test_an_imported_claude_code_session_replays_to_a_tool_loop(
    tmp_path: Path, capfd: Any, no_env: None
) -> None:
    source = basic_session().write(tmp_path / "projects" / "p" / "s.jsonl")
    path = _import("claude-code", source, tmp_path)
    agent = tmp_path / "agent.py"
    agent.write_text(ANTHROPIC_LOOP)
    assert main(["replay", str(path), "--", sys.executable, str(agent)]) == 0
    out = capfd.readouterr().out
    seen = _seen(out)
    # the transcript holds no stop reason beside its tool calls: derived, not null
    assert [s["stop"] for s in seen] == ["tool_use", "tool_use", "end_turn"]
    usage = seen[0]["usage"]
    assert usage["input_tokens"] == 3
    assert usage["cache_read_input_tokens"] == 15120
    assert usage["cache_creation_input_tokens"] == 1204
    assert "replayed: 3 of 3 model calls served" in out


def test_an_imported_codex_rollout_replays_to_a_tool_loop(
    tmp_path: Path, capfd: Any, no_env: None
) -> None:
    source = basic_rollout().write(tmp_path / "sessions" / "rollout-2026-02-11T08-27-22-019b.jsonl")
    path = _import("codex", source, tmp_path)
    agent = tmp_path / "agent.py"
    agent.write_text(OPENAI_LOOP)
    assert main(["replay", str(path), "--", sys.executable, str(agent)]) == 0
    out = capfd.readouterr().out
    seen = _seen(out)
    assert [s["finish"] for s in seen] == ["tool_calls", "tool_calls", "stop"]
    usage = seen[0]["usage"]
    # OpenAI's prompt_tokens include the cached ones
    assert usage["prompt_tokens"] == 5200
    assert usage["prompt_tokens_details"]["cached_tokens"] == 4096
    assert usage["completion_tokens"] == 180
    assert usage["completion_tokens_details"]["reasoning_tokens"] == 60
    assert usage["total_tokens"] == 5380
    assert "replayed: 3 of 3 model calls served" in out


def test_recorded_reasons_and_usage_are_served_as_recorded() -> None:
    paused = LlmResponse(content=[{"type": "text", "text": "…"}], stop_reason="pause_turn")
    assert anthropic_body(paused)["stop_reason"] == "pause_turn"
    refusal = LlmResponse(content=[], stop_reason="refusal")
    assert openai_body(refusal, "m")["choices"][0]["finish_reason"] == "content_filter"
    recorded = openai_response(
        {
            "id": "chatcmpl-1",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": "hi"},
                    "finish_reason": "length",
                }
            ],
            "usage": {
                "prompt_tokens": 100,
                "completion_tokens": 5,
                "total_tokens": 105,
                "prompt_tokens_details": {"cached_tokens": 80},
            },
        }
    )
    # the trace counts tokens as Anthropic does: input without the cached ones
    assert recorded.usage.input_tokens == 20
    assert recorded.usage.cache_read_input_tokens == 80
    body = openai_body(recorded, "m")
    assert body["choices"][0]["finish_reason"] == "length"
    assert body["usage"]["prompt_tokens"] == 100
    assert body["usage"]["prompt_tokens_details"] == {"cached_tokens": 80}
    served = anthropic_body(recorded)
    assert served["stop_reason"] == "max_tokens"
    assert served["usage"]["input_tokens"] == 20
    assert served["usage"]["cache_read_input_tokens"] == 80


def test_a_missing_reason_is_derived_from_the_content() -> None:
    calls = LlmResponse(
        content=[{"type": "tool_use", "id": "t", "name": "f", "input": {}}], stop_reason=None
    )
    assert anthropic_body(calls)["stop_reason"] == "tool_use"
    assert openai_body(calls, "m")["choices"][0]["finish_reason"] == "tool_calls"
    said = LlmResponse(content=[{"type": "text", "text": "x"}], stop_reason=None)
    assert anthropic_body(said)["stop_reason"] == "end_turn"
    assert openai_body(said, "m")["choices"][0]["finish_reason"] == "stop"
