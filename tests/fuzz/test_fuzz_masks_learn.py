"""Seeded fuzz of learning masks: texts with volatile values of every kind, and hostile
text around them. The learned masks make the two texts equal, or what they do not cover is
reported as a real difference; learning never raises."""

from __future__ import annotations

import random
import string
import uuid

from mutate import base_seed, iterations

from regista.diff.learn import Learned, _learn_span, _masks, _spans
from regista.diff.masks import MaskSet


def _value(rng: random.Random, kind: str) -> str:
    if kind == "uuid":
        return str(uuid.UUID(int=rng.getrandbits(128)))
    if kind == "timestamp":
        return (
            f"20{rng.randint(10, 40)}-{rng.randint(1, 12):02}-{rng.randint(1, 28):02}T"
            f"{rng.randint(0, 23):02}:{rng.randint(0, 59):02}:{rng.randint(0, 59):02}Z"
        )
    if kind == "duration":
        return f"{rng.randint(1, 99999)} ms"
    if kind == "temp":
        return "/tmp/" + "".join(rng.choices(string.ascii_lowercase, k=rng.randint(1, 8)))
    if kind == "id":
        return "req_" + "".join(rng.choices(string.ascii_letters + string.digits, k=12))
    if kind == "hex":
        return "".join(rng.choices("0123456789abcdef", k=rng.randint(8, 40)))
    return str(rng.randint(0, 10**9))


_KINDS = ("uuid", "timestamp", "duration", "temp", "id", "hex", "number")
_WORDS = ["the", "order", "was", "booked", "at", "in", "took", "id:", "«", "»", "\n", "✓", "\\"]


def _text(rng: random.Random, values: list[str]) -> str:
    parts: list[str] = []
    for v in values:
        parts += rng.choices(_WORDS, k=rng.randint(1, 4))
        parts.append(v)
    parts += rng.choices(_WORDS, k=rng.randint(0, 3))
    return " ".join(parts)


def test_learned_masks_cover_what_they_learn_from() -> None:
    rng = random.Random(base_seed())
    for _ in range(iterations(300)):
        kinds = rng.choices(_KINDS, k=rng.randint(1, 4))
        words = rng.random()
        a = _text(random.Random(words), [_value(rng, k) for k in kinds])
        # the same words around other values of the same kinds
        b = _text(random.Random(words), [_value(rng, k) for k in kinds])
        seen: dict = {}
        learned = Learned()
        for span in _spans(a, b):
            _learn_span(span, 0, "system", "a", "b", seen, learned)
        masks = MaskSet(_masks(seen))
        ma, _ = masks.apply({"system": a, "messages": []})
        mb, _ = masks.apply({"system": b, "messages": []})
        assert ma == mb, (a, b, ma, mb, learned.real)


def test_hostile_pairs_never_raise() -> None:
    rng = random.Random(base_seed() + 1)
    alphabet = string.printable + "«»µ✓\u0000\u200b"
    for _ in range(iterations(300)):
        a = "".join(rng.choices(alphabet, k=rng.randint(0, 80)))
        b = "".join(rng.choices(alphabet, k=rng.randint(0, 80)))
        seen: dict = {}
        learned = Learned()
        for span in _spans(a, b):
            _learn_span(span, 0, "system", "a", "b", seen, learned)
        masks = MaskSet(_masks(seen))  # every learned mask is a valid mask
        masks.apply({"system": a, "messages": [{"role": "user", "content": b}]})
