"""A realistic growing agent session, the same one for every trace-size and write bench.

About a 2 KB system prompt, 8 tool schemas, and tool results of 3 KB ± 50 %; each model
call asks for one tool, and every request carries the whole history, as agents send it.
Everything is seeded: two runs make the same calls and the same results.

    from realistic_session import make_agent, model_answer
"""

from __future__ import annotations

import hashlib
import random
from pathlib import Path
from typing import Any

from regista import Agent, tool
from regista.loop import FakeClock
from regista.providers import ScriptedProvider
from regista.providers.base import Provider

CALLS = 200

_WORDS = [
    "order",
    "refund",
    "customer",
    "shipment",
    "invoice",
    "warehouse",
    "parcel",
    "delayed",
    "carrier",
    "tracking",
    "status",
    "payment",
    "card",
    "declined",
    "address",
    "billing",
    "subscription",
    "renewal",
    "plan",
    "discount",
    "coupon",
    "return",
    "label",
    "damaged",
    "item",
    "replacement",
    "stock",
    "supplier",
    "batch",
    "ticket",
    "escalated",
    "priority",
    "agent",
    "note",
    "policy",
    "window",
    "days",
    "eligible",
    "partial",
    "full",
    "credit",
    "balance",
    "ledger",
]

SYSTEM = "\n\n".join(
    [
        "You are the support agent of an online shop. You help customers with orders, "
        "refunds, shipping and accounts, using the tools you are given. Be precise and brief.",
        "Rules:\n"
        + "\n".join(
            f"{i}. "
            + " ".join(random.Random(i).choice(_WORDS) for _ in range(22)).capitalize()
            + "."
            for i in range(1, 12)
        ),
        "Never refund more than the amount paid. Never reveal another customer's data. "
        "When a tool fails, say so and try another way before giving up. Quote order ids "
        "exactly as the tools return them (e.g. ORD-1042). Sign every email 'The Shop'.",
    ]
)


def _result_text(key: str) -> str:
    """Deterministic tool output of 3 KB ± 50 %, in the shape tools return (JSON-ish)."""
    rng = random.Random(hashlib.sha256(key.encode()).digest())
    size = rng.randint(1536, 4608)
    rows = []
    total = 0
    while total < size:
        row = (
            f'{{"id": "ORD-{rng.randint(1000, 9999)}", "status": "{rng.choice(_WORDS)}", '
            f'"amount": {rng.randint(5, 900)}.{rng.randint(0, 99):02d}, "note": "'
            + " ".join(rng.choice(_WORDS) for _ in range(rng.randint(4, 14)))
            + '"}'
        )
        rows.append(row)
        total += len(row) + 2
    return ("[" + ",\n".join(rows) + "]")[:size]


@tool
def search_orders(query: str, limit: int = 10, status: str | None = None) -> str:
    """Search the shop's orders by customer name, email or words of the items.

    Args:
        query: Words that must all appear in the order.
        limit: At most this many orders are returned.
        status: Only orders with this status (paid, shipped, delivered, refunded).
    """
    return _result_text(f"search_orders:{query}:{limit}:{status}")


@tool
def get_order(order_id: str) -> str:
    """Fetch one order with its items, payments, shipments and refunds.

    Args:
        order_id: The order id, e.g. ORD-1042.
    """
    return _result_text(f"get_order:{order_id}")


@tool
def get_customer(customer_id: str, include_history: bool = False) -> str:
    """Fetch a customer's account: contact details, plan, balance and open tickets.

    Args:
        customer_id: The customer id, e.g. CUS-77.
        include_history: Also return the last 50 account events.
    """
    return _result_text(f"get_customer:{customer_id}:{include_history}")


@tool
def list_refunds(order_id: str | None = None, since_days: int = 30) -> str:
    """List refunds, newest first.

    Args:
        order_id: Only the refunds of this order.
        since_days: Only refunds of the last this many days.
    """
    return _result_text(f"list_refunds:{order_id}:{since_days}")


@tool
def issue_refund(order_id: str, amount: float, reason: str) -> str:
    """Refund part or all of an order to the card it was paid with.

    Args:
        order_id: The order to refund.
        amount: The amount, at most what was paid and not yet refunded.
        reason: Why, in a few words (shown to the customer).
    """
    return _result_text(f"issue_refund:{order_id}:{amount}:{reason}")


@tool
def send_email(to: str, subject: str, body: str) -> str:
    """Send an email to a customer from the support address.

    Args:
        to: The customer's email address.
        subject: The subject line.
        body: The plain-text body.
    """
    return _result_text(f"send_email:{to}:{subject}")


@tool
def search_docs(query: str, section: str | None = None) -> str:
    """Search the shop's internal policy and procedure documents.

    Args:
        query: What to look for.
        section: Only this section (refunds, shipping, accounts, fraud).
    """
    return _result_text(f"search_docs:{query}:{section}")


@tool
def track_shipment(tracking_number: str, carrier: str = "auto") -> str:
    """Ask the carrier where a parcel is, with every scan event so far.

    Args:
        tracking_number: The carrier's tracking number.
        carrier: The carrier's name, or "auto" to detect it from the number.
    """
    return _result_text(f"track_shipment:{tracking_number}:{carrier}")


TOOLS = [
    search_orders,
    get_order,
    get_customer,
    list_refunds,
    issue_refund,
    send_email,
    search_docs,
    track_shipment,
]

_INPUTS: list[dict[str, Any]] = [
    {"query": "late parcel berlin", "limit": 10},
    {"order_id": "ORD-1042"},
    {"customer_id": "CUS-77", "include_history": True},
    {"order_id": "ORD-1042", "since_days": 90},
    {"order_id": "ORD-1042", "amount": 19.5, "reason": "item damaged in transit"},
    {"to": "ana@example.com", "subject": "Your refund", "body": "Dear Ana, …"},
    {"query": "partial refund window", "section": "refunds"},
    {"tracking_number": "1Z999AA10123456784"},
]


def model_answer(messages: list[dict[str, Any]], calls: int = CALLS) -> dict[str, Any]:
    """The model's answer to a request with these messages (Anthropic response shape)."""
    n = sum(1 for m in messages if m["role"] == "assistant")
    rng = random.Random(n)
    thought = " ".join(rng.choice(_WORDS) for _ in range(rng.randint(12, 40)))
    usage = {"input_tokens": 1500 + 900 * n, "output_tokens": 40 + len(thought) // 4}
    if n >= calls - 1:
        return {
            "content": [{"type": "text", "text": f"Done. {thought}."}],
            "stop_reason": "end_turn",
            "usage": usage,
        }
    k = n % len(TOOLS)
    args = dict(_INPUTS[k])
    first = next(iter(args))
    args[first] = f"{args[first]}-{n}"  # every call asks something new
    return {
        "content": [
            {"type": "text", "text": f"Next I check this. {thought}."},
            {"type": "tool_use", "id": f"toolu_{n:04d}", "name": TOOLS[k].name, "input": args},
        ],
        "stop_reason": "tool_use",
        "usage": usage,
    }


def make_agent(
    trace_dir: Path, provider: Provider | None = None, calls: int = CALLS, **kwargs: Any
) -> Agent:
    """The session's agent; offline (scripted) unless a provider is given."""
    return Agent(
        model="claude-sonnet-4-6",
        instructions=SYSTEM,
        tools=TOOLS,
        provider=provider or ScriptedProvider(lambda req: model_answer(req.messages, calls)),
        trace_dir=trace_dir,
        max_turns=calls,
        clock=FakeClock(),
        **kwargs,
    )


TASK = "Go through every open ticket of customer CUS-77 and settle each one."
