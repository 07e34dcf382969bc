"""``regista show`` before / after, interleaved: a 200 MB dense trace and a run that loops.

The dense trace (``realistic.py``) repeats tens of thousands of tool calls; the looping run
is the imported session of ``tests/cli/test_show_repeats.py`` (40 commands, 60 times
each). Each measure is the CPU time of a whole ``regista show`` process, from the tree
given by ``--before`` (e.g. ``git archive main`` unpacked) and from this one, in turn, the
order swapped each round, against the floor (read and ``orjson.loads`` of every line) in a
new process of the same round. Each figure is a median with its spread (min-max), and a
ratio to the floor; lines printed say how much of the output the repeats are.

    git archive main | tar -x -C /tmp/before
    .venv/bin/python bench/bench_show_repeats.py --before /tmp/before [--repeat 7]
"""

from __future__ import annotations

import argparse
import compileall
import os
import resource
import statistics
import subprocess
import sys
from pathlib import Path

from realistic import realistic_trace, trace_path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

FLOOR = (
    "import sys, orjson\nfor line in open(sys.argv[1],'rb').read().split(b'\\n'):\n"
    "    line and orjson.loads(line)"
)


def _whole(argv: list[str], tree: Path | None) -> tuple[float, int]:
    """CPU seconds of a whole process (children's usage, before and after), and the lines
    it printed."""
    env = {**os.environ, "COLUMNS": "120"}
    if tree is not None:
        env["PYTHONPATH"] = str(tree)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    return cpu, out.stdout.count(b"\n")


def _looping(folder: Path) -> Path:
    from cli.test_show_repeats import _looping_run

    path = folder / "loop.jsonl"
    if not path.exists():
        folder.mkdir(parents=True, exist_ok=True)
        _looping_run(folder)
    return path


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--before", type=Path, required=True)
    parser.add_argument("--mb", type=float, default=200.0)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    dense = realistic_trace(trace_path(args.mb, "dense"), args.mb, shape="dense")
    loop = _looping(Path("/tmp/regista-bench/show-repeats"))
    regista = str(Path(sys.executable).with_name("regista"))
    trees = [("before", args.before.resolve()), ("now", Path(__file__).resolve().parents[1])]
    # each tree's modules compiled first: where bytecode is not written
    # (PYTHONDONTWRITEBYTECODE), every measure would compile what it imports
    for _, tree in trees:
        compileall.compile_dir(tree / "regista", quiet=1)
    for path in (dense, loop):
        floors: list[float] = []
        times: dict[str, list[float]] = {"before": [], "now": []}
        lines: dict[str, int] = {}
        for i in range(args.repeat):
            floors.append(_whole([sys.executable, "-c", FLOOR, str(path)], None)[0])
            for label, tree in trees[:: 1 if i % 2 else -1]:
                cpu, lines[label] = _whole([regista, "show", str(path)], tree)
                times[label].append(cpu)
        f = statistics.median(floors)
        print(f"{path.name}: {path.stat().st_size / 1e6:.0f} MB, floor {f:.3f} s")
        for label, ts in times.items():
            m = statistics.median(ts)
            print(
                f"  {label:6} {m:6.3f} s ({min(ts):.3f}-{max(ts):.3f})  {m / f:5.2f}× floor  "
                f"{lines[label]:,} lines"
            )
        b, n = statistics.median(times["before"]), statistics.median(times["now"])
        print(f"  now / before {n / b:.2f} (CPU, medians of {args.repeat})")


if __name__ == "__main__":
    main()
