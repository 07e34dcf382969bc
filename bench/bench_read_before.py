"""``bench_read.py``'s rows from two source trees, interleaved with the floor: a before / after.

Each measure runs in a new process (the same for both trees), which reports the CPU time of
the row alone (imports done before it, as in ``bench_read.py``): the floor (read and
``orjson.loads`` of every line), the row from ``--before`` (e.g. ``git archive main``
unpacked), the row from this tree, in turn, ``--repeat`` times. ``show`` is the whole
``regista show`` process against the floor in a new process, as in ``bench_read.py``. Each
figure is a median, and a ratio to the floor medians of the same run.

    git archive main | tar -x -C /tmp/before
    .venv/bin/python bench/bench_read_before.py --before /tmp/before [--shape dense] [--repeat 5]
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

from realistic import SHAPES, realistic_trace, trace_path

ROWS = {
    "floor": (
        "import orjson\nfor line in open(P,'rb').read().split(b'\\n'):\n"
        "    line and orjson.loads(line)"
    ),
    "summary": (
        "from regista.trace.index import read_summary\n"
        "import regista.trace.reader, regista.pricing, regista.tokens, regista.trace.events\n"
        "#\nread_summary(P)"
    ),
    "decode": (
        "from regista.trace.reader import Trace\nimport regista.trace.events\n#\n"
        "T = Trace.load(P)\n[s.events for s in T.steps()]"
    ),
}
CHILD = """
import resource, sys
P = sys.argv[1]
{setup}
r = resource.getrusage(resource.RUSAGE_SELF); t = r.ru_utime + r.ru_stime
{row}
r = resource.getrusage(resource.RUSAGE_SELF); print(r.ru_utime + r.ru_stime - t)
"""


def _child(code: str, path: Path, tree: Path | None) -> float:
    setup, _, row = code.rpartition("#\n") if "#\n" in code else ("", "", code)
    env = dict(os.environ)
    if tree is not None:
        env["PYTHONPATH"] = str(tree)
    src = CHILD.format(setup=setup, row=row)
    # -P: the tree on PYTHONPATH, not the current directory's (run from a checkout, ``-c``
    # would put it first on sys.path and both trees would measure it)
    out = subprocess.run(
        [sys.executable, "-P", "-c", src, str(path)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return float(out.stdout.split()[-1])


def _whole(argv: list[str], tree: Path | None) -> float:
    """CPU seconds of a whole process (children's usage, before and after)."""
    env = dict(os.environ)
    if tree is not None:
        env["PYTHONPATH"] = str(tree)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--before", type=Path, required=True)
    parser.add_argument("--mb", type=float, default=200.0)
    parser.add_argument("--shape", choices=SHAPES, default=SHAPES[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--only", default="summary,decode,show")
    args = parser.parse_args()
    path = realistic_trace(trace_path(args.mb, args.shape), args.mb, shape=args.shape)
    now = Path(__file__).resolve().parent.parent
    before = args.before.resolve()
    regista = str(Path(sys.executable).with_name("regista"))
    trees = [("before", before), ("now", now)]
    # Each tree's modules compiled first: where bytecode is not written
    # (PYTHONDONTWRITEBYTECODE), a tree would otherwise compile every module it imports in
    # every measure (about 0.1 s), and a changed module of the tree being worked on too.
    for _, tree in trees:
        compileall.compile_dir(tree / "regista", quiet=1)
    floor_src = ROWS["floor"].replace("P", "sys.argv[1]")
    print(f"{path.name}: {path.stat().st_size / 1e6:.0f} MB ({args.shape})")
    for name in args.only.split(","):
        floors: list[float] = []
        times: dict[str, list[float]] = {"before": [], "now": []}
        for i in range(args.repeat):  # the two trees in turn, in the other order each time
            if name == "show":
                floors.append(
                    _whole([sys.executable, "-c", f"import sys\n{floor_src}", str(path)], None)
                )
                for label, tree in trees[:: 1 if i % 2 else -1]:
                    times[label].append(_whole([regista, "show", str(path)], tree))
            else:
                floors.append(_child(ROWS["floor"], path, None))
                for label, tree in trees[:: 1 if i % 2 else -1]:
                    times[label].append(_child(ROWS[name], path, tree))
        f = statistics.median(floors)
        b, n = statistics.median(times["before"]), statistics.median(times["now"])
        print(
            f"  {name:8} floor {f:6.3f} s   before {b:6.3f} s {b / f:5.2f}×   "
            f"now {n:6.3f} s {n / f:5.2f}×   (CPU, median of {args.repeat})"
        )
        spread = {"floor": floors, **times}
        print(
            "           spread: "
            + "   ".join(f"{k} {min(v):.3f}-{max(v):.3f} s" for k, v in spread.items())
        )


if __name__ == "__main__":
    main()
