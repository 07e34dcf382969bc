"""The index keeps its steps and lines as columns (``StepList``, arrays of offsets): it
answers exactly what the index of lists and objects answered, on seeded traces of every
shape a scan meets (steps out of order, interleaved, without their opener; repeated tool
ids; several decisions on a step, of which the first decides; requests that write their
context or take it from the one before), read whole and as a file that grows by pieces cut
anywhere, half-written lines included.

The reference here is that index's bookkeeping, written plainly over decoded lines, with
``Step``'s facts."""

from __future__ import annotations

import os
import random
from pathlib import Path
from typing import Any

import orjson
from files import SAMPLES

from regista.trace.index import StepEntry, StepList, TraceIndex

FUZZ_RUNS = int(os.environ.get("REGISTA_FUZZ_RUNS", "40"))
_KINDS = [
    *("llm.request", "llm.response", "tool.call", "permission.decision", "tool.result"),
    *("context.compaction", "error", "error-loose"),
]
_OPENERS = {"llm.request": "model", "tool.call": "tool", "context.compaction": "compaction"}


def _start_line() -> bytes:
    return (SAMPLES / "refund_happy.jsonl").read_bytes().split(b"\n", 1)[0]


def _lines(rng: random.Random) -> list[bytes]:
    """A session.start, then events of steps in a random order, as compact JSON."""
    out = [_start_line()]
    steps = 0
    for seq in range(1, rng.randint(2, 120)):
        kind = rng.choice(_KINDS)
        if rng.random() < 0.6 or steps == 0:
            step = steps
            steps += 1
        else:  # a step seen before, or one whose opener was never written
            step = rng.randrange(0, steps + 3)
        ev: dict[str, Any] = {"schema_version": 2, "session_id": "S", "seq": seq}
        ev["type"] = "error" if kind == "error-loose" else kind
        if kind != "error-loose":
            ev["step"] = step
        uid = f"t{rng.randrange(8)}"
        if kind == "llm.request":
            ev["model"] = "m"
            if rng.random() < 0.3:
                ev["system"] = f"s{len(out)}"
                ev["tools"] = []
        elif kind == "tool.call":
            ev.update(tool_use_id=uid, name=rng.choice(["ls", "grep", "cat"]))
        elif kind == "permission.decision":
            ev["allowed"] = rng.random() < 0.5
        elif kind == "tool.result":
            ev["tool_use_id"] = uid
            if rng.random() < 0.4:
                ev["is_error"] = rng.random() < 0.5
            ev["content"] = f"r{len(out)}"
        out.append(orjson.dumps(ev))
    return out


class _Reference:
    """The bookkeeping of the index of lists and objects, over decoded lines."""

    def __init__(self, lines: list[bytes]) -> None:
        self.offsets: list[int] = []
        self.lengths: list[int] = []
        self.steps: list[StepEntry] = []
        self.by_number: dict[int, int] = {}
        self.contexts: dict[int, int] = {}
        self.results: dict[str, list[int]] = {}
        context: int | None = None
        at = 0
        decided: set[int] = set()
        resulted: set[int] = set()
        for lineno, line in enumerate(lines):
            self.offsets.append(at)
            self.lengths.append(len(line))
            at += len(line) + 1
            ev = orjson.loads(line)
            etype = ev["type"]
            if etype == "llm.request":
                if "system" in ev:
                    context = lineno
                elif context is not None:
                    self.contexts[lineno] = context
            elif etype == "tool.result":
                self.results.setdefault(ev["tool_use_id"], []).append(lineno)
            if "step" not in ev:
                continue
            number = ev["step"]
            pos = self.by_number.get(number)
            if pos is None:
                if etype not in _OPENERS:
                    continue
                pos = self.by_number[number] = len(self.steps)
                self.steps.append(StepEntry(index=number, kind=_OPENERS[etype]))  # type: ignore[arg-type]
            entry = self.steps[pos]
            entry.lines.append(lineno)
            # A step's facts as ``Step`` reads them: its first call's name, its first
            # decision, its first result, an error event; complete by its closing event.
            if etype == "tool.call" and entry.tool is None:
                entry.tool = ev["name"]
            elif etype == "error":
                entry.error = True
            elif etype == "permission.decision" and number not in decided:
                decided.add(number)
                entry.denied = ev["allowed"] is False
            elif etype == "tool.result" and number not in resulted:
                resulted.add(number)
                entry.error = entry.error or ev.get("is_error") is True
            closing = {"model": "llm.response", "tool": "tool.result"}
            entry.complete = entry.complete or etype == closing.get(entry.kind, etype)


def _same(index: TraceIndex, lines: list[bytes]) -> None:
    ref = _Reference(lines)
    assert list(index.offsets) == ref.offsets
    assert list(index.lengths) == ref.lengths
    assert len(index) == len(index.steps) == len(ref.steps)
    assert index.steps == ref.steps and list(index.steps) == ref.steps
    assert list(reversed(index.steps)) == ref.steps[::-1]
    assert index.steps[1:-1] == ref.steps[1:-1]
    for pos, entry in enumerate(ref.steps):
        assert index.steps[pos] == entry
        assert index.steps[pos - len(ref.steps)] == entry
        assert index.steps.lines(pos) == entry.lines
        assert index.steps.kind(pos) == entry.kind
        assert index.steps.complete(pos) == entry.complete
    for number in range(-2, max(ref.by_number, default=0) + 4):
        assert index.position_of(number) == ref.by_number.get(number), number
    errors = sum(1 for e in ref.steps if e.error and not e.denied)
    denied = sum(1 for e in ref.steps if e.denied)
    tools = sum(1 for e in ref.steps if e.kind == "tool")
    assert index.steps.counts() == (errors, denied, tools)
    assert list(index.steps.marked()) == [
        (pos, e.kind, e.error, e.denied)
        for pos, e in enumerate(ref.steps)
        if e.error or e.denied or e.kind == "compaction"
    ]
    for lineno, line in enumerate(lines):
        if b'"type":"llm.request"' in line:
            at = ref.contexts.get(lineno)
            want = None if at is None else {"system": f"s{at}", "tools": []}
            assert index._context_of(lineno) == want, lineno
    for uid, ats in ref.results.items():
        for lineno in range(len(lines) + 1):
            before = [at for at in ats if at < lineno]
            want = f"r{before[-1]}" if before else None
            assert index._result_before(uid, lineno) == want


def test_fuzz_the_columns_answer_what_the_lists_answered(tmp_path: Path) -> None:
    rng = random.Random(2727)
    for run in range(FUZZ_RUNS):
        lines = _lines(rng)
        data = b"".join(line + b"\n" for line in lines)
        path = tmp_path / f"{run}.jsonl"
        path.write_bytes(data)
        index = TraceIndex(path)
        try:
            assert index.scan()
            _same(index, lines)
        finally:
            index.close()
        # the same file growing by pieces cut anywhere, scanned in small budgets
        growing = tmp_path / f"{run}-growing.jsonl"
        at = len(lines[0]) + 1  # a torn first line alone is refused: not a trace yet
        growing.write_bytes(data[:at])
        index = TraceIndex(growing)
        try:
            while at < len(data):
                cut = min(len(data), at + rng.randint(1, 400))
                with growing.open("ab") as f:
                    f.write(data[at:cut])
                at = cut
                while not index.scan(rng.choice([None, 50, 300])):
                    pass
                whole = data[:at].count(b"\n")
                assert index.truncated == (not data[:at].endswith(b"\n"))
                _same(index, lines[:whole])
        finally:
            index.close()


def test_a_step_list_takes_entries_and_gives_copies() -> None:
    steps = StepList()
    first = StepEntry(index=0, kind="model", lines=[0, 2], complete=True)
    odd = StepEntry(index=7, kind="tool", lines=[1, 5, 3], tool="ls", error=True, denied=True)
    empty = StepEntry(index=1, kind="compaction")
    for entry in (first, odd, empty):
        steps.append(entry)
    assert list(steps) == [first, odd, empty]
    assert [steps.position_of(n) for n in (0, 1, 7, 2)] == [0, 2, 1, None]
    copy = steps[1]
    copy.lines.append(9)
    copy.error = False
    assert steps[1] == odd
    assert steps.counts() == (0, 1, 1)
