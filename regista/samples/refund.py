"""A customer-support refund agent: four tools on a local shop database, and a policy.

The tools do real work on a SQLite database made on the fly (see ``orders_db``): set
``REGISTA_SAMPLE_DB`` to keep it at a path of your choice and look at the refunds and the
outbox afterwards. The model is the offline demo model (``demo_model.refund_model``),
so the agent runs with no key and no network; give it another ``provider`` to use a real
one. The factories take no required arguments, so a trace's ``agent_ref`` (for example
``"regista.samples.refund:refund_agent"``) re-creates the agent for replay and forks.

- ``refund_agent``: a healthy shop; the sample task succeeds.
- ``refund_agent_stale_index``: the search index misses the newest orders, so the same
  task ends in a search loop (until ``max_turns``) unless a search result is fixed.
- ``refund_agent_small_context``: a small context budget, so long sessions compact.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Any

from regista import samples
from regista.agent import Agent
from regista.context import ContextConfig
from regista.policy import Decision, ToolCallInfo
from regista.providers.base import Provider
from regista.providers.scripted import ScriptedProvider
from regista.samples.demo_model import refund_model
from regista.samples.orders_db import OrdersDb
from regista.tools import Tool, tool

__all__ = [
    "CLOCK_ENV",
    "DB_ENV",
    "INSTRUCTIONS",
    "MAX_REFUND",
    "TASK_HAPPY",
    "TASK_TWO_ORDERS",
    "demo_provider",
    "make_tools",
    "refund_agent",
    "refund_agent_small_context",
    "refund_agent_stale_index",
    "refund_policy",
]

#: Environment variable naming the shop database file (created and seeded if missing).
DB_ENV = "REGISTA_SAMPLE_DB"

#: Refunds above this amount (USD) need a supervisor: the policy denies them.
MAX_REFUND = 500.0

MODEL = "claude-sonnet-4-6"

INSTRUCTIONS = (
    "You are a customer-support agent for an outdoor and office equipment shop. Find the "
    "customer's order with search_orders or get_order, check it with get_order, refund it "
    "with issue_refund, and email the customer with send_email. Refunds over "
    f"${MAX_REFUND:.2f} need a supervisor's approval: if one is denied, tell the customer it "
    "will be reviewed. Never refund an order that belongs to someone else."
)

TASK_HAPPY = (
    "Customer Dana Whitfield (dana.whitfield@example.com) writes that the "
    '"Trailblazer 2" tent she ordered arrived with a snapped pole. Find her order, refund '
    "it in full and email her a confirmation."
)

TASK_TWO_ORDERS = (
    'Sam Okafor (sam.okafor@example.com) returned the "Standing desk" (order ORD-2001) '
    'and the "Monitor arm" (order ORD-2030) and asks for a refund of both.'
)


def make_tools(db: OrdersDb) -> list[Tool]:
    """The agent's tools, working on ``db``."""

    # Async tools doing their SQLite work inline: it is local and sub-millisecond, so a
    # worker thread per call would cost more than the work.
    @tool
    async def search_orders(query: str, limit: int = 5) -> dict[str, Any]:
        """Search the shop's orders (by customer name, email, product or order id).

        Args:
            query: Words that must all appear in the order.
            limit: At most this many orders are returned.
        """
        return {"query": query, "matches": db.search(query, limit)}

    @tool
    async def get_order(order_id: str) -> dict[str, Any]:
        """Fetch one order with its status and what has been refunded.

        Args:
            order_id: The order id, e.g. ORD-1042.
        """
        return db.get(order_id)

    @tool
    async def issue_refund(order_id: str, amount: float, reason: str) -> dict[str, Any]:
        """Refund an order (in full or in part) to the customer's card.

        Args:
            order_id: The order to refund.
            amount: The amount in USD.
            reason: Why, in a few words (kept on the refund record).
        """
        return db.refund(order_id, amount, reason)

    @tool
    async def send_email(to: str, subject: str, body: str) -> dict[str, Any]:
        """Email a customer (queued in the shop's outbox).

        Args:
            to: The customer's email address.
            subject: The subject line.
            body: The message, in plain text.
        """
        return db.send(to, subject, body)

    return [search_orders, get_order, issue_refund, send_email]


def refund_policy(call: ToolCallInfo) -> bool | Decision:
    """Refunds over :data:`MAX_REFUND` need a supervisor; everything else may run."""
    if call.name == "issue_refund":
        try:
            amount = float(call.input.get("amount", 0))
        except (TypeError, ValueError):
            return Decision(False, "the refund amount is not a number")
        if amount > MAX_REFUND:
            return Decision(False, f"refunds over ${MAX_REFUND:.2f} need a supervisor's approval")
    return True


#: Seconds each answer of the demo model takes, when set (else :data:`regista.samples.demo_delay`).
DELAY_ENV = "REGISTA_DEMO_DELAY"


def demo_provider() -> Provider:
    """The offline demo model, as a provider (it says "scripted" wherever it is shown)."""
    raw = os.environ.get(DELAY_ENV)
    try:
        delay = samples.demo_delay if raw is None else float(raw or 0)
    except ValueError:
        delay = 0.0
    return ScriptedProvider(refund_model, stream_chunk=6, delay=delay)


def _db(path: str | Path | None, stale_index: bool) -> OrdersDb:
    return OrdersDb(path or os.environ.get(DB_ENV) or None, stale_index=stale_index)


#: A start time (``2026-07-02T09:30:00``) that makes the sample agents keep a fake clock,
#: so that their runs, and forks of them in other processes, take the same recorded times.
CLOCK_ENV = "REGISTA_SAMPLE_CLOCK"


def _settings(db: OrdersDb, provider: Provider | None, **extra: Any) -> dict[str, Any]:
    start = os.environ.get(CLOCK_ENV)
    if start and "clock" not in extra:
        from regista.clock import FakeClock

        with contextlib.suppress(ValueError):  # not a time: the real clock
            extra["clock"] = FakeClock(start=start)
    settings: dict[str, Any] = {
        "model": MODEL,
        "instructions": INSTRUCTIONS,
        "tools": make_tools(db),
        "provider": provider or demo_provider(),
        "policy": refund_policy,
        "max_turns": 10,
    }
    settings.update(extra)
    return settings


def refund_agent(
    db_path: str | Path | None = None, provider: Provider | None = None, **kwargs: Any
) -> Agent:
    """The refund agent on a healthy shop database.

    Args:
        db_path: The shop database (default: ``$REGISTA_SAMPLE_DB``, else a fresh temporary one).
        provider: Who plays the model (default: the offline demo model).
        **kwargs: More ``Agent`` arguments (``trace_dir``, ``clock``, …).
    """
    return Agent(**_settings(_db(db_path, False), provider, **kwargs))


def refund_agent_stale_index(
    db_path: str | Path | None = None, provider: Provider | None = None, **kwargs: Any
) -> Agent:
    """The refund agent on a shop whose search index misses the newest orders."""
    return Agent(**_settings(_db(db_path, True), provider, **kwargs))


def refund_agent_small_context(
    db_path: str | Path | None = None, provider: Provider | None = None, **kwargs: Any
) -> Agent:
    """The refund agent with a small context budget, so its conversations get compacted."""
    context = ContextConfig(max_tokens=700, keep_last=2, summary_max_tokens=512)
    kwargs.setdefault("context", context)
    return Agent(**_settings(_db(db_path, False), provider, **kwargs))
