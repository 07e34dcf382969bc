"""The sample refund agent as a plain Anthropic SDK program: ``python sdk_refund_agent.py``.

The same instructions, task and tools as ``regista.samples.refund`` (on a shop whose search
index misses the newest orders), with its own loop: the SDK's ``messages.create``, then the
tools, at most five model calls. It reads its base URL and key from the environment, as any
SDK program does; the tests answer it with the sample's demo model behind a fake provider.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import anthropic

from regista.samples.orders_db import OrdersDb
from regista.samples.refund import INSTRUCTIONS, TASK_HAPPY, make_tools
from regista.tools import ToolRegistry

MAX_CALLS = 5


def main() -> int:
    db = OrdersDb(None, stale_index=True)
    tools = {
        "search_orders": lambda a: {"query": a["query"], "matches": db.search(a["query"], 5)},
        "get_order": lambda a: db.get(a["order_id"]),
        "issue_refund": lambda a: db.refund(a["order_id"], a["amount"], a["reason"]),
        "send_email": lambda a: db.send(a["to"], a["subject"], a["body"]),
    }
    schemas: Any = ToolRegistry(make_tools(db)).schemas()
    client = anthropic.Anthropic(max_retries=0)
    messages: list[dict[str, Any]] = [{"role": "user", "content": TASK_HAPPY}]
    for _ in range(MAX_CALLS):
        msg = client.messages.create(
            model="claude-sonnet-4-6",
            max_tokens=1024,
            system=INSTRUCTIONS,
            tools=schemas,
            messages=messages,  # type: ignore[arg-type]
        )
        messages.append({"role": "assistant", "content": [b.model_dump() for b in msg.content]})
        uses = [b for b in msg.content if b.type == "tool_use"]
        if not uses:
            print("".join(b.text for b in msg.content if b.type == "text"))
            return 0
        results = []
        for use in uses:
            try:
                out = json.dumps(tools[use.name](dict(use.input)))  # type: ignore[arg-type]
                results.append({"type": "tool_result", "tool_use_id": use.id, "content": out})
            except Exception as exc:
                results.append(
                    {"type": "tool_result", "tool_use_id": use.id, "content": str(exc),
                     "is_error": True}
                )  # fmt: skip
        messages.append({"role": "user", "content": results})
    print("gave up")
    return 0


if __name__ == "__main__":
    sys.exit(main())
