"""Claude Code transcripts made by code, shaped like the files Claude Code writes.

Each assistant response is written one content block per line, the lines sharing
``message.id`` and repeating the usage, as Claude Code does; tool results come back as
``user`` lines with ``toolUseResult``; bookkeeping lines (``file-history-snapshot``,
``progress``, ``queue-operation``, ``summary``) are mixed in.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson

SESSION = "4f1c2a9e-8d3b-4e6f-a1b2-c3d4e5f60718"


@dataclass
class CCSession:
    """Writes one Claude Code thread (a session, or a subagent with ``agent_id``)."""

    session_id: str = SESSION
    agent_id: str | None = None
    sidechain: bool = False
    version: str = "2.1.39"
    model: str = "claude-sonnet-4-5-20250929"
    cwd: str = "/home/ann/projects/shop"
    branch: str = "main"
    start: datetime = field(default_factory=lambda: datetime(2026, 3, 2, 9, 15, tzinfo=UTC))
    lines: list[dict[str, Any]] = field(default_factory=list)
    _n: int = 0
    _parent: str | None = None
    _msg: int = 0

    def _ts(self) -> str:
        self._n += 1
        t = self.start + timedelta(milliseconds=737 * self._n)
        return t.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"

    def _uuid(self) -> str:
        return str(uuid.uuid5(uuid.NAMESPACE_URL, f"{self.session_id}/{self.agent_id}/{self._n}"))

    def _envelope(self, kind: str, **fields: Any) -> dict[str, Any]:
        line: dict[str, Any] = {
            "parentUuid": self._parent,
            "isSidechain": self.sidechain,
            "userType": "external",
            "cwd": self.cwd,
            "sessionId": self.session_id,
            "version": self.version,
            "gitBranch": self.branch,
        }
        if self.agent_id:
            line["agentId"] = self.agent_id
        line["type"] = kind
        line.update(fields)
        line["uuid"] = self._uuid()
        line["timestamp"] = self._ts()
        self._parent = line["uuid"]
        self.lines.append(line)
        return line

    def raw(self, line: dict[str, Any]) -> None:
        self.lines.append(line)

    def prompt(self, text: str, **extra: Any) -> dict[str, Any]:
        return self._envelope(
            "user",
            message={"role": "user", "content": text},
            thinkingMetadata={"maxThinkingTokens": 31999},
            permissionMode="default",
            **extra,
        )

    def meta(self, text: str) -> dict[str, Any]:
        return self._envelope("user", isMeta=True, message={"role": "user", "content": text})

    def answer(
        self,
        *blocks: dict[str, Any],
        usage: dict[str, Any] | None = None,
        stop_reason: str | None = None,
        model: str | None = None,
    ) -> str:
        """One API response written as one line per block; returns its ``msg_`` id."""
        self._msg += 1
        mid = f"msg_01{uuid.uuid5(uuid.NAMESPACE_DNS, f'{self.agent_id}{self._msg}').hex[:22]}"
        usage = usage or {
            "input_tokens": 3,
            "cache_creation_input_tokens": 1204,
            "cache_read_input_tokens": 15120,
            "output_tokens": 87 + 10 * self._msg,
            "service_tier": "standard",
        }
        for i, block in enumerate(blocks):
            last = i == len(blocks) - 1
            self._envelope(
                "assistant",
                message={
                    "model": model or self.model,
                    "id": mid,
                    "type": "message",
                    "role": "assistant",
                    "content": [block],
                    "stop_reason": stop_reason if last else None,
                    "stop_sequence": None,
                    "usage": usage,
                },
                requestId=f"req_011C{mid[-12:]}",
            )
        return mid

    def tool_result(
        self, tool_use_id: str, content: Any, *, is_error: bool = False, result: Any = None
    ) -> dict[str, Any]:
        block: dict[str, Any] = {"tool_use_id": tool_use_id, "type": "tool_result"}
        block["content"] = content
        if is_error:
            block["is_error"] = True
        return self._envelope(
            "user",
            message={"role": "user", "content": [block]},
            toolUseResult=result if result is not None else {"stdout": content, "stderr": ""},
        )

    def progress(self, tool_use_id: str) -> None:
        self._envelope(
            "progress",
            data={"type": "hook_progress", "hookEvent": "PostToolUse"},
            toolUseID=tool_use_id,
            parentToolUseID=tool_use_id,
        )

    def snapshot(self) -> None:
        self.lines.append(
            {
                "type": "file-history-snapshot",
                "messageId": self._parent or "",
                "snapshot": {"messageId": self._parent, "trackedFileBackups": {}},
                "isSnapshotUpdate": False,
            }
        )

    def compact(self, summary: str, pre_tokens: int = 170251) -> dict[str, Any]:
        leaf = self._parent
        self._parent = None
        boundary = self._envelope(
            "system",
            subtype="compact_boundary",
            content="Conversation compacted",
            isMeta=False,
            level="info",
            logicalParentUuid=leaf,
            compactMetadata={"trigger": "auto", "preTokens": pre_tokens},
        )
        self._envelope(
            "user",
            isCompactSummary=True,
            isVisibleInTranscriptOnly=True,
            message={"role": "user", "content": summary},
        )
        return boundary

    def data(self) -> bytes:
        return b"".join(orjson.dumps(line) + b"\n" for line in self.lines)

    def write(self, path: Path) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(self.data())
        return path


def inline_subagent(
    s: CCSession, prompt: str, answer: str, *, start: int, agent_id: str | None = None
) -> None:
    """An inline subagent's lines (its prompt and one answer) written into ``s``'s file;
    ``start`` numbers its lines apart from the session's."""
    child = CCSession(sidechain=True, agent_id=agent_id)
    child._n = start
    child.prompt(prompt)
    child.answer(text(answer))
    s.lines.extend(child.lines)


def text(t: str) -> dict[str, Any]:
    return {"type": "text", "text": t}


def thinking(t: str) -> dict[str, Any]:
    return {"type": "thinking", "thinking": t, "signature": "EqQBCkYIBxgCKkD" + "x" * 40}


def tool_use(tid: str, name: str, **inp: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": tid, "name": name, "input": inp}


def basic_session() -> CCSession:
    """A prompt, a split answer with thinking and two parallel tool calls (one failing),
    bookkeeping lines, and a final answer."""
    s = CCSession()
    s.raw({"type": "summary", "summary": "Fix the failing refund test", "leafUuid": "x"})
    s.snapshot()
    s.prompt("The refund test fails. Can you fix it?")
    s.answer(
        thinking("Let me look at the test first."),
        text("I'll run the tests and read the module."),
        tool_use("toolu_01A", "Bash", command="pytest -q tests/test_refund.py"),
        tool_use("toolu_01B", "Read", file_path="/home/ann/projects/shop/refund.py"),
    )
    s.progress("toolu_01A")
    s.tool_result(
        "toolu_01B",
        "     1→def refund(order):\n     2→    return order.total * 1.1\n",
        result={"type": "text", "file": {"filePath": "refund.py", "numLines": 2}},
    )
    s.tool_result(
        "toolu_01A", "Exit code 1\nFAILED tests/test_refund.py::test_total", is_error=True
    )
    s.raw(
        {
            "type": "queue-operation",
            "operation": "enqueue",
            "timestamp": s._ts(),
            "sessionId": s.session_id,
            "content": "also check the docs",
        }
    )
    s.answer(
        tool_use("toolu_01C", "Edit", file_path="refund.py", old_string="* 1.1", new_string=""),
    )
    s.tool_result("toolu_01C", "The file refund.py has been updated.")
    s.answer(text("Fixed: the refund no longer adds 10%."), stop_reason="end_turn")
    s.lines[0]["leafUuid"] = s.lines[-1]["uuid"]  # the summary names the session's last message
    return s


def session_with_subagent(root: Path, model: str = "claude-haiku-4-5-20251001") -> Path:
    """A session whose Task call started an Explore subagent (its transcript beside it)."""
    prompt = "Search the code for refund computations"
    s = CCSession()
    s.prompt("Find where refunds are computed")
    s.answer(tool_use("toolu_T1", "Task", description="search", prompt=prompt))
    s.tool_result(
        "toolu_T1",
        [text("In refund.py.")],
        result={"status": "completed", "agentId": "a1b2c3d4", "content": [text("In refund.py.")]},
    )
    s.answer(text("It is in refund.py."))
    path = s.write(root / f"{s.session_id}.jsonl")
    c = CCSession(agent_id="a1b2c3d4", sidechain=True, model=model)
    c.prompt(prompt)
    c.answer(tool_use("toolu_C1", "Grep", pattern="refund"))
    c.tool_result("toolu_C1", "refund.py:2")
    c.answer(text("In refund.py."))
    sub = path.parent / path.stem / "subagents"
    c.write(sub / "agent-a1b2c3d4.jsonl")
    (sub / "agent-a1b2c3d4.meta.json").write_bytes(orjson.dumps({"agentType": "Explore"}))
    return path
