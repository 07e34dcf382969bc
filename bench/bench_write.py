"""Write cost per event, against its floor: ``orjson.dumps`` + one unbuffered ``write``.

The events are those of the realistic session (bench/realistic_session.py): a tool call, a
3 KB tool result, a model response and a model request (a compact one: the new messages,
the tool result referred to). For each, ``TraceWriter.append`` (what the recorder calls,
with the fields the recorder gives: make the line, stamp its time, check its depth, look
for secrets, write it) and the floor (``orjson.dumps`` of the same line + ``write`` to a
file opened the same way) are timed in alternating rounds, in CPU time of the thread (the
machine is shared: time spent waiting for a core is not the writer's), for a writer that
redacts secrets (the default: see regista.redact) and one that does not; the medians and
their ratios to the floor are printed. With ``--fsync``, all of them also ``fsync`` every
event.

Each request is given as the agent loop gives it (``regista.loop``): the same system prompt
and ``tools`` list as the request before (the loop passes the last list again while it
holds the same schemas), a new ``params`` dict, a new list of the new messages, and each
tool result the very object its ``tool.result`` line was written with.

Events written in a tight loop mostly share a millisecond, whose time stamp the writer makes
once; in a session, events are milliseconds to seconds apart, and each formats its time stamp
plainly (``time.gmtime`` and one ``%`` format: about 1.4 µs more than the rows above). Tables
of each minute's and day's text once saved most of that: 2.6 µs against 4.0 µs for a tool call
1 ms or 2 s after the one before (2.1× against 3.1× the floor), a millionth of the model call
of seconds that an event follows, which no one can feel, so they went. The last rows write the tool
call again as if each came 1 ms, then 2 s, after the one before (the writer's clock is made
to advance so: ``itertools.count(...).__next__``, a C call like ``time.time_ns``).

A second floor is the issue's words taken literally: ``orjson.dumps`` + ``write`` to a
buffered file + ``flush``. It does a Python call more than the writer needs (the writer's
file is unbuffered: one ``write`` is one system call), so the ratios are given against the
first, stricter floor; the second is printed to compare with it.

A model request is written compact (its system prompt and tools only when they change, a
tool result already in the trace by its ``tool_use_id``): its line is a fraction of the
event the recorder gives. The last column is the literal floor for that event as given,
each field whole, as a writer that does not compact would write it (the floor the issue's
figures were measured on, when requests were written whole); for the other events the line
is the event, and the column repeats the one before.

    python bench/bench_write.py [--rounds 31] [--fsync]
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

sys.path.insert(0, str(Path(__file__).parent))

from realistic_session import TASK, make_agent

from regista.trace import writer as writer_module
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

    def fields(ev: Any) -> dict[str, Any]:  # as the recorder passes them: no envelope
        return {k: v for k, v in ev.model_dump().items() if k not in _ENVELOPE}

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


def as_sent(cls: type[Any], f: dict[str, Any], n: int) -> list[dict[str, Any]]:
    """``n`` times the fields of an event as the loop makes them for each call: a request's
    ``params`` and ``messages`` are new containers around the same values."""
    if cls is not LlmRequestEvent:
        return [f] * n
    return [{**f, "params": dict(f["params"]), "messages": list(f["messages"])} for _ in range(n)]


def time_writer(w: TraceWriter, cls: type[Any], f: dict[str, Any], n: int) -> float:
    sent = as_sent(cls, f, n)
    t0 = time.thread_time()
    for fields in sent:
        w.append(cls, fields)
    return (time.thread_time() - t0) / n * 1e6


def time_floor(file: Any, data: dict[str, Any], n: int, fsync: bool) -> float:
    t0 = time.thread_time()
    for _ in range(n):
        file.write(orjson.dumps(data) + b"\n")
        if fsync:
            os.fsync(file.fileno())
    return (time.thread_time() - t0) / n * 1e6


def time_flushed(file: Any, data: dict[str, Any], n: int, fsync: bool) -> float:
    """The floor as the issue words it: dumps, write to a buffered file, flush."""
    t0 = time.thread_time()
    for _ in range(n):
        file.write(orjson.dumps(data) + b"\n")
        file.flush()
        if fsync:
            os.fsync(file.fileno())
    return (time.thread_time() - t0) / n * 1e6


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=31)
    parser.add_argument("--fsync", action="store_true")
    args = parser.parse_args(argv)
    n = PER_ROUND // 10 if args.fsync else PER_ROUND
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        events = sample_events(folder / "session")
        print(
            f"{'event':<22} {'redacting':>16} {'not redacting':>16} {'floor':>9}"
            f" {'write+flush':>11} {'redacting vs it':>15} {'vs it, whole':>12}"
            f"   (medians of {args.rounds})"
        )
        rows = [(name, *event, 0) for name, event in events.items()]
        rows += [(f"tool.call, {gap} apart", *events["tool.call"], ns) for gap, ns in _APART]
        for name, cls, f, before, apart in rows:
            writers = [_writer(folder / f"{cls.__name__}-{r}-{apart}.jsonl", r, args.fsync, before)
                       for r in (True, False)]  # fmt: skip
            for w in writers:
                w.write(cls, **f)
            data = orjson.loads(writers[0].path.read_bytes().splitlines()[-1])  # its line
            whole = {k: data[k] for k in _ENVELOPE} | f  # the event as given, uncompacted
            times: list[list[float]] = [[], [], [], [], []]
            with (
                open(folder / "floor.jsonl", "ab", buffering=0) as floor_file,
                open(folder / "flushed.jsonl", "ab") as flushed_file,
            ):
                for _ in range(args.rounds):
                    with _clock(apart):
                        times[0].append(time_writer(writers[0], cls, f, n))
                        times[1].append(time_writer(writers[1], cls, f, n))
                    times[2].append(time_floor(floor_file, data, n, args.fsync))
                    times[3].append(time_flushed(flushed_file, data, n, args.fsync))
                    if cls is LlmRequestEvent:
                        times[4].append(time_flushed(flushed_file, whole, n, args.fsync))
            for w in writers:
                w.close()
            red, plain, floor, flushed = (statistics.median(t) for t in times[:4])
            flushed_whole = statistics.median(times[4]) if times[4] else flushed
            print(
                f"{name:<22} {red:>5.1f} µs {red / floor:>5.2f}×  {plain:>5.1f} µs "
                f"{plain / floor:>5.2f}×  {floor:>5.1f} µs {flushed:>8.1f} µs "
                f"{red / flushed:>14.2f}× {red / flushed_whole:>11.2f}×"
            )
        print(
            "target: ≤ 2× the floor for events that share a millisecond (the ratios are "
            "against the first floor); events apart add their time stamp, ~1.4 µs"
        )


@contextlib.contextmanager
def _clock(apart: int) -> Iterator[None]:
    """The writer's clock advances ``apart`` ns at each reading (``0``: the real clock)."""
    if not apart:
        yield
        return
    real = writer_module.time_ns
    writer_module.time_ns = itertools.count(time.time_ns(), apart).__next__
    try:
        yield
    finally:
        writer_module.time_ns = real


def _writer(path: Path, redact: bool, fsync: bool, before: list[Any]) -> TraceWriter:
    """A writer that has written what the event's compact form refers to."""
    w = TraceWriter(path, "S1", fsync=fsync, redact=redact)
    w.write(SessionStart, task="bench", model="m", provider="scripted")
    for ev in before:
        w.write(type(ev), **{k: v for k, v in ev.model_dump().items() if k not in _STAMPED})
    return w


_APART = [("1 ms", 1_000_000), ("2 s", 2_000_000_000)]
_STAMPED = ("session_id", "seq")
_ENVELOPE = ("schema_version", "session_id", "seq", "ts", "type")


if __name__ == "__main__":
    main()
