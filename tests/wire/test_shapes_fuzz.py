"""Seeded fuzz of the provider shapes' normalisers: whatever a request or an answer holds in
the fields regista keeps as sent (``tool_choice``, tools, message fields, usage, unknown
fields), a normalised call is written and reads back, or is one clear error when it is.

``REGISTA_FUZZ_SEED`` picks the seed and ``REGISTA_FUZZ_CASES`` the number of cases."""

from __future__ import annotations

import os
import random
from pathlib import Path
from typing import Any

from regista.errors import TraceWriteError
from regista.trace.reader import Trace
from regista.trace.recorder import TraceRecorder
from regista.wire.errors import HttpError
from regista.wire.shapes import (
    anthropic_body,
    anthropic_request,
    openai_body,
    openai_request,
    openai_response,
)

SEED = int(os.environ.get("REGISTA_FUZZ_SEED", "2424"))
CASES = int(os.environ.get("REGISTA_FUZZ_CASES", "60"))

_WORDS = ["auto", "required", "none", "function", "name", "type", "custom", "text",
          "tool_use", "strict", "parameters", "refusal", "audio", "annotations", "usage",
          "prompt_tokens", "cached_tokens", "prompt_tokens_details", "completion_tokens",
          "reasoning_tokens", "completion_tokens_details", "\u00e9\u0000"]  # fmt: skip


def _value(rng: random.Random, depth: int = 0) -> Any:
    kind = rng.randrange(7 if depth < 3 else 4)
    if kind == 0:
        return rng.choice(_WORDS)
    if kind == 1:
        return rng.choice([-1, 0, 7, 2**40])
    if kind == 2:
        return rng.choice([None, True, False, 0.5])
    if kind == 3:
        return ""
    if kind in (4, 5):
        return {rng.choice(_WORDS): _value(rng, depth + 1) for _ in range(rng.randint(0, 3))}
    return [_value(rng, depth + 1) for _ in range(rng.randint(0, 3))]


def _openai_body(rng: random.Random) -> dict[str, Any]:
    body: dict[str, Any] = {
        "model": "gpt-4o",
        "messages": [
            {"role": "user", "content": "hi", rng.choice(_WORDS): _value(rng)},
            {"role": "assistant", "content": None, rng.choice(_WORDS): _value(rng)},
            {"role": "user", "content": "again"},
        ],
    }
    if rng.random() < 0.8:
        body["tool_choice"] = _value(rng)
    if rng.random() < 0.8:
        body["tools"] = [_value(rng) for _ in range(rng.randint(0, 3))]
    body[rng.choice(_WORDS)] = _value(rng)
    return body


def _completion(rng: random.Random) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": rng.choice([None, "ok"])}
    message[rng.choice(["refusal", "audio", "annotations"])] = _value(rng)
    return {
        "id": "chatcmpl-1",
        "choices": [{"index": 0, "message": message, "finish_reason": _value(rng)}],
        "usage": _value(rng),
        rng.choice(_WORDS): _value(rng),
    }


def _written(tmp_path: Path, case: int, provider: str, request: Any, response: Any) -> None:
    path = tmp_path / f"{case}.jsonl"
    try:
        with TraceRecorder.create(path, f"01JFUZZSHAPES{case:013d}") as rec:
            rec.start(task="t", model="m", provider=provider, tools=request.tools)
            rec.model_step(request, response, provider=provider)
            rec.end("end_turn")
    except TraceWriteError:
        return  # one clear error, nothing unreadable written
    ((again, answer),) = Trace.load(path).llm_calls()
    assert again.tool_choice == request.tool_choice
    assert again.tools == request.tools
    assert again.params == request.params
    assert answer.content == response.content


def test_fuzzed_openai_calls_read_back(tmp_path: Path) -> None:
    rng = random.Random(SEED)
    for case in range(CASES):
        body = _openai_body(rng)
        try:
            request = openai_request(body)
        except HttpError:
            continue
        response = openai_response(_completion(rng))
        _written(tmp_path, case, "openai", request, response)
        served = openai_body(response, "gpt-4o")
        assert served["choices"][0]["finish_reason"] is not None
        anthropic_body(response)


def test_fuzzed_anthropic_calls_read_back(tmp_path: Path) -> None:
    rng = random.Random(SEED + 1)
    for case in range(CASES):
        body = {
            "model": "claude",
            "max_tokens": 10,
            "messages": [
                {"role": "user", "content": [{"type": rng.choice(_WORDS), "x": _value(rng)}]}
            ],
            "tool_choice": _value(rng),
            rng.choice(_WORDS): _value(rng),
        }
        try:
            request = anthropic_request(body)
        except HttpError:
            continue
        response = openai_response(_completion(rng))
        _written(tmp_path, case, "anthropic", request, response)
