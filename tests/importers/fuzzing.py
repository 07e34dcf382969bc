"""Seeded mutations of transcripts for the importers' fuzz tests.

``REGISTA_FUZZ_CASES`` sets how many mutated inputs each fuzz test tries (default 150;
raise it for a long run, e.g. ``REGISTA_FUZZ_CASES=20000``); ``REGISTA_FUZZ_SEED`` gives
them other mutations than the default ones.
"""

from __future__ import annotations

import os
import random
from typing import Any

import orjson

CASES = int(os.environ.get("REGISTA_FUZZ_CASES", "150"))
_SEED = os.environ.get("REGISTA_FUZZ_SEED")


def rng_for(name: str) -> random.Random:
    """The seeded generator of the fuzz test ``name`` (``REGISTA_FUZZ_SEED`` changes it)."""
    return random.Random(f"regista-{name}" + (f"-{_SEED}" if _SEED else ""))


_ODD: list[Any] = [None, 0, -1, 1.5, "", "x", [], {}, [1, "a"], {"type": "text"}, True, "\x00"]


def _mutate_value(rng: random.Random, value: Any, depth: int = 0) -> Any:
    if isinstance(value, dict) and value and depth < 6:
        out = dict(value)
        key = rng.choice(list(out))
        roll = rng.random()
        if roll < 0.3:
            del out[key]
        elif roll < 0.6:
            out[key] = rng.choice(_ODD)
        else:
            out[key] = _mutate_value(rng, out[key], depth + 1)
        return out
    if isinstance(value, list) and value and depth < 6:
        out_l = list(value)
        i = rng.randrange(len(out_l))
        roll = rng.random()
        if roll < 0.3:
            del out_l[i]
        elif roll < 0.5:
            out_l.insert(i, rng.choice(_ODD))
        else:
            out_l[i] = _mutate_value(rng, out_l[i], depth + 1)
        return out_l
    return rng.choice(_ODD)


def mutate(rng: random.Random, data: bytes) -> bytes:
    """A few structural or byte-level changes to a JSON-lines file."""
    lines = data.split(b"\n")
    for _ in range(rng.randint(1, 4)):
        if not lines:
            break
        i = rng.randrange(len(lines))
        roll = rng.random()
        if roll < 0.45:
            try:
                obj = orjson.loads(lines[i])
            except orjson.JSONDecodeError:
                continue
            lines[i] = orjson.dumps(_mutate_value(rng, obj))
        elif roll < 0.6:
            del lines[i]
        elif roll < 0.7:
            lines.insert(i, lines[rng.randrange(len(lines))])
        elif roll < 0.8:
            j = rng.randrange(len(lines))
            lines[i], lines[j] = lines[j], lines[i]
        elif roll < 0.9:
            cut = rng.randrange(len(lines[i]) + 1)
            lines[i] = lines[i][:cut]
        else:
            raw = bytearray(lines[i])
            if raw:
                raw[rng.randrange(len(raw))] = rng.randrange(256)
            lines[i] = bytes(raw)
    return b"\n".join(lines)
