"""Importing a realistic 50 MB Claude Code transcript, as ratios to floors in the same run.

Times are CPU seconds (user + system): on a shared machine the wall clock mostly measures the
other processes. Each row is measured interleaved with its floor (floor, row, floor, row, …)
and reported as medians over ``--repeat`` rounds:

- ``convert``: the transcript (and nothing else) converted into regista events and trace
  bytes, in MB/s of transcript; floor: ``orjson.loads`` of every line of it (what any reader
  of the transcript must at least pay).
- ``tui open``: what ``regista-tui SESSION.jsonl`` does before its first screen: detect,
  read and survey the transcript, convert its start and index the first 4 MB of the trace
  (the rest converts as the debugger scans); floor: the same ``orjson.loads``.
- ``tui all``: ``tui open`` then scanning to the end, which converts the rest (every run,
  subagents included): the whole import as the debugger does it, in MB/s.
- ``first screen``: ``regista-tui SESSION.jsonl`` in a new process until its first screen
  is drawn (Textual's headless driver), CPU seconds of the whole process; floor: a new
  process that imports the debugger and draws an empty Textual app.

The targets are printed with the figures: the first screen under 1 s, the import at
50 MB/s or more.

The transcript is made by ``bench/realistic_cc.py``, shaped like real ones: random ids on
every line, long tool results of many distinct identifiers (each written twice, as Claude
Code does), thinking signatures, hook and command progress lines (most of the lines).
``--simple`` uses the first generator instead (ten words, numbered ids, short results): it
imports about twice as fast as a real transcript, which is why it is no longer the default.

``--format codex`` measures a Codex rollout instead, made by ``bench/realistic_codex.py``
(reasoning with its encrypted content, exec calls and their events, long outputs, a token
count per answer).

``--old DIR`` (without ``--rss``) measures instead ``convert`` in new processes, this tree's
and the ``regista`` package of ``DIR`` (``git archive main | tar -x -C DIR``), interleaved
with the floor (new, old, floor, new, old, floor, …): medians and spread in MB/s, to compare
before and after a change on a noisy machine.

``--rss MB [MB …]`` measures instead, for transcripts of those sizes, the peak memory (RSS)
and the CPU time of ``regista import`` in a new process, and of the debugger converting the
whole transcript (``regista-tui``'s index scanned to the end), each interleaved with a
floor process that reads the same file line by line and decodes each line
(``orjson.loads``): the floor's memory does not grow with the file, and neither must the
import's. ``--old DIR`` runs the same processes with the ``regista`` package of ``DIR``
too (``git archive main regista | tar -x -C DIR``), interleaved, to compare before and
after a change. The transcripts are made in ``--dir`` and deleted after (``--keep`` keeps
them).

    .venv/bin/python bench/bench_import.py [--mb 50] [--repeat 5] [--simple] [--format codex]
    .venv/bin/python bench/bench_import.py --old DIR [--mb 50] [--repeat 9] [--format codex]
    .venv/bin/python bench/bench_import.py --rss 100 500 1000 [--dir /tmp/regista-bench] \
        [--format codex] [--old DIR]
"""

from __future__ import annotations

import argparse
import gc
import os
import random
import resource
import statistics
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from importers.cc_fixtures import CCSession, text, thinking, tool_use
from realistic_cc import write_transcript
from realistic_codex import write_rollout

OUT = Path("/tmp/regista-bench")
#: The format measured (``--format``).
FMT = "claude-code"


def make_real_transcript(mb: int, folder: Path = OUT) -> Path:
    if FMT == "codex":
        return write_rollout(folder / f"rollout-codex_real_{mb}mb.jsonl", mb)
    return write_transcript(folder / f"cc_real_{mb}mb.jsonl", mb)


def make_transcript(mb: int) -> Path:
    path = OUT / f"claude_code_{mb}mb.jsonl"
    if path.is_file():
        return path
    rng = random.Random(7)
    words = [
        "refund",
        "order",
        "customer",
        "total",
        "invoice",
        "tax",
        "shipping",
        "cart",
        "price",
        "discount",
    ]
    s = CCSession()
    s.prompt("Refactor the refund module and keep the tests green.")
    n = 0
    while len(s.data()) < mb * 1_000_000:
        for _ in range(200):
            n += 1
            body = "\n".join(
                f"{i:>6}→" + " ".join(rng.choice(words) for _ in range(rng.randint(3, 14)))
                for i in range(rng.randint(20, 300))
            )
            s.answer(
                thinking(" ".join(rng.choice(words) for _ in range(rng.randint(10, 80)))),
                text("Reading the next file."),
                tool_use(f"toolu_{n:06d}", "Read", file_path=f"/home/ann/shop/m{n}.py"),
            )
            s.progress(f"toolu_{n:06d}")
            s.tool_result(
                f"toolu_{n:06d}",
                body,
                result={"type": "text", "file": {"filePath": f"m{n}.py", "content": body}},
            )
            if n % 7 == 0:
                s.snapshot()
            if n % 25 == 0:
                s.prompt(" ".join(rng.choice(words) for _ in range(12)))
    OUT.mkdir(exist_ok=True)
    path.write_bytes(s.data())
    return path


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def timed(fn: Callable[[], object], *, wall: bool = False) -> float:
    """CPU seconds of ``fn``; with ``wall``, the seconds ``fn`` itself reports."""
    gc.collect()
    if wall:
        return float(fn())  # type: ignore[arg-type]
    t0 = _cpu()
    fn()
    return _cpu() - t0


def floor(path: Path) -> None:
    for line in path.read_bytes().split(b"\n"):
        if line:
            orjson.loads(line)


def convert(path: Path) -> None:
    from regista.importers import convert as cc

    conv = cc(FMT, path)
    for run in conv.runs:
        run.to_bytes()


def tui_open(path: Path) -> None:
    import regista.importers.memory as memory
    from regista.importers.memory import InMemoryRuns
    from regista_tui.__main__ import open_index

    memory.RUNS = InMemoryRuns()  # a fresh store: nothing cached from the last round
    index, _ = open_index(path)
    index.close()


def tui_all(path: Path) -> None:
    import regista.importers.memory as memory
    from regista.importers.memory import InMemoryRuns
    from regista_tui.__main__ import open_index

    memory.RUNS = InMemoryRuns()
    index, _ = open_index(path)
    while not index.scan(16 * 1024 * 1024):  # the debugger's scan slices
        pass
    index.close()


def cli_import(path: Path) -> None:
    """What ``regista import claude-code PATH`` does once started: check the format,
    convert, write the trace (into a new folder each time)."""
    import shutil
    import tempfile
    from argparse import Namespace

    from regista.cli.cmd_import import run

    out = Path(tempfile.mkdtemp(dir=OUT))
    try:
        import contextlib
        import io

        with contextlib.redirect_stdout(io.StringIO()):
            run(Namespace(format=FMT, paths=[path], trace_dir=out))
    finally:
        shutil.rmtree(out)


# Each prints its peak RSS (bytes) and CPU seconds on its last line of stderr.
_USAGE = """
r = resource.getrusage(resource.RUSAGE_SELF)
print(r.ru_maxrss * 1024, r.ru_utime + r.ru_stime, file=sys.stderr)
"""
PEAK = (
    """
import contextlib, io, resource, sys
from regista.cli.main import main
with contextlib.redirect_stdout(io.StringIO()):
    main(["import", sys.argv[3], sys.argv[1], "--trace-dir", sys.argv[2]])
"""
    + _USAGE
)
PEAK_TUI = (
    """
import resource, sys
from regista_tui.__main__ import open_index
index, _ = open_index(sys.argv[1])
while not index.scan(16 * 1024 * 1024):  # the debugger's scan slices
    pass
index.close()
"""
    + _USAGE
)
PEAK_FLOOR = (
    """
import resource, sys
import orjson
with open(sys.argv[1], "rb") as f:
    for line in f:
        if line.strip():
            orjson.loads(line)
"""
    + _USAGE
)


def _child(src: str, path: Path, out: Path, old: Path | None = None) -> tuple[int, float]:
    env = dict(os.environ)
    if old is not None:  # the package of ``old`` first on the path
        env["PYTHONPATH"] = os.pathsep.join([str(old), env.get("PYTHONPATH", "")])
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    done = subprocess.run(
        [sys.executable, "-c", src, str(path), str(out), FMT],
        capture_output=True,
        text=True,
        env=env,
        cwd=old or out,  # ``-c`` puts the working folder first on the path
    )
    if done.returncode:
        raise SystemExit(done.stderr[-2000:])
    rss, cpu = done.stderr.split()[-2:]
    return int(rss), float(cpu)


# CPU seconds of one conversion (the transcript converted into trace bytes, as ``convert``),
# in a new process, the imports not counted.
CONVERT_CHILD = """
import resource, sys
from pathlib import Path
def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime
from regista.importers import convert
t = cpu()
for run in convert(sys.argv[3], Path(sys.argv[1])).runs:
    run.to_bytes()
print(cpu() - t)
"""
FLOOR_CHILD = """
import resource, sys
import orjson
def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime
t = cpu()
with open(sys.argv[1], "rb") as f:
    for line in f.read().split(b"\\n"):
        if line:
            orjson.loads(line)
print(cpu() - t)
"""


def _cpu_child(src: str, path: Path, old: Path | None = None) -> float:
    env = dict(os.environ)
    if old is not None:  # the package of ``old`` first on the path
        env["PYTHONPATH"] = os.pathsep.join([str(old), env.get("PYTHONPATH", "")])
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    done = subprocess.run(
        [sys.executable, "-c", src, str(path), "", FMT],
        capture_output=True,
        text=True,
        env=env,
        cwd=old or OUT,  # ``-c`` puts the working folder first on the path
    )
    if done.returncode:
        raise SystemExit(done.stderr[-2000:])
    return float(done.stdout.split()[-1])


def compare_old(path: Path, old: Path, repeat: int) -> None:
    """``convert`` of this tree and of ``old``, each in new processes, interleaved with
    the floor; medians and spread."""
    mb = path.stat().st_size / 1e6
    runs: dict[str, list[float]] = {"floor": [], "new": [], "old": []}
    for _ in range(repeat):
        runs["new"].append(_cpu_child(CONVERT_CHILD, path))
        runs["old"].append(_cpu_child(CONVERT_CHILD, path, old))
        runs["floor"].append(_cpu_child(FLOOR_CHILD, path))
    print(f"{FMT}: convert in new processes, {repeat} rounds interleaved (CPU time)")
    floor = statistics.median(runs["floor"])
    for name, times in runs.items():
        t = statistics.median(times)
        print(
            f"{name:<6} median {t:6.3f} s  {mb / t:5.1f} MB/s  (spread {mb / max(times):.1f}-"
            f"{mb / min(times):.1f} MB/s)   ratio to floor {t / floor:5.2f}x"
        )
    print(f"new / old: {statistics.median(runs['new']) / statistics.median(runs['old']):.2f}x")


def peak_rss(sizes: list[int], folder: Path, keep: bool, old: Path | None) -> None:
    import shutil
    import tempfile
    import time

    versions: list[tuple[str, Path | None]] = [("new", None)]
    if old is not None:
        versions.append(("old", old))
    print(f"{FMT}: peak RSS in MB, and CPU time as a ratio to the floor's (each row interleaved)")
    print("size MB  version  floor RSS  import RSS  tui RSS  import MB/s  floor MB/s  import/floor")
    for mb in sizes:
        path = make_real_transcript(mb, folder)
        then = time.time() - 600  # not a session still being written: not followed
        os.utime(path, (then, then))
        size = path.stat().st_size / 1e6
        try:
            for name, where in versions:
                out = Path(tempfile.mkdtemp(dir=folder))
                try:
                    floor_rss, floor_cpu = _child(PEAK_FLOOR, path, out)
                    rss, cpu = _child(PEAK, path, out, where)
                    tui_rss, _ = _child(PEAK_TUI, path, out, where)
                finally:
                    shutil.rmtree(out)
                print(
                    f"{size:7.0f}  {name:<7}  {floor_rss / 1e6:9.0f}  {rss / 1e6:10.0f}  "
                    f"{tui_rss / 1e6:7.0f}  {size / cpu:10.1f}  {size / floor_cpu:10.1f}  "
                    f"{cpu / floor_cpu:11.2f}x",
                    flush=True,
                )
        finally:
            if not keep:
                path.unlink()


# CPU seconds of the whole process when the first frame has been drawn: a callback that
# runs after the screen's first refresh (as the browser starts its background scan).
FIRST_SCREEN = """
import asyncio, os, resource, sys
def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime
from pathlib import Path
async def main():
    from regista_tui.__main__ import open_index
    from regista_tui.app import RegistaApp
    from regista_tui.widgets.timeline.timeline import Timeline
    index, notice = open_index(Path(sys.argv[1]))
    app = RegistaApp(index, notice=notice)
    async with app.run_test(size=(120, 40)):
        while not app.screen.query(Timeline):
            await asyncio.sleep(0.001)
        drawn = asyncio.get_running_loop().create_future()
        app.screen.call_after_refresh(lambda: drawn.done() or drawn.set_result(cpu()))
        print(await drawn, flush=True)
        os._exit(0)  # the first screen is up: what follows (converting the rest) is not timed
asyncio.run(main())
"""
# The floor: a process that imports the debugger and draws an empty Textual app.
FLOOR_SCREEN = """
import asyncio, os, resource
def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime
async def main():
    import regista_tui.app
    from textual.app import App
    app = App()
    async with app.run_test(size=(120, 40)):
        drawn = asyncio.get_running_loop().create_future()
        app.screen.call_after_refresh(lambda: drawn.done() or drawn.set_result(cpu()))
        print(await drawn, flush=True)
        os._exit(0)
asyncio.run(main())
"""


def subprocess_wall(src: str, *args: str) -> Callable[[], float]:
    def run() -> float:
        out = subprocess.run([sys.executable, "-c", src, *args], check=True, capture_output=True)
        return float(out.stdout.split()[-1])

    return run


TARGETS = {
    "convert": "target >= 50 MB/s",
    "tui all": "target >= 50 MB/s",
    "first screen": "target < 1 s",
}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=int, default=50)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--simple", action="store_true", help="the first, simpler transcript")
    ap.add_argument("--rss", type=int, nargs="+", metavar="MB", help="peak memory of importing MB")
    ap.add_argument("--dir", type=Path, default=OUT, help="where --rss makes its transcripts")
    ap.add_argument("--keep", action="store_true", help="keep --rss's transcripts")
    ap.add_argument("--skip-tui", action="store_true", help="only the import rows")
    ap.add_argument("--format", choices=["claude-code", "codex"], default="claude-code")
    ap.add_argument("--old", type=Path, help="also the regista package of this folder")
    args = ap.parse_args()
    global FMT
    FMT = args.format
    if args.rss:
        args.dir.mkdir(parents=True, exist_ok=True)
        return peak_rss(args.rss, args.dir, args.keep, args.old)
    path = make_transcript(args.mb) if args.simple else make_real_transcript(args.mb)
    if args.old:
        return compare_old(path, args.old, args.repeat)
    mb = path.stat().st_size / 1e6
    print(f"transcript: {path} ({mb:.1f} MB)")
    rows = [
        ("convert", lambda: convert(path), lambda: floor(path), False),
        ("tui open", lambda: tui_open(path), lambda: floor(path), False),
        ("tui all", lambda: tui_all(path), lambda: floor(path), False),
        (
            "first screen",
            subprocess_wall(FIRST_SCREEN, str(path)),
            subprocess_wall(FLOOR_SCREEN),
            True,
        ),
    ]
    if args.skip_tui:
        rows = [*rows[:1], ("regista import", lambda: cli_import(path), lambda: floor(path), False)]
    for name, row, base, wall in rows:
        times, floors = [], []
        for _ in range(args.repeat):
            floors.append(timed(base, wall=wall))
            times.append(timed(row, wall=wall))
        t, f = statistics.median(times), statistics.median(floors)
        speed = f"  {mb / t:6.0f} MB/s" if not wall else "           "
        target = TARGETS.get(name, "")
        print(f"{name:<13} {t:7.3f} s{speed}   floor {f:7.3f} s   ratio {t / f:5.2f}x   {target}")


if __name__ == "__main__":
    main()
