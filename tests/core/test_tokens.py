"""The fast way :func:`regista.tokens.tokens_of` reads a usage says what its general one says."""

from __future__ import annotations

import os
import random
from typing import Any

from regista.tokens import Tokens, token_totals, tokens_of

_SEED = int(os.environ.get("REGISTA_FUZZ_SEED", "1212"))


def _slow(raw: dict[str, Any]) -> Tokens:
    """What tokens_of says of a usage with a key its fast path does not read."""
    return tokens_of({**raw, "cache_creation": None})


def test_a_plain_usage_reads_as_the_general_path_reads_it() -> None:
    """Seeded: usages of four counts (and some with an odd value, which the general path
    reads or refuses) read the same through the fast path."""
    rng = random.Random(_SEED + 1)
    values: list[Any] = [0, 1, 5, 10**6, -3, None, 2.0, True, "7"]
    keys = [
        "input_tokens",
        "output_tokens",
        "cache_creation_input_tokens",
        "cache_read_input_tokens",
    ]
    for _ in range(400):
        raw = {k: rng.choice(values) for k in keys if rng.random() < 0.8}
        try:
            want: Any = _slow(raw)
        except ValueError as exc:
            want = type(exc)
        try:
            got: Any = tokens_of(raw)
        except ValueError as exc:
            got = type(exc)
        assert got == want, raw
    plain = [{k: rng.randrange(1000) for k in keys} for _ in range(50)]
    assert token_totals(plain) == token_totals([_slow(u) for u in plain])
