"""A Claude Code transcript shaped like real ones, of any size, for the import benches.

What makes real transcripts slower to import than the first bench's (which repeated ten
words and numbered its ids): every line has its own random ``uuid``, every API response its
own ``msg_`` / ``req_`` ids and thinking signature, tool ids are random, and most bytes are
long tool results (file contents, command output) made of many distinct identifiers, each
written twice (the ``tool_result`` block and ``toolUseResult``). ``progress`` lines (streamed
command output, hook runs) are most of the lines, as in real 2.1 transcripts, and
``file-history-snapshot`` lines list tracked files.

    from realistic_cc import write_transcript
    write_transcript(path, mb=50, seed=7)
"""

from __future__ import annotations

import random
import string
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson

_B62 = string.ascii_letters + string.digits
_KEYWORDS = [
    "def",
    "return",
    "if",
    "else",
    "for",
    "in",
    "import",
    "from",
    "class",
    "self",
    "None",
    "True",
    "await",
    "async",
    "with",
    "as",
    "raise",
    "try",
    "except",
    "const",
    "let",
    "function",
    "=>",
    "=",
    "==",
    "+",
    "(",
    ")",
    ":",
    "{",
    "}",
]


class _Gen:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        r = self.rng
        # identifiers of a code base: a few thousand, used with a long tail
        self.idents = [
            "_".join(
                "".join(r.choice(string.ascii_lowercase) for _ in range(r.randint(3, 9)))
                for _ in range(r.randint(1, 3))
            )
            for _ in range(6000)
        ]
        self.files = [
            f"/home/ann/src/shop/{r.choice(['api', 'core', 'web', 'tests', 'lib'])}/"
            f"{r.choice(self.idents)}.{r.choice(['py', 'ts', 'tsx', 'md', 'json'])}"
            for _ in range(400)
        ]
        self.words = [w for w in self.idents if "_" not in w][:1500]
        self.t = datetime(2026, 3, 2, 9, 15, tzinfo=UTC)
        self.parent: str | None = None

    def uuid(self) -> str:
        h = f"{self.rng.getrandbits(128):032x}"
        return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-a{h[17:20]}-{h[20:]}"

    def b62(self, n: int) -> str:
        return "".join(self.rng.choices(_B62, k=n))

    def ts(self) -> str:
        self.t += timedelta(milliseconds=self.rng.randint(5, 4000))
        return self.t.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"

    def ident(self) -> str:
        # a long tail: most identifiers are rare
        return self.idents[int(len(self.idents) * self.rng.random() ** 2.5)]

    def code_line(self) -> str:
        r = self.rng
        parts = []
        for _ in range(r.randint(2, 12)):
            parts.append(self.ident() if r.random() < 0.6 else r.choice(_KEYWORDS))
        if r.random() < 0.15:
            parts.append(f'"{self.sentence(r.randint(2, 8))}"')
        return " " * (4 * r.randint(0, 3)) + " ".join(parts)

    def sentence(self, n: int) -> str:
        return " ".join(self.rng.choice(self.words) for _ in range(n))

    def file_body(self) -> str:
        n = int(min(2000, self.rng.lognormvariate(4.6, 1.0)))
        return "\n".join(f"{i:>6}→{self.code_line()}" for i in range(1, n + 1))

    def command_output(self) -> str:
        n = int(min(1500, self.rng.lognormvariate(3.2, 1.3)))
        return "\n".join(
            f"{self.rng.choice(self.files)}:{self.rng.randint(1, 900)}: {self.code_line()}"
            for _ in range(n)
        )


def _envelope(g: _Gen, sid: str, kind: str, **fields: Any) -> dict[str, Any]:
    line: dict[str, Any] = {
        "parentUuid": g.parent,
        "isSidechain": False,
        "userType": "external",
        "cwd": "/home/ann/src/shop",
        "sessionId": sid,
        "version": "2.1.39",
        "gitBranch": "main",
        "slug": "sleepy-refund-otter",
        "type": kind,
    }
    line.update(fields)
    line["uuid"] = g.uuid()
    line["timestamp"] = g.ts()
    g.parent = line["uuid"]
    return line


def _answer(g: _Gen, sid: str, blocks: list[dict[str, Any]], stop: str | None) -> list[bytes]:
    mid = f"msg_01{g.b62(22)}"
    req = f"req_011C{g.b62(20)}"
    r = g.rng
    usage = {
        "input_tokens": r.randint(1, 12),
        "cache_creation_input_tokens": r.randint(0, 9000),
        "cache_read_input_tokens": r.randint(10_000, 160_000),
        "cache_creation": {
            "ephemeral_5m_input_tokens": 0,
            "ephemeral_1h_input_tokens": r.randint(0, 9000),
        },
        "output_tokens": r.randint(20, 2000),
        "service_tier": "standard",
    }
    out = []
    for i, block in enumerate(blocks):
        out.append(
            orjson.dumps(
                _envelope(
                    g,
                    sid,
                    "assistant",
                    message={
                        "model": "claude-opus-4-6",
                        "id": mid,
                        "type": "message",
                        "role": "assistant",
                        "content": [block],
                        "stop_reason": stop if i == len(blocks) - 1 else None,
                        "stop_sequence": None,
                        "usage": usage,
                    },
                    requestId=req,
                )
            )
        )
    return out


def _tool_exchange(g: _Gen, sid: str) -> list[bytes]:
    r = g.rng
    tid = f"toolu_01{g.b62(22)}"
    kind = r.choices(["Read", "Bash", "Grep", "Edit"], weights=[5, 3, 2, 2])[0]
    path = r.choice(g.files)
    blocks: list[dict[str, Any]] = []
    if r.random() < 0.5:
        blocks.append(
            {
                "type": "thinking",
                "thinking": g.sentence(r.randint(10, 150)),
                "signature": g.b62(r.randint(300, 1500)),
            }
        )
    if r.random() < 0.6:
        blocks.append({"type": "text", "text": g.sentence(r.randint(5, 40))})
    result: Any
    if kind == "Read":
        inp: dict[str, Any] = {"file_path": path}
        body = g.file_body()
        result = {
            "type": "text",
            "file": {
                "filePath": path,
                "content": body,
                "numLines": body.count("\n") + 1,
                "startLine": 1,
                "totalLines": body.count("\n") + 1,
            },
        }
    elif kind in ("Bash", "Grep"):
        inp = (
            {"command": f"rg -n {g.ident()} src/", "description": g.sentence(5)}
            if kind == "Bash"
            else {"pattern": g.ident(), "path": "src", "output_mode": "content"}
        )
        body = g.command_output()
        result = {"stdout": body, "stderr": "", "interrupted": False, "isImage": False}
    else:
        old, new = g.code_line(), g.code_line()
        inp = {"file_path": path, "old_string": old, "new_string": new}
        body = f"The file {path} has been updated. Here's the result of running `cat -n`:\n"
        body += "\n".join(f"{i:>6}→{g.code_line()}" for i in range(r.randint(5, 30)))
        result = {"filePath": path, "oldString": old, "newString": new, "userModified": False}
    blocks.append({"type": "tool_use", "id": tid, "name": kind, "input": inp})
    out = _answer(g, sid, blocks, "tool_use")
    # hooks before and after every call, and streamed output of commands: about 70 % of
    # a real transcript's lines
    progress: list[dict[str, Any]] = [
        {"type": "hook_progress", "hookEvent": event, "hookName": f"{event}:{kind}", "command": h}
        for event in ("PreToolUse", "PostToolUse")
        for h in ("~/.claude/hooks/log.sh", "npx lint-staged")
    ]
    if kind == "Bash":
        progress += [
            {
                "type": "bash_progress",
                "output": g.command_output()[:600],
                "fullOutput": g.command_output()[:1200],
                "elapsedTimeSeconds": k + 1,
                "totalLines": 40 + k,
            }
            for k in range(r.randint(1, 8))
        ]
    for data in progress:
        out.append(
            orjson.dumps(
                _envelope(g, sid, "progress", data=data, toolUseID=tid, parentToolUseID=tid)
            )
        )
    out.append(
        orjson.dumps(
            _envelope(
                g,
                sid,
                "user",
                message={
                    "role": "user",
                    "content": [{"tool_use_id": tid, "type": "tool_result", "content": body}],
                },
                toolUseResult=result,
            )
        )
    )
    return out


def _lines(g: _Gen, sid: str, target: int) -> Iterator[bytes]:
    """Lines of about ``target`` bytes in all."""
    size = 0
    n = 0
    while size < target:
        batch: list[bytes] = []
        if n % 30 == 0:
            # people name things the code does not (a ticket, a customer, a colleague)
            named = "".join(g.rng.choices(string.ascii_lowercase, k=10))
            prompt = f"{g.sentence(g.rng.randint(5, 60))} {named}"
            batch.append(
                orjson.dumps(
                    _envelope(
                        g,
                        sid,
                        "user",
                        message={"role": "user", "content": prompt},
                        permissionMode="default",
                    )
                )
            )
        batch += _tool_exchange(g, sid)
        if n % 9 == 0:
            backups = {
                f: {"backupFileName": f"{g.b62(16)}@v2", "version": 2, "backupTime": g.ts()}
                for f in g.rng.sample(g.files, g.rng.randint(1, 8))
            }
            snapshot = {"messageId": g.parent, "trackedFileBackups": backups, "timestamp": g.ts()}
            batch.append(
                orjson.dumps(
                    {
                        "type": "file-history-snapshot",
                        "messageId": g.parent,
                        "snapshot": snapshot,
                        "isSnapshotUpdate": False,
                    }
                )
            )
        n += 1
        for line in batch:
            size += len(line) + 1
            yield line
    yield from _answer(g, sid, [{"type": "text", "text": g.sentence(30)}], "end_turn")


def transcript_lines(mb: float, seed: int = 7) -> list[bytes]:
    """The lines of a transcript of about ``mb`` MB."""
    g = _Gen(seed)
    return list(_lines(g, g.uuid(), int(mb * 1_000_000)))


def write_transcript(path: Path, mb: float, seed: int = 7) -> Path:
    """Write a transcript of about ``mb`` MB to ``path`` (kept when it is already there)."""
    return write_lines(path, mb, seed, _lines)


def write_lines(
    path: Path, mb: float, seed: int, lines: Callable[[_Gen, str, int], Iterator[bytes]]
) -> Path:
    """Write the ``lines`` of a file of about ``mb`` MB to ``path`` (kept when it is already
    there); written as they are made, so a 1 GB file needs no 1 GB of lines in memory."""
    if path.is_file():
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    g = _Gen(seed)
    with open(tmp, "wb") as f:
        for line in lines(g, g.uuid(), int(mb * 1_000_000)):
            f.write(line + b"\n")
    tmp.rename(path)
    return path
