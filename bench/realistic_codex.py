"""A Codex rollout shaped like real ones, of any size, for the import benches.

As dense and varied as a real ``rollout-*.jsonl`` of Codex 0.1xx: a ``turn_context`` and a
person's message (as an ``event_msg`` and a ``response_item``) per turn, reasoning items
with their summary and a long ``encrypted_content``, ``function_call`` items (``shell``,
``exec_command``, ``apply_patch``) with random ``call_id``\\ s and JSON arguments, the
``exec_command_begin`` / ``exec_command_end`` events around them, long outputs (file
contents, command output made of many distinct identifiers, from ``realistic_cc``'s
generator), a ``token_count`` event after every answer, ``agent_message`` events, and now
and then a ``compacted`` item.

    from realistic_codex import write_rollout
    write_rollout(path, mb=50, seed=7)
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
from realistic_cc import _Gen, write_lines

_CWD = "/home/ann/src/shop"


def _line(g: _Gen, kind: str, payload: dict[str, Any]) -> bytes:
    return orjson.dumps({"timestamp": g.ts(), "type": kind, "payload": payload})


def _tokens(g: _Gen, total: dict[str, int]) -> dict[str, Any]:
    r = g.rng
    last = {
        "input_tokens": r.randint(8_000, 160_000),
        "cached_input_tokens": 0,
        "output_tokens": r.randint(20, 3000),
        "reasoning_output_tokens": r.randint(0, 1500),
    }
    last["cached_input_tokens"] = r.randint(0, last["input_tokens"])
    last["total_tokens"] = last["input_tokens"] + last["output_tokens"]
    for k, v in last.items():
        total[k] = total.get(k, 0) + v
    return {
        "type": "token_count",
        "info": {
            "total_token_usage": dict(total),
            "last_token_usage": last,
            "model_context_window": 258400,
        },
        "rate_limits": {"primary": {"used_percent": r.random() * 100, "window_minutes": 300}},
    }


def _call(g: _Gen) -> tuple[list[bytes], list[bytes]]:
    """A model's tool call (its items) and what follows it (events, output)."""
    r = g.rng
    cid = f"call_{g.b62(24)}"
    kind = r.choices(["read", "search", "patch"], weights=[5, 4, 2])[0]
    path = r.choice(g.files)
    if kind == "patch":
        old, new = g.code_line(), g.code_line()
        patch = f"*** Begin Patch\n*** Update File: {path}\n-{old}\n+{new}\n*** End Patch\n"
        item = {"type": "custom_tool_call", "status": "completed", "call_id": cid}
        item.update(name="apply_patch", input=patch)
        output = orjson.dumps(
            {
                "output": f"Success. Updated the following files:\nM {path}\n",
                "metadata": {"exit_code": 0, "duration_seconds": 0.0},
            }
        ).decode()
        out_item = {"type": "custom_tool_call_output", "call_id": cid, "output": output}
        return [_line(g, "response_item", item)], [_line(g, "response_item", out_item)]
    if kind == "read":
        cmd = f"sed -n '1,400p' {path}"
        body = g.file_body()
    else:
        cmd = f"rg -n {g.ident()} src/"
        body = g.command_output()
    args = {"cmd": cmd, "workdir": _CWD, "yield_time_ms": 10000, "max_output_tokens": 10000}
    item = {
        "type": "function_call",
        "name": "exec_command",
        "arguments": orjson.dumps(args).decode(),
        "call_id": cid,
    }
    code = 0 if r.random() < 0.9 else 1
    secs = round(r.random() * 3, 4)
    begin = {"type": "exec_command_begin", "call_id": cid, "command": ["bash", "-lc", cmd]}
    begin["cwd"] = _CWD
    end = {
        "type": "exec_command_end",
        "call_id": cid,
        "stdout": body[:4000],
        "stderr": "",
        "aggregated_output": body[:4000],
        "exit_code": code,
        "duration": {"secs": int(secs), "nanos": 0},
        "formatted_output": body[:2000],
    }
    text = (
        f"Chunk ID: {g.b62(6)}\nWall time: {secs} seconds\nProcess exited with code {code}\n"
        f"Original token count: {len(body) // 4}\nOutput:\n{body}"
    )
    after = [
        _line(g, "event_msg", begin),
        _line(g, "event_msg", end),
        _line(g, "response_item", {"type": "function_call_output", "call_id": cid, "output": text}),
    ]
    return [_line(g, "response_item", item)], after


def _lines(g: _Gen, sid: str, target: int) -> Iterator[bytes]:
    """Lines of about ``target`` bytes in all."""
    r = g.rng
    meta = {
        "id": sid,
        "timestamp": g.ts(),
        "cwd": _CWD,
        "originator": "codex_cli_rs",
        "cli_version": "0.171.0",
        "source": "cli",
        "model_provider": "openai",
        "base_instructions": {"text": g.sentence(1500)},
        "git": {"commit_hash": g.b62(40).lower(), "branch": "main"},
    }
    yield _line(g, "session_meta", meta)
    size = 0
    total: dict[str, int] = {}
    n = 0
    while size < target:
        batch: list[bytes] = []
        if n % 12 == 0:  # a new turn: its context, then the person's message
            batch.append(
                _line(
                    g,
                    "turn_context",
                    {
                        "cwd": _CWD,
                        "approval_policy": "on-request",
                        "sandbox_policy": {"type": "workspace-write"},
                        "model": "gpt-5.1-codex",
                        "effort": "medium",
                        "summary": "auto",
                    },
                )
            )
            prompt = g.sentence(r.randint(5, 60))
            batch.append(
                _line(
                    g,
                    "response_item",
                    {
                        "type": "message",
                        "role": "user",
                        "content": [{"type": "input_text", "text": prompt}],
                    },
                )
            )
            batch.append(_line(g, "event_msg", {"type": "user_message", "message": prompt}))
        if n % 200 == 199:
            batch.append(
                _line(
                    g,
                    "compacted",
                    {
                        "message": g.sentence(200),
                        "replacement_history": [
                            {
                                "type": "message",
                                "role": "user",
                                "content": [{"type": "input_text", "text": g.sentence(40)}],
                            }
                        ],
                    },
                )
            )
            batch.append(_line(g, "event_msg", {"type": "context_compacted"}))
        summary = g.sentence(r.randint(5, 40))
        batch.append(
            _line(
                g,
                "response_item",
                {
                    "type": "reasoning",
                    "summary": [{"type": "summary_text", "text": summary}],
                    "content": None,
                    "encrypted_content": g.b62(r.randint(800, 4000)),
                },
            )
        )
        batch.append(_line(g, "event_msg", {"type": "agent_reasoning", "text": summary}))
        calls, after = [], []
        for _ in range(r.choices([1, 2, 3], weights=[6, 3, 1])[0]):
            c, a = _call(g)
            calls += c
            after += a
        batch += calls
        batch.append(_line(g, "event_msg", _tokens(g, total)))
        batch += after
        if n % 12 == 11:
            said = g.sentence(r.randint(10, 80))
            batch.append(_line(g, "event_msg", {"type": "agent_message", "message": said}))
            batch.append(
                _line(
                    g,
                    "response_item",
                    {
                        "type": "message",
                        "role": "assistant",
                        "content": [{"type": "output_text", "text": said}],
                    },
                )
            )
            batch.append(_line(g, "event_msg", _tokens(g, total)))
        n += 1
        for line in batch:
            size += len(line) + 1
            yield line


def rollout_lines(mb: float, seed: int = 7) -> list[bytes]:
    """The lines of a rollout of about ``mb`` MB."""
    g = _Gen(seed)
    return list(_lines(g, g.uuid(), int(mb * 1_000_000)))


def write_rollout(path: Path, mb: float, seed: int = 7) -> Path:
    """Write a rollout of about ``mb`` MB to ``path`` (kept when it is already there),
    written as it is made."""
    return write_lines(path, mb, seed, _lines)
