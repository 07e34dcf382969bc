"""``regista show`` says the same, byte for byte, from two source trees: a check for changes
made to its speed.

It writes the traces the tests read (seeded sessions of the real agent loop, cut at a line
and in the middle of one; the committed samples; the schema-1 traces; the importers'
traces), copies of them and of the first megabytes of the benches' dense trace changed as a
corrupt file would be (a field missing or of another type, a broken or cut line, a newer
schema, a line out of order, an empty line), and gives each to ``show``, ``show --json``,
``show --full`` and ``show --by`` at two widths, in a process per tree (``PYTHONPATH``);
then compares what each printed, its errors and its exit code. ``--big`` adds the benches'
200 MB traces (``show`` and ``show --json``).

    git archive main | tar -x -C /tmp/before
    .venv/bin/python bench/show_same.py --before /tmp/before [--big] [--seeds 12]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import random
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent

ARGS = [[], ["--json"], ["--full"], ["--by", "tool"], ["--by", "turn"]]
WIDTHS = ["100", "61"]


def _child(jobs_file: str, out_file: str) -> None:
    """Run each job (``[argv, columns]``) in this process; write what each printed."""
    from regista.cli.main import main

    jobs = json.loads(Path(jobs_file).read_text())
    results = []
    for argv, columns in jobs:
        os.environ["COLUMNS"] = columns
        out, err = io.StringIO(), io.StringIO()
        with (
            contextlib.redirect_stdout(out),
            contextlib.redirect_stderr(err),
            warnings.catch_warnings(),
        ):
            warnings.simplefilter("default")
            try:
                code: Any = main(argv)
            except SystemExit as exc:
                code = f"exit {exc.code}"
            except BaseException as exc:  # a traceback is a difference too
                code = f"raised {type(exc).__name__}: {exc}"
        results.append([out.getvalue(), err.getvalue(), code])
    Path(out_file).write_text(json.dumps(results))


# -- the traces --------------------------------------------------------------------------


def _changed(path: Path, rng: random.Random, folder: Path, tag: str) -> list[Path]:
    """Copies of ``path`` with one line changed as a corrupt file would have it."""
    import orjson

    lines = path.read_bytes().split(b"\n")
    ends = lines[-1] == b""
    body = lines[:-1] if ends else lines
    out: list[Path] = []

    def write(name: str, new: list[bytes]) -> None:
        target = folder / f"{tag}-{name}.jsonl"
        target.write_bytes(b"\n".join(new) + (b"\n" if ends else b""))
        out.append(target)

    if len(body) < 3:
        return out
    for k in range(6):
        at = rng.randrange(1, len(body))
        line = body[at]
        try:
            data = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue
        new = list(body)
        how = k % 6
        if how == 0:  # a field missing
            keys = [key for key in data if key != "type"]
            data.pop(rng.choice(keys))
            new[at] = orjson.dumps(data)
        elif how == 1:  # a field of another type
            key = rng.choice(list(data))
            data[key] = rng.choice([None, "x", 3, 2.5, [], {}, True])
            new[at] = orjson.dumps(data)
        elif how == 2:  # a broken byte
            i = rng.randrange(len(line))
            new[at] = line[:i] + b"\x01" + line[i + 1 :]
        elif how == 3:  # cut in the middle, and more lines after it
            new[at] = line[: len(line) // 2]
        elif how == 4:  # written by a newer regista
            data["schema_version"] = 99
            new[at] = orjson.dumps(data)
        else:  # out of order, or empty
            new[at] = body[at - 1] if rng.random() < 0.5 else b""
        write(f"{k}-{how}-{at}", new)
    return out


def traces(folder: Path, seeds: int, seed: int) -> list[Path]:
    sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "tests" / "trace")]
    from files import SAMPLES, V1_TRACES, found
    from test_readers_agree import _imported, _session, _variants

    paths: list[Path] = []
    for i in range(seeds):
        s = seed * 1000 + i
        sub = folder / f"s{i}"
        sub.mkdir()
        paths += _variants(_session(sub, s), random.Random(s))
    imported = folder / "imported"
    imported.mkdir()
    paths += found(SAMPLES) + found(V1_TRACES) + _imported(imported)
    # the first megabytes of the benches' dense trace: lines read a piece at a time
    dense = Path("/tmp/regista-bench/dense-200.jsonl")
    if dense.exists():
        with open(dense, "rb") as f:
            head = f.read(3_500_000)
        head = head[: head.rfind(b"\n") + 1]
        for name, data in (("dense-head", head), ("dense-head-half", head + b'{"schema_ver')):
            target = folder / f"{name}.jsonl"
            target.write_bytes(data)
            paths.append(target)
    rng = random.Random(seed)
    changed = folder / "changed"
    changed.mkdir()
    for i, path in enumerate(list(paths)):
        if path.stat().st_size > 1_000_000 or rng.random() < 0.5:
            paths += _changed(path, rng, changed, f"{i}-{path.stem}")
    return paths


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--before", type=Path, required=True)
    parser.add_argument("--seeds", type=int, default=12)
    parser.add_argument("--seed", type=int, default=1212)
    parser.add_argument("--big", action="store_true", help="the 200 MB bench traces too")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            paths = traces(folder, args.seeds, args.seed)
        jobs = [
            [["show", str(p), *extra], columns]
            for p in paths
            for extra in ARGS
            for columns in WIDTHS
        ]
        if args.big:
            for name in ("dense-200.jsonl", "real-200.jsonl"):
                big = Path("/tmp/regista-bench") / name
                jobs += [[["show", str(big)], "100"], [["show", str(big), "--json"], "100"]]
        (folder / "jobs.json").write_text(json.dumps(jobs))
        said = {}
        for label, tree in (("before", args.before.resolve()), ("now", ROOT)):
            env = dict(os.environ, PYTHONPATH=str(tree))
            out = folder / f"{label}.json"
            subprocess.run(
                [sys.executable, __file__, "--child", str(folder / "jobs.json"), str(out)],
                env=env,
                check=True,
            )
            said[label] = json.loads(out.read_text())
        differ = 0
        errors = 0
        for job, before, now in zip(jobs, said["before"], said["now"], strict=True):
            errors += before[2] != 0
            if before != now:
                differ += 1
                if differ <= 5:
                    print("DIFFERS:", job)
                    for part, b, n in zip(("out", "err", "code"), before, now, strict=True):
                        if b != n:
                            print(f"  {part} before: {str(b)[-600:]!r}")
                            print(f"  {part} now:    {str(n)[-600:]!r}")
        print(f"{len(paths)} traces, {len(jobs)} runs ({errors} refused a trace): {differ} differ")
        sys.exit(1 if differ else 0)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        _child(sys.argv[2], sys.argv[3])
    else:
        main()
