"""A realistic big trace, written by the real agent loop: ``realistic_trace(path, mb)``.

An agent with a ≈2 KB system prompt and 8 tools works through a long task with the offline
``ScriptedProvider``: each turn it says a sentence or two and calls one tool, whose result is
≈3 KB ± 50 % of agent-like text (file listings, code, search hits, logs). The conversation
is compacted past 40k estimated tokens, as a long-running agent's would be. The loop writes
the trace through ``TraceWriter``, so the file follows whatever trace schema this regista
writes (request deltas, request hashes and all); the median line is some hundreds of bytes.
The session stops once the file passes the requested size. Seeded: the same size gives the
same session (timestamps aside).

Two shapes (``--shape``):

- ``dense`` (the default): as dense as what the recorder writes of a real coding-agent
  session, about 1.7× the steps per megabyte of ``sparse``. Most tool results are short
  (an edit's confirmation, a few lines of shell output or of search hits), some are whole
  files; a third of the model calls ask for two tools at once; the model's words are
  shorter. File ``dense-<mb>.jsonl``.
- ``sparse``: every tool result ≈3 KB ± 50 % and one tool per call (the generator as it
  was; the figures measured before the dense shape are of it). File ``real-<mb>.jsonl``.

    .venv/bin/python bench/realistic.py [--mb 200] [--shape dense|sparse] [--out PATH]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import time
from pathlib import Path
from typing import Any

import orjson

from regista.agent import Agent
from regista.context import ContextConfig
from regista.providers.scripted import ScriptedProvider
from regista.tools import tool
from regista.types import LlmRequest

_VOCABULARY = (
    "the a of to in and is for on with that this it as be by are from at or an not we "
    "function return value error file config test build request response session cache "
    "user order refund ledger account invoice payment status update query index table "
    "module import class method parse write read open close timeout retry deploy server "
    "client token stream event trace step model tool result field schema version path"
)
WORDS = _VOCABULARY.split()

SYSTEM = (
    "You are a meticulous software engineering agent working in a large repository. "
    "Read before you write; keep changes small; run the tests after every change. "
    + " ".join(f"Rule {i}: {' '.join(random.Random(i).choices(WORDS, k=22))}." for i in range(14))
)

DIR = Path("/tmp/regista-bench")

#: The shapes of session this module writes (see the module's doc); the first is the default.
SHAPES = ("dense", "sparse")
#: Each shape's session id: a file kept from another shape is made again.
_SESSION = {"dense": "01JDENSE" + "0" * 18, "sparse": "01JREAL" + "0" * 19}


def trace_path(mb: float, shape: str = SHAPES[0], folder: Path = DIR) -> Path:
    """Where the benches keep the realistic trace of ``mb`` megabytes of ``shape``."""
    return folder / f"{'real' if shape == 'sparse' else shape}-{mb:g}.jsonl"


def _result_size(rng: random.Random, shape: str) -> int:
    """The length of one tool result: ≈3 KB ± 50 % (``sparse``), or as a coding agent's
    are (``dense``): many short ones, some files."""
    if shape == "sparse":
        return int(3000 * rng.uniform(0.5, 1.5))
    roll = rng.random()
    if roll < 0.52:  # an edit's confirmation, a test's verdict, a short listing
        return rng.randrange(60, 400)
    if roll < 0.85:  # some lines of shell output or search hits
        return rng.randrange(400, 2000)
    return rng.randrange(2000, 6000)  # a file read whole


def _text(rng: random.Random, size: int) -> str:
    """About ``size`` characters of agent-like tool output, in one of a few shapes."""
    shape = rng.randrange(4)
    lines: list[str] = []
    n = 0
    while n < size:
        if shape == 0:  # a file listing
            line = (
                f"{rng.choice('-d')}rw-r--r--  1 dev dev {rng.randrange(100, 99999):>6} "
                f"src/{rng.choice(WORDS)}/{rng.choice(WORDS)}_{rng.randrange(99)}.py"
            )
        elif shape == 1:  # code
            indent = "    " * rng.randrange(3)
            line = f"{indent}{rng.choice(WORDS)} = {rng.choice(WORDS)}({rng.choice(WORDS)}, "
            line += f"{rng.choice(WORDS)}={rng.randrange(1000)})"
        elif shape == 2:  # search hits
            line = f"{rng.choice(WORDS)}.py:{rng.randrange(1, 900)}: " + " ".join(
                rng.choices(WORDS, k=rng.randrange(5, 14))
            )
        else:  # log lines
            line = (
                f"2026-07-02T18:{rng.randrange(60):02}:{rng.randrange(60):02}Z "
                f"{rng.choice(['INFO', 'INFO', 'DEBUG', 'WARN'])} "
                + " ".join(rng.choices(WORDS, k=rng.randrange(6, 16)))
            )
        lines.append(line)
        n += len(line) + 1
    return "\n".join(lines)


def _make_tools(rng: random.Random, shape: str = "sparse") -> list[Any]:
    def out() -> str:
        return _text(rng, _result_size(rng, shape))

    @tool
    def read_file(path: str) -> str:
        """Read a file of the repository."""
        return out()

    @tool
    def write_file(path: str, content: str) -> str:
        """Write a file of the repository (replacing it)."""
        return out()

    @tool
    def list_dir(path: str) -> str:
        """List a folder of the repository."""
        return out()

    @tool
    def grep(pattern: str, path: str = ".") -> str:
        """Search the repository for a regular expression."""
        return out()

    @tool
    def run_tests(selector: str = "") -> str:
        """Run the test suite (or the tests matching a selector)."""
        return out()

    @tool
    def run_shell(command: str) -> str:
        """Run a shell command in the repository."""
        return out()

    @tool
    def search_docs(query: str) -> str:
        """Search the project's documentation."""
        return out()

    @tool
    def git_diff(ref: str = "HEAD") -> str:
        """Show the working tree's changes against a ref."""
        return out()

    return [read_file, write_file, list_dir, grep, run_tests, run_shell, search_docs, git_diff]


_CALLS = [
    ("read_file", lambda r: {"path": f"src/{r.choice(WORDS)}/{r.choice(WORDS)}.py"}),
    ("list_dir", lambda r: {"path": f"src/{r.choice(WORDS)}"}),
    ("grep", lambda r: {"pattern": f"def {r.choice(WORDS)}_", "path": "src"}),
    ("run_tests", lambda r: {"selector": f"tests/test_{r.choice(WORDS)}.py"}),
    ("run_shell", lambda r: {"command": f"python -m {r.choice(WORDS)} --check"}),
    ("search_docs", lambda r: {"query": " ".join(r.choices(WORDS, k=3))}),
    ("git_diff", lambda r: {"ref": "HEAD~1"}),
    (
        "write_file",
        lambda r: {"path": f"src/{r.choice(WORDS)}.py", "content": _text(r, 400)},
    ),
]


def current_schema(path: Path) -> bool:
    """Whether the trace at ``path`` was written in the schema this regista writes (a file
    kept from an older regista measures the migrating reader, not today's traces)."""
    from regista.trace.events import SCHEMA_VERSION

    with open(path, "rb") as f:
        first = f.readline()
    try:
        return bool(orjson.loads(first).get("schema_version") == SCHEMA_VERSION)
    except (orjson.JSONDecodeError, AttributeError):
        return False


def _session_of(path: Path) -> str | None:
    with open(path, "rb") as f:
        first = f.readline()
    try:
        sid = orjson.loads(first).get("session_id")
    except (orjson.JSONDecodeError, AttributeError):
        return None
    return sid if isinstance(sid, str) else None


def realistic_trace(
    path: Path, mb: float = 200.0, *, seed: int = 11, shape: str = SHAPES[0]
) -> Path:
    """Write (once; kept if it exists in the schema this regista writes, of the same
    shape) a realistic trace of about ``mb`` megabytes (``shape``: see the module's doc)."""
    if shape not in SHAPES:
        raise ValueError(f"shape {shape!r}: one of {', '.join(SHAPES)}")
    if path.exists() and current_schema(path) and _session_of(path) == _SESSION[shape]:
        return path
    rng = random.Random(seed)
    target = int(mb * 1e6)
    part = path.with_suffix(".part")
    part.unlink(missing_ok=True)
    turn = 0

    def model(request: LlmRequest) -> dict[str, Any]:
        nonlocal turn
        turn += 1
        if part.exists() and part.stat().st_size >= target:
            return {
                "content": [{"type": "text", "text": "All done: the tests pass."}],
                "stop_reason": "end_turn",
                "usage": {"input_tokens": 900, "output_tokens": 12},
            }
        if request.system and request.system.startswith("You summarise"):
            words = " ".join(rng.choices(WORDS, k=300))
            return {
                "content": [{"type": "text", "text": f"Summary so far: {words}"}],
                "stop_reason": "end_turn",
                "usage": {"input_tokens": 30000, "output_tokens": 400},
            }
        dense = shape == "dense"
        calls = 2 if dense and rng.random() < 0.33 else 1
        uses = []
        for k in range(calls):
            name, args = rng.choice(_CALLS)
            uid = f"toolu_{turn:06d}" + (f"_{k}" if k else "")
            uses.append({"type": "tool_use", "id": uid, "name": name, "input": args(rng)})
        words = rng.randrange(4, 20) if dense else rng.randrange(8, 40)
        say = " ".join(rng.choices(WORDS, k=words)).capitalize() + "."
        return {
            "content": [{"type": "text", "text": say}, *uses],
            "stop_reason": "tool_use",
            "usage": {
                "input_tokens": rng.randrange(2000, 40000),
                "output_tokens": rng.randrange(20, 400),
                "cache_read_input_tokens": rng.randrange(0, 30000),
            },
        }

    agent = Agent(
        model="claude-sonnet-4-6",
        instructions=SYSTEM,
        tools=_make_tools(random.Random(seed + 1), shape),
        provider=ScriptedProvider(model),
        max_turns=10_000_000,
        context=ContextConfig(max_tokens=40_000, keep_last=4),
        trace_dir=part.parent,
        session_id=_SESSION[shape],
    )
    default = part.parent / f"{agent.session_id}.jsonl"
    default.unlink(missing_ok=True)
    # The loop names the file after the session; write there, then move it into place.
    part.symlink_to(default.name)
    try:
        asyncio.run(agent.run("Refactor the ledger module and keep every test green."))
    finally:
        part.unlink(missing_ok=True)
    default.rename(path)
    return path


def step_count(path: Path) -> int:
    """How many steps the trace at ``path`` holds."""
    from regista.trace.index import TraceIndex

    index = TraceIndex(path)
    try:
        index.scan()
        return len(index)
    finally:
        index.close()


def line_sizes(path: Path) -> list[int]:
    with open(path, "rb") as f:
        return [len(line) for line in f]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mb", type=float, default=200.0)
    parser.add_argument("--shape", choices=SHAPES, default=SHAPES[0])
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    out = args.out or trace_path(args.mb, args.shape)
    out.parent.mkdir(parents=True, exist_ok=True)
    t = time.perf_counter()
    realistic_trace(out, args.mb, shape=args.shape)
    sizes = line_sizes(out)
    mb = out.stat().st_size / 1e6
    print(
        f"{out}: {mb:.1f} MB, {len(sizes)} lines, {step_count(out) / mb:.0f} steps/MB, "
        f"median line {statistics.median(sizes):.0f} B ({time.perf_counter() - t:.1f} s)"
    )


if __name__ == "__main__":
    main()
