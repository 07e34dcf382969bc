"""What the sweep tests share: the sample search-loop trace and its three search results."""

from __future__ import annotations

import json
from pathlib import Path

from files import SAMPLES

#: The sample whose agent searches until max_turns: step 1 is its first search.
LOOP = SAMPLES / "refund_search_loop.jsonl"

FOUND = json.dumps(
    {
        "query": "Dana Whitfield Trailblazer",
        "matches": [
            {
                "order_id": "ORD-1042",
                "customer": "Dana Whitfield",
                "email": "dana.whitfield@example.com",
                "item": "Trailblazer 2 tent",
                "amount": 189.0,
            }
        ],
    }
)
EMPTY = json.dumps({"query": "Dana Whitfield Trailblazer", "matches": []})
DOWN = "search index unavailable"

#: The three variants of the sweep: the order found, nothing found, an outage.
RESULTS = [FOUND, EMPTY, DOWN]


def sweep_argv(out: Path, *more: str) -> list[str]:
    """``regista sweep`` of the sample loop at its first search with the three results."""
    argv = ["sweep", str(LOOP), "--at", "1", "--out", str(out)]
    for result in RESULTS:
        argv += ["--tool-result", result]
    return [*argv, *more]
