"""Recall index on a big traces folder: first build, incremental update, query.

Generates ``--runs`` traces (default 10,000, about 2 GB) into a temporary folder, then
measures, each against a floor measured in the same run:

- first build of the index vs. the floor: reading every trace and decoding every line
  (what any index of the traces must at least do);
- an update after ``--new`` (10) new runs vs. the floor: the stat walk of the folder plus
  reading and decoding the new traces;
- an update after ``--new`` existing traces grew (steps appended, as to a live run) vs. the
  floor: the stat walk plus reading and decoding the appended bytes;
- a recall query (median over several queries, rare and common words) vs. the 50 ms goal,
  and vs. the naive answer (grep-like scan of every trace).

The folder is removed afterwards. Usage::

    python bench/bench_recall.py [--runs 10000] [--new 10] [--keep DIR]
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import tempfile
import time
from pathlib import Path

import orjson

from regista.store.recall import RecallIndex

TOOLS = ["search_orders", "get_order", "issue_refund", "send_email", "lookup_customer", "run_sql"]
WORDS = [
    "refund",
    "tent",
    "pole",
    "snapped",
    "order",
    "customer",
    "shipping",
    "invoice",
    "warehouse",
    "delayed",
    "carrier",
    "supervisor",
    "approval",
    "denied",
    "monitor",
    "desk",
    "chair",
    "lamp",
    "battery",
    "charger",
    "cable",
    "kettle",
    "database",
    "timeout",
    "retry",
    "backoff",
    "region",
    "replica",
    "latency",
    "migration",
    "schema",
    "index",
]


def _paragraphs(rng: random.Random, n: int, size: int) -> list[str]:
    out = []
    for _ in range(n):
        words = []
        length = 0
        while length < size:
            w = rng.choice(WORDS) if rng.random() < 0.3 else f"w{rng.randrange(50_000)}"
            words.append(w)
            length += len(w) + 1
        out.append(" ".join(words))
    return out


def _trace(rng: random.Random, i: int, paras: list[str], target: int) -> bytes:
    sid = f"01BENCH{i:019d}"
    ts = f"2026-07-{1 + i % 28:02d}T{i % 24:02d}:00:00.000Z"
    lines = []
    seq = 0

    def ev(**fields: object) -> None:
        nonlocal seq
        head = {"schema_version": 1, "session_id": sid, "seq": seq, "ts": ts}
        lines.append(orjson.dumps({**head, **fields}))
        seq += 1

    order = f"ORD-{i:06d}"
    ev(
        type="session.start",
        task=f"Customer {order}: {rng.choice(paras)[:200]}",
        model="claude-sonnet-4-6",
        provider="anthropic",
        tools=[{"name": t, "description": t, "input_schema": {}} for t in TOOLS],
    )
    step = 0
    size = 0
    turn = 0
    while size < target:
        body = rng.choice(paras)
        ev(
            type="llm.request",
            step=step,
            turn=turn,
            request_hash="0" * 64,
            model="claude-sonnet-4-6",
            max_tokens=4096,
            messages_prefix=turn * 2,
            messages=[{"role": "user", "content": [{"type": "text", "text": body}]}],
        )
        tool = rng.choice(TOOLS)
        ev(
            type="llm.response",
            step=step,
            turn=turn,
            provider="anthropic",
            response={
                "content": [
                    {"type": "text", "text": rng.choice(paras)[:300]},
                    {"type": "tool_use", "id": f"t{step}", "name": tool, "input": {"q": order}},
                ],
                "usage": {"input_tokens": 900, "output_tokens": 80},
            },
            cost_usd=0.004,
            duration_ms=900.0,
        )
        step += 1
        ev(type="tool.call", step=step, turn=turn, tool_use_id=f"t{step}", name=tool, input={})
        ev(type="permission.decision", step=step, tool_use_id=f"t{step}", allowed=True)
        ev(
            type="tool.result",
            step=step,
            tool_use_id=f"t{step}",
            name=tool,
            content=f"{order} " + rng.choice(paras),
            is_error=rng.random() < 0.05,
        )
        step += 1
        turn += 1
        size = sum(len(x) + 1 for x in lines)
    ok = rng.random() < 0.8
    ev(
        type="session.end",
        stop_reason="end_turn" if ok else "max_turns",
        turns=turn,
        steps=step,
        cost_usd=0.004 * turn,
    )
    return b"\n".join(lines) + b"\n"


def generate(folder: Path, start: int, n: int, avg: int, seed: int) -> int:
    rng = random.Random(seed)
    paras = _paragraphs(rng, 400, 6000)
    total = 0
    for i in range(start, start + n):
        data = _trace(rng, i, paras, int(avg * rng.uniform(0.5, 1.5)))
        sub = folder / f"{i % 50:02d}"
        sub.mkdir(exist_ok=True)
        (sub / f"{i:08d}.jsonl").write_bytes(data)
        total += len(data)
    return total


def floor_read(paths: list[Path]) -> float:
    t0 = time.perf_counter()
    for p in paths:
        for line in p.read_bytes().splitlines():
            orjson.loads(line)
    return time.perf_counter() - t0


def naive_grep(folder: Path, word: bytes) -> float:
    t0 = time.perf_counter()
    for root, _, files in os.walk(folder):
        for f in files:
            if f.endswith(".jsonl") and word in (Path(root) / f).read_bytes():
                pass
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=10_000)
    ap.add_argument("--avg-kb", type=int, default=200)
    ap.add_argument("--new", type=int, default=10)
    ap.add_argument("--keep", type=Path)
    args = ap.parse_args()
    folder = args.keep or Path(tempfile.mkdtemp(prefix="regista-recall-bench-"))
    folder.mkdir(parents=True, exist_ok=True)
    try:
        t0 = time.perf_counter()
        total = generate(folder, 0, args.runs, args.avg_kb * 1024, 1)
        print(
            f"generated {args.runs} runs, {total / 1e9:.2f} GB in {time.perf_counter() - t0:.0f} s"
        )
        paths = sorted(folder.rglob("*.jsonl"))
        floor = floor_read(paths)
        t0 = time.perf_counter()
        with RecallIndex(folder) as ix:
            ix.update()
        build = time.perf_counter() - t0
        db_size = (folder / ".regista-recall.sqlite").stat().st_size
        print(
            f"first build: {build:.1f} s = {build / floor:.2f}x the floor (read + decode every "
            f"line: {floor:.1f} s); index {db_size / 1e6:.0f} MB = "
            f"{db_size / total:.2%} of the traces"
        )
        generate(folder, args.runs, args.new, args.avg_kb * 1024, 2)
        new_paths = sorted(set(folder.rglob("*.jsonl")) - set(paths))
        t0 = time.perf_counter()
        walk = sum(1 for _ in folder.rglob("*.jsonl"))
        floor_inc = time.perf_counter() - t0 + floor_read(new_paths)
        t0 = time.perf_counter()
        with RecallIndex(folder) as ix:
            stats = ix.update()
        inc = time.perf_counter() - t0
        print(
            f"update after {stats.added} new runs ({walk} files): {inc * 1000:.0f} ms = "
            f"{inc / floor_inc:.2f}x the floor (walk + read the new: {floor_inc * 1000:.0f} ms)"
        )
        rng = random.Random(3)
        grown = rng.sample(paths, min(args.new, len(paths)))
        paras = _paragraphs(rng, 50, 6000)
        added = []
        for j, p in enumerate(grown):
            lines = _trace(rng, 10**9 + j, paras, args.avg_kb * 1024).splitlines(keepends=True)
            chunk = b"".join(lines[1:-1])  # steps only: a run that went on
            with p.open("ab") as f:
                f.write(chunk)
            added.append(chunk)
        t0 = time.perf_counter()
        walk = sum(1 for _ in folder.rglob("*.jsonl"))
        for chunk in added:
            for line in chunk.splitlines():
                orjson.loads(line)
        floor_app = time.perf_counter() - t0
        t0 = time.perf_counter()
        with RecallIndex(folder) as ix:
            stats = ix.update()
        app = time.perf_counter() - t0
        print(
            f"update after {stats.appended} traces grew by {sum(map(len, added)) / 1e6:.1f} MB: "
            f"{app * 1000:.0f} ms = {app / floor_app:.2f}x the floor (walk + decode the "
            f"appended: {floor_app * 1000:.0f} ms)"
        )
        queries = [
            "refund tent",
            "ORD-000042",
            "supervisor approval denied",
            "w12345",
            "database timeout",
            "kettle",
            "w777 carrier",
            "zzz-nothing",
        ]
        with RecallIndex(folder) as ix:
            times = []
            for _ in range(5):
                for q in queries:
                    t0 = time.perf_counter()
                    ix.search(q)
                    times.append(time.perf_counter() - t0)
        med = statistics.median(times)
        grep = naive_grep(folder, b"w12345")
        print(
            f"query: median {med * 1000:.1f} ms (max {max(times) * 1000:.1f} ms) over "
            f"{len(times)} queries = {med / 0.05:.2f}x the 50 ms goal; the naive scan of every "
            f"trace takes {grep:.1f} s ({grep / med:.0f}x the query)"
        )
    finally:
        if args.keep is None:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
