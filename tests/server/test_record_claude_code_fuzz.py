"""Seeded fuzz of the record proxy's sessions with requests as the Messages API accepts them
(and Claude Code sends them): each conversation, whatever its blocks, its system-role
messages and where its ``cache_control`` markers move, is one trace that reads back and
verifies, its side calls and token counts are side steps of it, and a strict replay's
digest of each call is the one its trace gives.

``REGISTA_FUZZ_SEED`` picks the seed; ``REGISTA_FUZZ_CASES`` the number of cases."""

from __future__ import annotations

import copy
import os
import random
from pathlib import Path
from typing import Any

from regista.providers.replay import recorded_calls
from regista.trace.reader import Trace
from regista.trace.verify import verify_requests
from regista.types import LlmResponse
from regista.wire.sessions import SessionBook
from regista.wire.shapes import anthropic_request, sdk_digest

SEED = int(os.environ.get("REGISTA_FUZZ_SEED", "2424"))
CASES = int(os.environ.get("REGISTA_FUZZ_CASES", "25"))

_TEXT = ["hi", "é ü 中文", "<system-reminder>\nnote\n</system-reminder>", "", "\n", "😀"]
_TOOLS = [{"name": "Bash", "input_schema": {"type": "object"}}]


def _block(rng: random.Random, i: int) -> dict[str, Any]:
    """A content block of a kind the API takes in a request (and some it may take later)."""
    kind = rng.randrange(10)
    if kind == 0:
        return {"type": "thinking", "thinking": rng.choice(_TEXT), "signature": f"sig{i}"}
    if kind == 1:
        return {"type": "redacted_thinking", "data": "ZW5j"}
    if kind == 2:
        return {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                            "data": "iVBORw0KGgo="}}  # fmt: skip
    if kind == 3:
        source = {"type": "text", "media_type": "text/plain", "data": rng.choice(_TEXT)}
        return {"type": "document", "source": source, "citations": {"enabled": True}}
    if kind == 4:
        return {"type": "server_tool_use", "id": f"srvtoolu_{i}", "name": "web_search",
                "input": {"query": rng.choice(_TEXT)}}  # fmt: skip
    if kind == 5:
        return {"type": "web_search_tool_result", "tool_use_id": f"srvtoolu_{i}",
                "content": [{"type": "web_search_result", "url": "https://e.x", "title": "t",
                             "encrypted_content": "e"}]}  # fmt: skip
    if kind == 6:
        return {"type": "search_result", "source": "s", "title": "t",
                "content": [{"type": "text", "text": rng.choice(_TEXT)}]}  # fmt: skip
    if kind == 7:
        return {"type": "a_block_of_tomorrow", "payload": {"x": [1, None, rng.random()]}}
    return {"type": "text", "text": rng.choice(_TEXT)}


def _answer(rng: random.Random, i: int, tool: bool) -> dict[str, Any]:
    content = [_block(rng, i) for _ in range(rng.randint(0, 2))]
    if tool:
        content.append({"type": "tool_use", "id": f"toolu_{i}", "name": "Bash",
                        "input": {"command": "ls"}})  # fmt: skip
    return {"content": content, "stop_reason": "tool_use" if tool else "end_turn",
            "usage": {"input_tokens": 3, "output_tokens": 2}}  # fmt: skip


def _body(rng: random.Random, messages: list[dict[str, Any]], system: str) -> dict[str, Any]:
    sent = copy.deepcopy(messages)
    last = sent[-1]["content"]
    if isinstance(last, list) and last and rng.random() < 0.8:
        last[-1]["cache_control"] = {"type": "ephemeral"}  # the breakpoint moves with it
    return {
        "model": "claude-opus-4-8",
        "max_tokens": 100,
        "system": [{"type": "text", "text": system, "cache_control": {"type": "ephemeral"}}],
        "tools": _TOOLS,
        "metadata": {"user_id": "u1"},
        "messages": sent,
    }


def _conversation(rng: random.Random, c: int) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """The (request body, answer) pairs of one conversation."""
    first: list[dict[str, Any]] = [{"type": "text", "text": _TEXT[2]}]
    first += [_block(rng, 0) for _ in range(rng.randint(0, 2))]
    first.append({"type": "text", "text": f"task {c}"})
    messages: list[dict[str, Any]] = [{"role": "user", "content": first}]
    if rng.random() < 0.7:
        messages.append({"role": "system", "content": rng.choice(["agents: a, b", "note"])})
    calls = []
    turns = rng.randint(1, 4)
    for t in range(turns):
        answer = _answer(rng, 100 * c + t, tool=t < turns - 1)
        calls.append((_body(rng, messages, f"system {c}"), answer))
        messages = [*messages, {"role": "assistant", "content": answer["content"]}]
        if t < turns - 1:
            result: list[dict[str, Any]] = [{"type": "tool_result",
                                             "tool_use_id": f"toolu_{100 * c + t}",
                                             "content": [_block(rng, t)]}]  # fmt: skip
            if rng.random() < 0.5:
                result.append({"type": "text", "text": _TEXT[2]})
            messages.append({"role": "user", "content": result})
            if rng.random() < 0.3:
                messages.append({"role": "system", "content": "a reminder"})
    return calls


def test_claude_code_shaped_conversations_are_one_run_each(tmp_path: Path) -> None:
    rng = random.Random(SEED)
    for case in range(CASES):
        folder = tmp_path / str(case)
        book = SessionBook(folder)
        calls = _conversation(rng, case)
        sides = 0
        for i, (body, answer) in enumerate(calls):
            book.record("anthropic", anthropic_request(body), LlmResponse.model_validate(answer))
            if i < len(calls) - 1 and rng.random() < 0.4:  # a title asked of a small model
                side = {
                    "model": "claude-haiku-4-5",
                    "max_tokens": 9,
                    "metadata": {"user_id": "u1"},
                    "messages": [{"role": "user", "content": f"title for task {case}"}],
                }
                title = LlmResponse.model_validate({"content": [{"type": "text", "text": "T"}]})
                book.record("anthropic", anthropic_request(side), title)
                sides += 1
            if rng.random() < 0.3:
                book.record("anthropic", anthropic_request(body),
                            LlmResponse(content=[], stop_reason=None,
                                        count_tokens={"input_tokens": 7}),
                            side="count_tokens")  # fmt: skip
                sides += 1
        book.close()
        paths = list(folder.glob("*.jsonl"))
        assert len(paths) == 1, f"seed {SEED} case {case}: {len(paths)} runs"
        trace = Trace.load(paths[0])  # reads back
        verify_requests(trace)
        task = trace.start.task
        assert f"task {case}" in task and "<system-reminder>" not in task, (SEED, case)
        recorded = recorded_calls(trace)
        assert len(recorded) == len(calls) + sides
        main = [
            r for r in recorded if not (r.response.model_extra or {}).get("count_tokens")
            and r.request is not None and r.request.tools
        ]  # fmt: skip
        for (body, _), r in zip(calls, main, strict=True):
            sent = anthropic_request(body)
            assert r.request is not None
            got = sdk_digest(r.request.system, r.request.messages)
            assert got == sdk_digest(sent.system, sent.messages), (SEED, case, r.step)
