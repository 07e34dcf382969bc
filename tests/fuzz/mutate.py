"""Seeded mutations of valid traces, for the fuzz tests.

``mutations(seed_traces, n, seed)`` yields ``n`` corrupt variants of the given traces: a
value anywhere inside an event replaced (wrong type, huge, deep, odd number), a key
deleted, or the bytes damaged (a flipped byte, a cut, a line dropped, doubled or moved).
The same ``seed`` gives the same variants, so every failure names what reproduces it.

``REGISTA_FUZZ_ITERATIONS`` sets how many variants each fuzz test tries (a long run:
``REGISTA_FUZZ_ITERATIONS=3000 pytest tests/fuzz``; docs/faults.md gives its time and
memory); ``REGISTA_FUZZ_SEED`` the seed. The variants are made one at a time and each
test removes a variant's files when it is done with them, so a long run's memory and disk
do not grow with its length.
"""

from __future__ import annotations

import os
import random
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import orjson

__all__ = ["Failures", "Variant", "iterations", "mutations"]

_ODD_VALUES: list[Any] = [
    None,
    True,
    False,
    0,
    -1,
    7,
    1.5,
    -2.5e300,
    2**70,
    "",
    "x",
    "💥\u0000\ud7ff",
    [],
    {},
    [1, "a", None],
    {"a": 1},
    {"type": "text"},
    {"type": "tool_use"},
    {"type": "tool_result", "content": 5},
    [{"type": 3}],
    [{"role": "user", "content": 1}],
]


def iterations(default: int, *, cost: int = 1) -> int:
    """The variants a fuzz test tries: ``REGISTA_FUZZ_ITERATIONS``, else ``default``.

    Args:
        default: The count of a default (quick) run.
        cost: How many of the CLI fuzz's variants one of this test's variants costs in
            time: a long run gives it one variant for each ``cost`` asked (never fewer
            than ``default``), so that the run ends in a time the docs can state.
    """
    value = os.environ.get("REGISTA_FUZZ_ITERATIONS")
    return max(int(value) // cost, default) if value else default


def base_seed() -> int:
    return int(os.environ.get("REGISTA_FUZZ_SEED", "1212"))


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield prefix
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _paths(v, (*prefix, k))
    elif isinstance(value, list):
        for i, v in enumerate(value[:50]):
            yield from _paths(v, (*prefix, i))


def _deep(levels: int, leaf: Any) -> Any:
    value = leaf
    for i in range(levels):
        value = [value] if i % 2 else {"k": value}
    return value


def _odd_value(rng: random.Random) -> Any:
    roll = rng.random()
    if roll < 0.06:
        return "y" * rng.choice([1000, 100_000])
    if roll < 0.12:
        return _deep(rng.choice([40, 200, 600]), "leaf")
    return rng.choice(_ODD_VALUES)


def _mutate_event(rng: random.Random, event: dict[str, Any]) -> dict[str, Any]:
    paths = [p for p in _paths(event) if p]
    if not paths:
        return event
    path = rng.choice(paths)
    parent: Any = event
    for key in path[:-1]:
        parent = parent[key]
    last = path[-1]
    roll = rng.random()
    if roll < 0.15 and isinstance(parent, dict):
        del parent[last]
    elif roll < 0.25 and isinstance(parent[last], str) and parent[last]:
        text = parent[last]
        cut = rng.randrange(len(text))
        parent[last] = text[:cut] + rng.choice(["", "\u2028", '"', "\\", "é"]) + text[cut + 1 :]
    elif (
        roll < 0.35 and isinstance(parent[last], int | float) and not isinstance(parent[last], bool)
    ):
        parent[last] = rng.choice([-1, 0, 2**63, -(2**63), 10**30, 0.5])
    else:
        parent[last] = _odd_value(rng)
    return event


def _damage_bytes(rng: random.Random, data: bytes) -> bytes:
    lines = data.split(b"\n")[:-1]
    roll = rng.random()
    if roll < 0.25 and data:
        pos = rng.randrange(len(data))
        return data[:pos] + bytes([rng.randrange(256)]) + data[pos + 1 :]
    if roll < 0.45 and data:
        return data[: rng.randrange(len(data))]
    if roll < 0.6 and len(lines) > 1:
        del lines[rng.randrange(len(lines))]
    elif roll < 0.75 and lines:
        i = rng.randrange(len(lines))
        lines.insert(i, lines[i])
    elif roll < 0.9 and len(lines) > 2:
        i, j = rng.sample(range(len(lines)), 2)
        lines[i], lines[j] = lines[j], lines[i]
    else:
        return data + rng.choice([b"\n", b"{}\n", b"[]\n", b"null\n", b"\xff\xfe\n"])
    return b"\n".join(lines) + b"\n"


@dataclass
class Variant:
    """One mutated trace and how it was made."""

    name: str
    data: bytes
    how: str


def mutations(seeds: dict[str, bytes], n: int, seed: int) -> Iterator[Variant]:
    """``n`` seeded corrupt variants of the traces in ``seeds`` (name -> bytes)."""
    rng = random.Random(seed)
    names = sorted(seeds)
    for i in range(n):
        name = rng.choice(names)
        data = seeds[name]
        if rng.random() < 0.25:
            yield Variant(name, _damage_bytes(rng, data), f"seed={seed} #{i} bytes of {name}")
            continue
        lines = data.split(b"\n")[:-1]
        k = rng.randrange(len(lines))
        event = _mutate_event(rng, orjson.loads(lines[k]))
        try:
            lines[k] = orjson.dumps(event)
        except (TypeError, orjson.JSONEncodeError):  # nested past orjson's limit
            lines[k] = orjson.dumps({"deep": "cut"})
        yield Variant(name, b"\n".join(lines) + b"\n", f"seed={seed} #{i} line {k + 1} of {name}")


@dataclass
class Failures:
    """Non-regista exceptions met while fuzzing, grouped by where and what."""

    found: dict[tuple[str, str], list[str]] = field(default_factory=dict)

    def run(self, where: str, variant: Variant, fn: Callable[[], Any]) -> Any:
        from regista import RegistaError

        try:
            return fn()
        except RegistaError as exc:
            assert "\n" not in str(exc).strip() or where.startswith("diff"), (
                f"{where}: a multi-line error for {variant.how}: {exc}"
            )
            return None
        except Exception as exc:  # the thing being hunted
            frame = traceback.extract_tb(exc.__traceback__)[-1]
            key = (where, f"{type(exc).__name__} at {frame.filename}:{frame.lineno}")
            self.found.setdefault(key, []).append(f"{variant.how}: {str(exc)[:200]}")
            return None

    def note(self, where: str, variant: Variant, what: str) -> None:
        self.found.setdefault((where, what), []).append(variant.how)

    def report(self) -> str:
        lines = []
        for (where, what), hows in sorted(self.found.items()):
            lines.append(f"{where}: {what} ({len(hows)}x), e.g. {hows[0]}")
        return "\n".join(lines)
