"""Write cost per event, against its floor: ``orjson.dumps`` + one unbuffered ``write``.

The events are those of the realistic session (bench/realistic_session.py): a tool call, a
3 KB tool result, a model response and a model request (a compact one: the new messages,
the tool result referred to). For each, ``TraceWriter.append`` (what the recorder calls:
make the line, check its depth, look for secrets, write it) and
the floor (``orjson.dumps`` of the same line + ``write`` to a file opened the same way) are
timed in alternating rounds, in CPU time of the thread (the machine is shared: time spent
waiting for a core is not the writer's); the medians and their ratio are printed. With
``--fsync``, both also ``fsync`` every event; with ``--no-redact`` the writer does not look
for secrets in the lines (on by default: see regista.redact).

    python bench/bench_write.py [--rounds 31] [--fsync] [--no-redact]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson

sys.path.insert(0, str(Path(__file__).parent))

from realistic_session import TASK, make_agent

from regista.trace.events import (
    LlmRequestEvent,
    LlmResponseEvent,
    SessionStart,
    ToolCall,
    ToolResult,
)
from regista.trace.reader import Trace
from regista.trace.writer import TraceWriter

PER_ROUND = 200


def sample_events(folder: Path) -> dict[str, tuple[type[Any], dict[str, Any], list[Any]]]:
    """One event of each kind from the middle of a realistic session, as the loop writes
    them: (class, fields, the events that must come before it for its compact form)."""
    trace = Trace.load(make_agent(folder, calls=40).run_sync(TASK).trace_path)

    def fields(ev: Any) -> dict[str, Any]:
        return {k: v for k, v in ev.model_dump().items() if k not in ("session_id", "seq")}

    request = [ev for ev in trace.events if isinstance(ev, LlmRequestEvent)][20]
    before = [ev for ev in trace.events[1 : request.seq] if not isinstance(ev, LlmRequestEvent)]
    previous = [ev for ev in trace.events[1 : request.seq] if isinstance(ev, LlmRequestEvent)]
    result = next(ev for ev in trace.events[request.seq :: -1] if isinstance(ev, ToolResult))
    call = next(ev for ev in trace.events[request.seq :: -1] if isinstance(ev, ToolCall))
    response = next(ev for ev in trace.events[request.seq :] if isinstance(ev, LlmResponseEvent))
    return {
        "tool.call": (ToolCall, fields(call), []),
        f"tool.result ({len(str(result.content)) / 1024:.1f} KB)": (ToolResult, fields(result), []),
        "llm.response": (LlmResponseEvent, fields(response), []),
        "llm.request": (LlmRequestEvent, fields(request), [*previous[-1:], *before[-3:]]),
    }


def time_writer(w: TraceWriter, cls: type[Any], f: dict[str, Any], n: int) -> float:
    t0 = time.thread_time()
    for _ in range(n):
        w.append(cls, f)
    return (time.thread_time() - t0) / n * 1e6


def time_floor(file: Any, data: dict[str, Any], n: int, fsync: bool) -> float:
    t0 = time.thread_time()
    for _ in range(n):
        file.write(orjson.dumps(data) + b"\n")
        if fsync:
            os.fsync(file.fileno())
    return (time.thread_time() - t0) / n * 1e6


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=31)
    parser.add_argument("--fsync", action="store_true")
    parser.add_argument(
        "--no-redact", action="store_true", help="the writer without secret redaction"
    )
    args = parser.parse_args(argv)
    n = PER_ROUND // 10 if args.fsync else PER_ROUND
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        events = sample_events(folder / "session")
        print(f"{'event':<22} {'writer':>9} {'floor':>9} {'ratio':>6}   (medians of {args.rounds})")
        for name, (cls, f, before) in events.items():
            path = folder / f"{cls.__name__}.jsonl"
            with TraceWriter(path, "S1", fsync=args.fsync, redact=not args.no_redact) as w:
                w.write(SessionStart, task="bench", model="m", provider="scripted")
                for ev in before:  # what the compact form refers to
                    w.write(type(ev), **{k: v for k, v in ev.model_dump().items()
                                         if k not in ("session_id", "seq")})  # fmt: skip
                w.write(cls, **f)
                last = path.read_bytes().splitlines()[-1]
                data = orjson.loads(last)  # the very line the writer writes
                writer_us: list[float] = []
                floor_us: list[float] = []
                with open(folder / "floor.jsonl", "ab", buffering=0) as floor_file:
                    for _ in range(args.rounds):
                        writer_us.append(time_writer(w, cls, f, n))
                        floor_us.append(time_floor(floor_file, data, n, args.fsync))
            wm, fm = statistics.median(writer_us), statistics.median(floor_us)
            print(f"{name:<22} {wm:>6.1f} µs {fm:>6.1f} µs {wm / fm:>5.2f}×")
        print("target: ≤ 2× the floor")


if __name__ == "__main__":
    main()
