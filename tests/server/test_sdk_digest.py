"""The strict replay digest, computed in one pass, is ``request_hash`` of the digest form:
secrets redacted the same way whether the JSON is redacted whole or value by value."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from regista.trace.canonical import request_hash
from regista.wire.shapes import digest_form, sdk_digest

SECRETS = [
    "sk-ant-api03-" + "Zq8x" * 20,
    "sk-proj-" + "a1B2" * 12,
    "Bearer eyJhbGciOiJIUzI1NiJ9." + "x" * 40 + ".sig",
    "postgres://user:hunter2@db.example:5432/app",
    "AKIA" + "Q" * 16,
]


def _text(rng: random.Random) -> str:
    parts = ["plain", "é ü 中文", '"quoted"', "back\\slash", "\n", "", "😀"]
    if rng.random() < 0.4:
        parts.append(rng.choice(SECRETS))
    return "".join(rng.choice(parts) for _ in range(rng.randint(0, 6)))


def _message(rng: random.Random, i: int) -> dict[str, Any]:
    if i % 2 == 0:
        if rng.random() < 0.5:
            return {"role": "user", "content": _text(rng)}
        return {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": f"toolu_{i}",
                         "content": _text(rng), "is_error": rng.random() < 0.2}],
        }  # fmt: skip
    return {
        "role": "assistant",
        "content": [
            {"type": "text", "text": _text(rng)},
            {"type": "tool_use", "id": f"toolu_{i}", "name": "lookup",
             "input": {"key": _text(rng), "n": rng.randint(-5, 5), "x": rng.random()}},
        ],
    }  # fmt: skip


def test_the_one_pass_digest_is_the_request_hash_of_the_digest_form() -> None:
    rng = random.Random(14)
    for _ in range(300):
        system = _text(rng) or None
        messages = [_message(rng, i) for i in range(rng.randint(1, 8))]
        assert sdk_digest(system, messages) == request_hash(digest_form(system, messages))


def test_a_secret_does_not_change_the_digest_but_other_text_does() -> None:
    messages = [{"role": "user", "content": f"my key is {SECRETS[0]}"}]
    other_key = [{"role": "user", "content": f"my key is {SECRETS[0][:-4]}AAAA"}]
    other_text = [{"role": "user", "content": f"my key was {SECRETS[0]}"}]
    assert sdk_digest("s", messages) == sdk_digest("s", other_key)
    assert sdk_digest("s", messages) != sdk_digest("s", other_text)


def test_an_imported_session_with_meta_messages_replays_strict_to_a_real_request(
    tmp_path: Path,
) -> None:
    """An importer marks a Claude Code meta message with ``origin``: no request the client
    sends carries it, so the digest must not cover it (every call used to diverge)."""
    from importers.cc_fixtures import CCSession, text, tool_use

    from regista.importers.claude_code import convert
    from regista.server.sdk_replay import SdkReplay, SdkReplayMode, Spec
    from regista.trace.reader import Trace

    s = CCSession()
    s.meta("<command-name>/clear</command-name>")
    s.prompt("Fix the test.")
    s.answer(
        text("Running it."), tool_use("toolu_1", "Bash", command="pytest"), stop_reason="tool_use"
    )
    s.tool_result("toolu_1", "1 passed")
    s.answer(text("Fixed."), stop_reason="end_turn")
    trace = Trace.from_bytes(convert(s.write(tmp_path / "s.jsonl")).main.to_bytes(), "<test>")
    calls = trace.llm_calls()
    assert any("origin" in m for m in calls[0][0].messages)  # the importer's own mark
    replay = SdkReplay(trace, Spec(run=trace.session_id, mode=SdkReplayMode.STRICT), ttl=60)
    for request, _ in calls:
        sent = [{k: v for k, v in m.items() if k != "origin"} for m in request.messages]
        served = replay.answer(request.model_copy(update={"messages": sent}), "anthropic")
        assert not isinstance(served, str) and served.matched
    assert replay.served == len(calls) == 2
