"""``regista mcp``'s tools given what a model may send: each call returns JSON or raises one
``RegistaError`` (which the server turns into one clear tool error), never anything else.

The arguments are drawn, seeded, from run names that exist, their starts, paths in and out of
the folder, and hostile strings (empty, NUL, very long, FTS syntax, other scripts); numbers
from the edges. ``REGISTA_FUZZ_SEED`` and ``REGISTA_FUZZ_CASES`` change the draw and its size.
"""

from __future__ import annotations

import os
import random
from pathlib import Path
from typing import Any

import orjson
import pytest
from library import Library, build_library
from mcp_results import stdio

from regista.errors import RegistaError
from regista.store.mcp_server import RunsTools
from regista.trace.reader import Trace

SEED = int(os.environ.get("REGISTA_FUZZ_SEED", "1717"))
CASES = int(os.environ.get("REGISTA_FUZZ_CASES", "300"))

_HOSTILE = [
    "",
    " ",
    "\x00",
    "a\x00b",
    "x" * 5000,
    "../" * 40 + "etc/passwd",
    "/etc/passwd",
    "/dev/zero",
    "..",
    ".",
    "*",
    '"',
    '"unclosed',
    "AND",
    "OR NOT",
    "NEAR(a b)",
    "col:word",
    "^start",
    "a*",
    "-x",
    "(",
    ")",
    "🙂",
    "Ünïcödé Paris",
    "天气",
    "\u202e",
    "2h",
    "3d",
    "2026-07-02",
    "-5h",
    "99999999999d",
    "nonsense",
]
_NUMBERS = [0, 1, -1, 2, 7, 99, -(2**63), 2**63, 2**200, 10**6]


def _names(lib: Library) -> list[str]:
    out: list[str] = []
    for path in (lib.original, lib.forked, lib.unfinished, lib.failed):
        sid = Trace.load(path).session_id
        out += [sid, sid[:6], sid[:1], sid.lower(), str(path), path.name, f"./{path.name}"]
        out += [f"{lib.folder}/../{lib.folder.name}/{path.name}", path.name + ".bak"]
    return out


def _text(rng: random.Random, names: list[str]) -> str:
    pick = rng.random()
    if pick < 0.6:
        value = rng.choice(names)
    elif pick < 0.9:
        value = rng.choice(_HOSTILE)
    else:
        value = "".join(rng.choice(names + _HOSTILE)[:8] for _ in range(rng.randint(1, 4)))
    if rng.random() < 0.1 and value:  # cut or doubled
        value = value[: rng.randrange(len(value))] if rng.random() < 0.5 else value * 2
    return value


def _call(tools: RunsTools, rng: random.Random, names: list[str]) -> tuple[str, list[Any]]:
    name = rng.choice(["list_runs", "run_summary", "get_step", "diff_runs", "recall"])
    number = rng.choice(_NUMBERS) if rng.random() < 0.5 else rng.randrange(8)

    def maybe() -> str | None:
        return None if rng.random() < 0.6 else _text(rng, names)

    args: list[Any] = {
        "list_runs": [rng.random() < 0.5, maybe(), maybe(), maybe(), number],
        "run_summary": [_text(rng, names), number],
        "get_step": [_text(rng, names), number],
        "diff_runs": [_text(rng, names), _text(rng, names)],
        "recall": [_text(rng, names), number],
    }[name]
    return name, args


@pytest.fixture(scope="module")
def lib(tmp_path_factory: pytest.TempPathFactory) -> Library:
    import asyncio

    return asyncio.run(build_library(tmp_path_factory.mktemp("mcp") / "traces"))


def test_fuzzed_tool_calls_return_json_or_one_clear_error(lib: Library) -> None:
    tools = RunsTools(lib.folder)
    names = _names(lib)
    rng = random.Random(SEED)
    failures: list[str] = []
    for case in range(CASES):
        name, args = _call(tools, rng, names)
        try:
            result = getattr(tools, name)(*args)
            orjson.dumps(result)  # what the server sends back
        except RegistaError as exc:
            message = str(exc)
            if not message or "\n" in message or "Traceback" in message:
                failures.append(f"case {case}: {name}{tuple(args)!r:.200}: {message!r:.200}")
        except Exception as exc:  # the failure report: what a model would have been sent
            failures.append(f"case {case}: {name}{tuple(args)!r:.200}: {exc!r:.300}")
    assert not failures, "\n".join(failures[:10])


def test_nothing_outside_the_folder_is_read(lib: Library, tmp_path: Path) -> None:
    outside = tmp_path / "outside.jsonl"
    outside.write_bytes(lib.original.read_bytes())
    (lib.folder / "link.jsonl").symlink_to(outside)
    tools = RunsTools(lib.folder)
    try:
        for run in (str(outside), f"../{outside.name}", "link.jsonl"):
            with pytest.raises(RegistaError):
                tools.run_summary(run)
    finally:
        (lib.folder / "link.jsonl").unlink()


async def test_the_server_answers_hostile_calls_and_lives_on(lib: Library) -> None:
    """Through the ``mcp`` SDK's own client: wrong types, huge numbers, unknown arguments
    and tools each come back as one tool error, and the server answers the next call."""
    import sys

    from mcp import ClientSession, StdioServerParameters

    root = Path(__file__).resolve().parents[2]
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "regista", "mcp", str(lib.folder)], cwd=str(root)
    )
    sid = Trace.load(lib.original).session_id
    hostile: list[tuple[str, dict[str, Any]]] = [
        ("get_step", {"run": sid, "step": "one"}),
        ("get_step", {"run": sid, "step": 2**200}),
        ("get_step", {"run": ["a"], "step": 1}),
        ("get_step", {}),
        ("run_summary", {"run": "x" * 100_000}),
        ("run_summary", {"run": sid, "offset": 2**70}),
        ("list_runs", {"limit": "all", "failed": "maybe"}),
        ("list_runs", {"since": "99999999999d", "forks_of": "\x00"}),
        ("diff_runs", {"run_a": sid, "run_b": "/etc/passwd"}),
        ("recall", {"words": '"unclosed NEAR(', "limit": -(2**63)}),
        ("no_such_tool", {"x": 1}),
    ]
    async with stdio(params) as streams, ClientSession(*streams) as session:
        await session.initialize()
        for name, args in hostile:
            try:
                result = await session.call_tool(name, args)
            except Exception as exc:  # an error the SDK raises for the call: still an answer
                assert "Traceback" not in str(exc)
                continue
            text = " ".join(getattr(c, "text", "") for c in result.content)
            assert "Traceback" not in text, (name, args, text[:500])
            if getattr(result, "isError", None) or getattr(result, "is_error", None):
                assert len(text) < 2000, (name, text[:500])  # a name is not echoed whole
        after = await session.call_tool("get_step", {"run": sid, "step": 1})
        assert not (getattr(after, "isError", None) or getattr(after, "is_error", None))
