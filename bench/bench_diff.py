"""Benchmark ``diff_runs`` on two long runs with a few scattered differences.

Builds two 10,000-step traces by writing their events directly with ``TraceWriter`` (running
the agent loop for 5,000 turns would spend its time re-hashing ever-growing requests), with
valid request hashes and deltas exactly as the loop writes them. Run B differs from run A by
a changed tool result, a changed model answer, an extra turn (insert) and a missing turn
(delete). Prints, as CPU-time medians of rounds interleaved with the floor (``orjson.loads``
of every line of both files): ``diff_runs`` of the two paths (reading included), and
``Trace.load`` of both followed by ``diff_runs``; then the peak RSS of each in a fresh
interpreter.

    .venv/bin/python bench/bench_diff.py [--steps 10000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import hashlib
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from regista.diff import diff_runs
from regista.trace.canonical import canonical_json
from regista.trace.events import (
    LlmRequestEvent,
    LlmResponseEvent,
    PermissionDecision,
    SessionEnd,
    SessionStart,
    ToolCall,
    ToolResult,
)
from regista.trace.reader import Trace
from regista.trace.writer import TraceWriter

TOOLS = [
    {
        "name": "search",
        "description": "Search the knowledge base.",
        "input_schema": {
            "type": "object",
            "properties": {"query": {"type": "string"}},
            "required": ["query"],
        },
    }
]
SYSTEM = "You are a careful research assistant. Search, then answer."


@dataclass
class Turn:
    """One model call and the tool calls it makes (none for the final answer)."""

    text: str
    calls: list[tuple[str, dict[str, Any], str]] = field(default_factory=list)


def script(turns: int) -> list[Turn]:
    out = [
        Turn(f"Looking up part {i} of the question.", [("search", {"query": f"topic {i}"}, f"{i}")])
        for i in range(turns - 1)
    ]
    return [*out, Turn("Here is the answer.")]


class _RequestHasher:
    """request_hash of a growing conversation without re-serialising its history.

    The canonical JSON has sorted keys, so ``"messages":[…]`` comes right after
    ``max_tokens``: the hasher state over the head and the messages so far is kept and
    copied for each request.
    """

    def __init__(self, model: str) -> None:
        empty = canonical_json(
            {
                "model": model,
                "system": SYSTEM,
                "messages": [],
                "tools": TOOLS,
                "tool_choice": None,
                "max_tokens": 1024,
                "params": {},
            }
        )
        head, tail = empty.split(b'"messages":[]', 1)
        self._state = hashlib.sha256(head + b'"messages":[')
        self._tail = b"]" + tail
        self._count = 0

    def add(self, message: dict[str, Any]) -> None:
        self._state.update((b"," if self._count else b"") + canonical_json(message))
        self._count += 1

    def digest(self) -> str:
        h = self._state.copy()
        h.update(self._tail)
        return h.hexdigest()


def write_trace(path: Path, turns: list[Turn], session_id: str) -> int:
    """Write a session with one model step per turn and one tool step per call."""
    clock = iter(range(10**9))

    def ts() -> str:
        n = next(clock)
        return f"2026-01-01T00:{n // 60000 % 60:02d}:{n // 1000 % 60:02d}.{n % 1000:03d}Z"

    model = "claude-sonnet-4-6"
    hasher = _RequestHasher(model)
    step = 0
    with TraceWriter(path, session_id, clock=ts) as w:
        task = {"role": "user", "content": [{"type": "text", "text": "Research the topic."}]}
        w.write(
            SessionStart,
            task="Research the topic.",
            instructions=SYSTEM,
            model=model,
            provider="scripted",
            tools=TOOLS,
            max_turns=len(turns),
            max_tokens=1024,
        )
        new: list[dict[str, Any]] = [task]
        prefix = 0
        for turn_no, turn in enumerate(turns):
            for m in new:
                hasher.add(m)
            w.write(
                LlmRequestEvent,
                step=step,
                turn=turn_no,
                request_hash=hasher.digest(),
                model=model,
                system=SYSTEM,
                tools=TOOLS,
                max_tokens=1024,
                messages_prefix=prefix,
                messages=new,
            )
            prefix += len(new)
            content: list[dict[str, Any]] = [{"type": "text", "text": turn.text}]
            ids = [f"toolu_{session_id[-6:]}_{step}_{i}" for i in range(len(turn.calls))]
            for tid, (name, args, _) in zip(ids, turn.calls, strict=True):
                content.append({"type": "tool_use", "id": tid, "name": name, "input": args})
            response = {
                "id": f"msg_{step}",
                "model": "scripted",
                "role": "assistant",
                "content": content,
                "stop_reason": "tool_use" if turn.calls else "end_turn",
                "stop_sequence": None,
                "usage": {"input_tokens": 10, "output_tokens": 5},
            }
            w.write(
                LlmResponseEvent,
                step=step,
                turn=turn_no,
                response=response,
                provider="scripted",
                cost_usd=0.0,
            )
            step += 1
            results = []
            for tid, (name, args, result) in zip(ids, turn.calls, strict=True):
                w.write(ToolCall, step=step, turn=turn_no, tool_use_id=tid, name=name, input=args)
                w.write(PermissionDecision, step=step, tool_use_id=tid, allowed=True, by="default")
                w.write(ToolResult, step=step, tool_use_id=tid, name=name, content=result)
                results.append({"type": "tool_result", "tool_use_id": tid, "content": result})
                step += 1
            new = [{"role": "assistant", "content": content}]
            if results:
                new.append({"role": "user", "content": results})
        w.write(
            SessionEnd,
            stop_reason="end_turn",
            output=turns[-1].text,
            turns=len(turns),
            steps=step,
            tool_calls=step - len(turns),
            cost_usd=0.0,
        )
    return step


def build_pair(folder: Path, steps: int) -> tuple[Path, Path]:
    turns = steps // 2
    a = script(turns)
    b = [Turn(t.text, list(t.calls)) for t in a]
    q = turns // 5
    name, args, _ = b[q].calls[0]
    b[q].calls[0] = (name, args, "a different result")  # changed tool result
    b[2 * q].text = "Looking at this from another angle."  # changed model answer
    b.insert(3 * q, Turn("One more search first.", [("search", {"query": "extra"}, "x")]))
    del b[4 * q]  # a missing turn
    pa, pb = folder / "a.jsonl", folder / "b.jsonl"
    write_trace(pa, a, "01JBENCHAAAAAAAAAAAAAAAAAA")
    write_trace(pb, b, "01JBENCHBBBBBBBBBBBBBBBBBB")
    return pa, pb


def _floor(paths: tuple[Path, Path]) -> None:
    for path in paths:
        [orjson.loads(line) for line in path.read_bytes().split(b"\n")[:-1]]


def _cpu(fn: Callable[[], object]) -> float:
    c0 = time.process_time()
    fn()
    return time.process_time() - c0


def _peak_rss(code: str) -> float:
    """Peak RSS (MB) of a fresh interpreter running ``code``."""
    # VmHWM, not ru_maxrss: Linux keeps the forking parent's ru_maxrss across exec.
    hwm = "print(next(x for x in open('/proc/self/status') if x.startswith('VmHWM')).split()[1])"
    out = subprocess.run([sys.executable, "-c", f"{code}\n{hwm}"], capture_output=True, text=True)
    out.check_returncode()
    return int(out.stdout.split()[-1]) / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        pa, pb = build_pair(Path(tmp), args.steps)
        d = diff_runs(pa, pb)
        first = d.first_divergence
        where = f"A {first.a_step} / B {first.b_step} {first.label}" if first else "none"
        print(f"counts {dict((k, v) for k, v in d.counts.items() if v)}; first divergence: {where}")
        floor, paths, loaded = [], [], []
        for _ in range(args.repeat):  # interleaved, CPU time
            floor.append(_cpu(lambda: _floor((pa, pb))))
            paths.append(_cpu(lambda: diff_runs(pa, pb)))
            loaded.append(_cpu(lambda: diff_runs(Trace.load(pa), Trace.load(pb))))
        f = statistics.median(floor)
        for name, xs in (("diff_runs(path, path)", paths), ("load both + diff_runs", loaded)):
            m = statistics.median(xs)
            print(f"{name}: {m:.3f} s CPU = {m / f:.2f}x the floor (orjson.loads: {f:.3f} s)")
        sys_path = f"import sys; sys.path[:0] = {sys.path!r}"
        imports = "from regista.diff import diff_runs\nfrom regista.trace.reader import Trace"
        head = f"{sys_path}\n{imports}"
        files = f"{head}\ndiff_runs({str(pa)!r}, {str(pb)!r})"
        whole = f"{head}\ndiff_runs(Trace.load({str(pa)!r}), Trace.load({str(pb)!r}))"
        base = f"{sys_path}\nimport regista.diff.runs"
        print(
            f"peak RSS: interpreter + imports {_peak_rss(base):.0f} MB; diff_runs(path, path) "
            f"{_peak_rss(files):.0f} MB; load both + diff {_peak_rss(whole):.0f} MB"
        )


if __name__ == "__main__":
    main()
