"""A realistic big trace, written by the real agent loop: ``realistic_trace(path, mb)``.

An agent with a ≈2 KB system prompt and 8 tools works through a long task with the offline
``ScriptedProvider``: each turn it says a sentence or two and calls one tool, whose result is
≈3 KB ± 50 % of agent-like text (file listings, code, search hits, logs). The conversation
is compacted past 40k estimated tokens, as a long-running agent's would be. The loop writes
the trace through ``TraceWriter``, so the file follows whatever trace schema this regista
writes (request deltas, request hashes and all); the median line is some hundreds of bytes.
The session stops once the file passes the requested size. Seeded: the same size gives the
same session (timestamps aside).

    .venv/bin/python bench/realistic.py [--mb 200] [--out /tmp/regista-bench/real-200.jsonl]
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


def _make_tools(rng: random.Random) -> list[Any]:
    def out() -> str:
        return _text(rng, int(3000 * rng.uniform(0.5, 1.5)))

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


def realistic_trace(path: Path, mb: float = 200.0, *, seed: int = 11) -> Path:
    """Write (once; kept if it exists in the schema this regista writes) a realistic trace
    of about ``mb`` megabytes."""
    if path.exists() and current_schema(path):
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
        name, args = rng.choice(_CALLS)
        say = " ".join(rng.choices(WORDS, k=rng.randrange(8, 40))).capitalize() + "."
        return {
            "content": [
                {"type": "text", "text": say},
                {"type": "tool_use", "id": f"toolu_{turn:06d}", "name": name, "input": args(rng)},
            ],
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
        tools=_make_tools(random.Random(seed + 1)),
        provider=ScriptedProvider(model),
        max_turns=10_000_000,
        context=ContextConfig(max_tokens=40_000, keep_last=4),
        trace_dir=part.parent,
        session_id="01JREAL" + "0" * 19,
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


def line_sizes(path: Path) -> list[int]:
    with open(path, "rb") as f:
        return [len(line) for line in f]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mb", type=float, default=200.0)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    out = args.out or DIR / f"real-{args.mb:g}.jsonl"
    out.parent.mkdir(parents=True, exist_ok=True)
    t = time.perf_counter()
    realistic_trace(out, args.mb)
    sizes = line_sizes(out)
    print(
        f"{out}: {out.stat().st_size / 1e6:.1f} MB, {len(sizes)} lines, "
        f"median line {statistics.median(sizes):.0f} B ({time.perf_counter() - t:.1f} s)"
    )


if __name__ == "__main__":
    main()
