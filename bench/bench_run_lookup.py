"""The server's run lookup by id (``ServerContext.run_path``), old tree against new.

Generates ``--runs`` traces (default 2,000; a ``session.start`` of a few KB and a
``session.end`` each), ``--renamed`` of them (default 10%) under another file name than
``<id>.jsonl``, then measures, in fresh processes, alternating the old tree and this one:

- a run found by its file name (both trees; the new code must not be slower);
- a renamed run found by its id (the new code only; the old one answers 404), and an
  unknown id (a 404 either way), each against the floor of what ``/v1/runs`` costs
  (``list_runs`` of the same store).

The old tree: ``git archive main | tar -x -C /tmp/links-old`` (``--old``). Usage::

    python bench/bench_run_lookup.py [--runs 2000] [--repeats 7] [--old /tmp/links-old]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import orjson

NEW = Path(__file__).resolve().parents[1]

_PROBE = """
import sys, time
from pathlib import Path
from regista.server.context import ServerContext
from regista.store.runs import list_runs
from regista.wire.errors import HttpError
store, what, arg, n = Path(sys.argv[1]), sys.argv[2], sys.argv[3], int(sys.argv[4])
ctx = ServerContext(store=store)
def once():
    if what == "list":
        list_runs(store)
        return
    try:
        ctx.run_path(arg)
    except HttpError:
        pass
once()
t = time.perf_counter()
for _ in range(n):
    once()
print((time.perf_counter() - t) / n)
"""


def make_store(folder: Path, runs: int, renamed_every: int) -> tuple[str, str]:
    """The store's traces; the id of a run named by its id and of a renamed one (the last
    the listing reaches)."""
    folder.mkdir(parents=True)
    filler = "x" * 3000
    named = renamed = ""
    for i in range(runs):
        sid = f"01BENCH{i:019d}"
        start = {"schema_version": 1, "session_id": sid, "seq": 0, "type": "session.start",
                 "ts": f"2026-01-01T00:00:{i % 60:02d}.000Z", "task": f"task {i} {filler}",
                 "model": "m", "provider": "anthropic"}  # fmt: skip
        end = {"schema_version": 1, "session_id": sid, "seq": 1, "type": "session.end",
               "stop_reason": "end_turn", "steps": 0, "cost_usd": 0.0}  # fmt: skip
        name = f"zz-renamed-{i:06d}.jsonl" if i % renamed_every == 0 else f"{sid}.jsonl"
        if i % renamed_every == 0:
            renamed = sid
        else:
            named = sid
        (folder / name).write_bytes(orjson.dumps(start) + b"\n" + orjson.dumps(end) + b"\n")
    return named, renamed


def probe(tree: Path, store: Path, what: str, arg: str, n: int) -> float:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    out = subprocess.run(
        [sys.executable, "-c", _PROBE, str(store), what, arg, str(n)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
        cwd=tree,
    )
    return float(out.stdout.strip())


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=2000)
    ap.add_argument("--renamed", type=float, default=0.1)
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--old", type=Path, default=Path("/tmp/links-old"))
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bench-lookup-"))
    try:
        store = tmp / "store"
        named, renamed = make_store(store, args.runs, max(1, round(1 / args.renamed)))
        cases = [
            ("by name, old", args.old, "path", named, 200),
            ("by name, new", NEW, "path", named, 200),
            ("renamed, new", NEW, "path", renamed, 5),
            ("unknown, new", NEW, "path", "01NOSUCHRUN", 5),
            ("unknown, old", args.old, "path", "01NOSUCHRUN", 200),
            ("list_runs (floor)", NEW, "list", "", 5),
        ]
        times: dict[str, list[float]] = {c[0]: [] for c in cases}
        for _ in range(args.repeats):  # interleaved: each repeat runs every case once
            for label, tree, what, arg, n in cases:
                times[label].append(probe(tree, store, what, arg, n))
        med = {k: statistics.median(v) for k, v in times.items()}
        print(f"{args.runs} runs, {args.repeats} repeats (median, [min–max])")
        for label, v in times.items():
            print(
                f"  {label:18s} {med[label] * 1e3:9.3f} ms  [{min(v) * 1e3:.3f}–{max(v) * 1e3:.3f}]"
            )
        floor = med["list_runs (floor)"]
        print(f"  by name new/old:        {med['by name, new'] / med['by name, old']:.2f}x")
        print(f"  renamed / list_runs:    {med['renamed, new'] / floor:.2f}x")
        print(f"  unknown / list_runs:    {med['unknown, new'] / floor:.2f}x")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
