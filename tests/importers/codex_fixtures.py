"""Codex CLI rollouts made by code, shaped like the files Codex writes."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson

THREAD = "019b64e5-7a2c-7d31-9f0e-5c8a1b2d3e4f"


@dataclass
class Rollout:
    """Writes one wrapped-format rollout, line by line."""

    thread_id: str = THREAD
    start: datetime = field(default_factory=lambda: datetime(2026, 2, 11, 8, 27, 22, tzinfo=UTC))
    lines: list[dict[str, Any]] = field(default_factory=list)
    _n: int = 0
    _total: int = 0

    def _ts(self) -> str:
        self._n += 1
        t = self.start + timedelta(milliseconds=413 * self._n)
        return t.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"

    def line(self, kind: str, payload: dict[str, Any]) -> None:
        self.lines.append({"timestamp": self._ts(), "type": kind, "payload": payload})

    def meta(self, **extra: Any) -> None:
        self.line(
            "session_meta",
            {
                "id": self.thread_id,
                "timestamp": self._ts(),
                "cwd": "/home/ann/projects/shop",
                "originator": "codex_cli_rs",
                "cli_version": "0.77.0",
                "instructions": None,
                "base_instructions": {"text": "You are Codex, a coding agent based on GPT-5."},
                "source": "cli",
                "model_provider": "openai",
                "git": {
                    "commit_hash": "4be0c1d",
                    "branch": "main",
                    "repository_url": "git@example.com:ann/shop.git",
                },
                **extra,
            },
        )

    def turn(self, model: str = "gpt-5-codex") -> None:
        self.line(
            "turn_context",
            {
                "cwd": "/home/ann/projects/shop",
                "approval_policy": "on-request",
                "sandbox_policy": {"type": "workspace-write"},
                "model": model,
                "effort": "medium",
                "summary": "auto",
            },
        )

    def user(self, text: str) -> None:
        self.line(
            "response_item",
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]},
        )
        if not text.startswith("<"):
            self.line("event_msg", {"type": "user_message", "message": text, "images": []})

    def developer(self, text: str) -> None:
        self.line(
            "response_item",
            {
                "type": "message",
                "role": "developer",
                "content": [{"type": "input_text", "text": text}],
            },
        )

    def reasoning(self, summary: str) -> None:
        self.line(
            "response_item",
            {
                "type": "reasoning",
                "summary": [{"type": "summary_text", "text": summary}],
                "content": None,
                "encrypted_content": "gAAAAABo" + "Q" * 60,
            },
        )

    def say(self, text: str) -> None:
        self.line(
            "response_item",
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": text}],
            },
        )
        self.line("event_msg", {"type": "agent_message", "message": text})

    def call(self, call_id: str, name: str, **args: Any) -> None:
        self.line(
            "response_item",
            {
                "type": "function_call",
                "name": name,
                "arguments": orjson.dumps(args).decode(),
                "call_id": call_id,
            },
        )

    def patch(self, call_id: str, patch: str) -> None:
        self.line(
            "response_item",
            {
                "type": "custom_tool_call",
                "status": "completed",
                "call_id": call_id,
                "name": "apply_patch",
                "input": patch,
            },
        )

    def output(self, call_id: str, output: Any, custom: bool = False) -> None:
        kind = "custom_tool_call_output" if custom else "function_call_output"
        self.line("response_item", {"type": kind, "call_id": call_id, "output": output})

    def tokens(self, inp: int, cached: int, out: int, *, twice: bool = False) -> None:
        self._total += inp + out
        last = {
            "input_tokens": inp,
            "cached_input_tokens": cached,
            "output_tokens": out,
            "reasoning_output_tokens": out // 3,
            "total_tokens": inp + out,
        }
        total = {**last, "total_tokens": self._total}
        for _ in range(2 if twice else 1):
            self.line(
                "event_msg",
                {
                    "type": "token_count",
                    "info": {
                        "total_token_usage": total,
                        "last_token_usage": last,
                        "model_context_window": 272000,
                    },
                    "rate_limits": None,
                },
            )

    def usage_record(
        self, response_id: str, inp: int, cached: int, written: int, out: int, reasoning: int
    ) -> None:
        """Codex 0.1xx's ``token_usage_record`` line (one per answer), then the
        ``token_count`` event it also writes."""
        usage = {
            "input_tokens": inp,
            "cached_input_tokens": cached,
            "cache_write_input_tokens": written,
            "output_tokens": out,
            "reasoning_output_tokens": reasoning,
            "total_tokens": inp + out,
        }
        self._total += inp + out
        self.lines.append(
            {
                "timestamp": self._ts(),
                "type": "token_usage_record",
                "payload": {
                    "thread_id": self.thread_id,
                    "turn_id": "01a23411-5320-7aa2-af8e-983ad6f0550c",
                    "response_id": response_id,
                    "usage": usage,
                    "turn_token_usage": {**usage, "total_tokens": self._total},
                },
            }
        )
        self.line(
            "event_msg",
            {
                "type": "token_count",
                "info": {
                    "total_token_usage": {**usage, "total_tokens": self._total},
                    "last_token_usage": usage,
                    "last_usage_includes_reasoning": True,
                    "model_context_window": 475000,
                },
                "rate_limits": None,
            },
        )

    def data(self) -> bytes:
        return b"".join(orjson.dumps(x) + b"\n" for x in self.lines)

    def write(self, path: Path) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(self.data())
        return path


def basic_rollout() -> Rollout:
    r = Rollout()
    r.meta()
    r.developer("<permissions instructions>approval: on-request</permissions instructions>")
    r.user("<environment_context><cwd>/home/ann/projects/shop</cwd></environment_context>")
    r.turn()
    r.user("Fix the refund rounding bug")
    r.line("event_msg", {"type": "token_count", "info": None, "rate_limits": None})
    r.reasoning("**Inspecting the refund module**")
    r.call(
        "call_A", "shell", command=["bash", "-lc", "pytest -q"], workdir="/home/ann/projects/shop"
    )
    r.call("call_B", "shell_command", command="cat refund.py")
    r.tokens(5200, 4096, 180, twice=True)
    r.output("call_B", "Exit code: 0\nWall time: 0.1 seconds\nOutput:\ndef refund(o): ...")
    r.output(
        "call_A",
        orjson.dumps(
            {"output": "1 failed", "metadata": {"exit_code": 1, "duration_seconds": 2.5}}
        ).decode(),
    )
    r.patch("call_C", "*** Begin Patch\n*** Update File: refund.py\n-x\n+y\n*** End Patch\n")
    r.tokens(5600, 5200, 90)
    r.output(
        "call_C",
        orjson.dumps(
            {
                "output": "Success. Updated the following files:\nM refund.py\n",
                "metadata": {"exit_code": 0, "duration_seconds": 0.0},
            }
        ).decode(),
        custom=True,
    )
    r.say("Fixed the rounding in refund.py.")
    r.tokens(6000, 5600, 40)
    r.line("event_msg", {"type": "task_complete", "turn_id": "1", "last_agent_message": "Fixed"})
    return r


CHILD = "019b64e6-0c41-7a90-b3d2-8e1f4a6c9b07"


def spawning_rollout(*, event: bool = True) -> Rollout:
    """A parent that starts a subagent with ``spawn_agent`` and waits for it."""
    r = Rollout()
    r.meta()
    r.turn()
    r.user("Find where refunds are computed")
    r.call("call_S", "spawn_agent", message="Search the code for refund computations")
    r.tokens(3100, 0, 60)
    if event:
        r.line(
            "event_msg",
            {
                "type": "collab_agent_spawn_end",
                "call_id": "call_S",
                "sender_thread_id": THREAD,
                "new_thread_id": CHILD,
                "new_agent_nickname": "Hume",
                "new_agent_role": "explorer",
                "prompt": "Search the code for refund computations",
                "status": "pending_init",
            },
        )
    r.output("call_S", orjson.dumps({"agent_id": CHILD, "nickname": "Hume"}).decode())
    r.call("call_W", "wait", ids=[CHILD], timeout_ms=30000)
    r.tokens(3300, 3100, 20)
    r.output("call_W", orjson.dumps({"status": {CHILD: {"completed": "In refund.py."}}}).decode())
    r.say("Refunds are computed in refund.py.")
    r.tokens(3400, 3300, 12)
    return r


def subagent_rollout() -> Rollout:
    """The subagent's own rollout: ``source.subagent.thread_spawn`` names the parent."""
    r = Rollout(thread_id=CHILD, start=datetime(2026, 2, 11, 8, 27, 25, tzinfo=UTC))
    spawn = {
        "parent_thread_id": THREAD,
        "depth": 1,
        "agent_path": None,
        "agent_nickname": "Hume",
        "agent_role": "explorer",
    }
    r.meta(source={"subagent": {"thread_spawn": spawn}}, agent_nickname="Hume")
    r.turn("gpt-5.1-codex-mini")
    r.user("Search the code for refund computations")
    r.call("call_G", "shell", command=["rg", "-n", "refund"])
    r.tokens(2100, 0, 30)
    r.output("call_G", "Exit code: 0\nOutput:\nrefund.py:2:def refund(o):")
    r.say("In refund.py.")
    r.tokens(2200, 2100, 8)
    return r


def rollout_name(thread: str, when: str = "2026-02-11T08-27-22") -> str:
    return f"rollout-{when}-{thread}.jsonl"


def codex_0171_rollout() -> Rollout:
    """A rollout as Codex 0.171 writes it: its tools as an ``additional_tools`` item, the
    AGENTS.md and environment notes in a user message of their own, an ``exec_command``
    call, and a ``token_usage_record`` (id, cached, cache-written and reasoning tokens) per
    answer."""
    r = Rollout()
    r.meta(cli_version="0.171.0")
    r.line(
        "response_item",
        {
            "type": "additional_tools",
            "id": "at_01a23411-53a1-7c10-9d2e-1b2c3d4e5f60",
            "role": "developer",
            "tools": [{"type": "namespace", "name": "functions", "description": "", "tools": []}],
        },
    )
    r.developer("You are Codex, an agent based on GPT-6.")
    r.line(
        "response_item",
        {
            "type": "message",
            "role": "user",
            "content": [
                {
                    "type": "input_text",
                    "text": "# AGENTS.md instructions for /w\n\n<INSTRUCTIONS>\nBe brief.\n"
                    "</INSTRUCTIONS>",
                },
                {
                    "type": "input_text",
                    "text": "<environment_context>\n  <cwd>/w</cwd>\n</environment_context>",
                },
            ],
        },
    )
    r.turn("gpt-6.2-sol")
    r.user("Run the tests")
    r.reasoning("I should run the tests.")
    r.call("call_1", "exec_command", cmd="pytest -q")
    r.usage_record("resp_1", 1200, 1000, 50, 40, 25)
    r.output(
        "call_1",
        "Chunk ID: dface1\nWall time: 0.0111 seconds\nProcess exited with code 0\n"
        "Original token count: 4\nOutput:\n3 passed\n",
    )
    r.reasoning("They pass.")
    r.say("All 3 tests pass.")
    r.usage_record("resp_2", 1300, 1150, 0, 30, 10)
    return r
