"""The offline demo model of the refund agent: a deterministic function that plays the model.

``refund_model(request) -> response dict`` reads the conversation it is sent (the task,
the tool calls so far and their results, or the summary that replaced older turns) and
decides the next step the way a capable model would: look the orders up, find the ones
the task does not name by searching, refund them, email the customer, report. It keeps
no state between calls, so it carries on correctly from any point, including a fork
whose tool result a person has edited. It also writes the summary when the loop asks for
a context compaction. Used through ``ScriptedProvider(refund_model)``, it is recorded
as "scripted".
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from typing import Any

import orjson

from regista.context import SUMMARY_PREFIX, SUMMARY_SYSTEM
from regista.trace.canonical import canonical_json
from regista.types import LlmRequest, text_of

__all__ = ["Facts", "refund_model", "summarise"]

_ID = re.compile(r"\bORD-\d+\b", re.IGNORECASE)
_CUSTOMER = re.compile(r"([A-Z][a-z'-]+ [A-Z][a-z'-]+) \(([^\s()@]+@[^\s()]+)\)")
_ITEM = re.compile(r'"([^"]+)"(?:[^"(]{0,20}\(order (ORD-\d+)\))?', re.IGNORECASE)


@dataclass
class Wanted:
    """One thing the task asks to refund: an item, with the order id when it is given."""

    item: str
    order_id: str | None


@dataclass
class Task:
    """What the model understands of the task text."""

    text: str
    name: str = ""
    email: str = ""
    wanted: list[Wanted] = field(default_factory=list)

    @classmethod
    def parse(cls, text: str) -> Task:
        task = cls(text=text)
        m = _CUSTOMER.search(text)
        if m:
            task.name, task.email = m.group(1), m.group(2).lower()
        for item in _ITEM.finditer(text):
            oid = item.group(2).upper() if item.group(2) else None
            task.wanted.append(Wanted(item.group(1), oid))
        if not task.wanted:  # order ids without a quoted item
            task.wanted = [Wanted("", oid.upper()) for oid in _ID.findall(text)]
        return task

    def reason(self) -> str:
        low = self.text.lower()
        if any(w in low for w in ("broken", "snapped", "damaged", "cracked")):
            return "Arrived damaged"
        if "returned" in low:
            return "Item returned by the customer"
        return "Customer request"

    def queries(self, want: Wanted) -> list[str]:
        """Search queries to try for ``want``, most specific first."""
        last = self.name.split()[-1] if self.name else ""
        first_word = want.item.split()[0] if want.item else ""
        out = [f"{self.name} {want.item}".strip(), self.name, self.email, want.item,
               f"{last} {first_word}".strip()]  # fmt: skip
        seen: list[str] = []
        for q in out:
            if q and q not in seen:
                seen.append(q)
        return seen


@dataclass
class Facts:
    """Everything learnt so far, from the conversation and any earlier summary."""

    task: str = ""
    searches: list[tuple[str, list[dict[str, Any]]]] = field(default_factory=list)
    orders: dict[str, dict[str, Any]] = field(default_factory=dict)
    missing: set[str] = field(default_factory=set)
    refunded: dict[str, float] = field(default_factory=dict)
    failed: dict[str, str] = field(default_factory=dict)
    emailed: list[str] = field(default_factory=list)

    # -- learning ------------------------------------------------------------------------

    def learn(self, name: str, args: dict[str, Any], result: str, is_error: bool) -> None:
        oid = str(args.get("order_id", "")).strip().upper()
        if name == "search_orders" and not is_error:
            self.searches.append((str(args.get("query", "")), _matches(result)))
        elif name == "get_order":
            data = _json(result)
            if is_error or not isinstance(data, dict):
                self.missing.add(oid)
            else:
                self.orders[oid] = data
                self.missing.discard(oid)
        elif name == "issue_refund":
            if is_error:
                self.failed[oid] = " ".join(result.split())
            else:
                self.refunded[oid] = float(args.get("amount", 0))
        elif name == "send_email" and not is_error:
            self.emailed.append(str(args.get("to", "")))

    # -- summaries -----------------------------------------------------------------------

    def summary(self) -> str:
        """A summary in prose a person can read, one fact a line (and parseable back)."""
        lines = [f"Task: {' '.join(self.task.split())}"]
        for query, matches in self.searches:
            found = "; ".join(
                f'{m.get("order_id")} "{m.get("item", "")}" for {m.get("customer", "?")} '
                f"<{m.get('email', '')}> at ${float(m.get('amount', 0)):.2f}"
                for m in matches
            )
            lines.append(f'- Searched orders for "{query}": {found or "no matches"}.')
        for oid, o in self.orders.items():
            lines.append(
                f'- Order {oid} "{o.get("item", "")}" for {o.get("customer", "?")} '
                f"<{o.get('email', '')}> at ${float(o.get('amount', 0)):.2f}: "
                f"{o.get('status', '?')}, ${float(o.get('refunded', 0)):.2f} refunded."
            )
        lines += [f"- Order {oid} does not exist." for oid in sorted(self.missing)]
        lines += [f"- Refunded ${amt:.2f} on {oid}." for oid, amt in self.refunded.items()]
        lines += [f"- Refund on {oid} not issued: {why}" for oid, why in self.failed.items()]
        lines += [f"- Emailed {to}." for to in self.emailed]
        return "\n".join(lines)

    def read_summary(self, text: str) -> None:
        """Take in the facts of a summary written by :meth:`summary`."""
        for line in text.splitlines():
            if line.startswith("Task: "):
                self.task = line[len("Task: ") :]
            elif m := _S_SEARCH.match(line):
                found = [] if m.group(2) == "no matches" else _S_MATCH.findall(m.group(2))
                self.searches.append((m.group(1), [_match_dict(*f) for f in found]))
            elif m := _S_ORDER.match(line):
                oid, item, customer, email, amount, status, refunded = m.groups()
                self.orders[oid] = {
                    "order_id": oid, "customer": customer, "email": email, "item": item,
                    "amount": float(amount), "status": status, "refunded": float(refunded),
                }  # fmt: skip
            elif m := _S_MISSING.match(line):
                self.missing.add(m.group(1))
            elif m := _S_REFUNDED.match(line):
                self.refunded[m.group(2)] = float(m.group(1))
            elif m := _S_FAILED.match(line):
                self.failed[m.group(1)] = m.group(2)
            elif m := _S_EMAILED.match(line):
                self.emailed.append(m.group(1))


_S_SEARCH = re.compile(r'^- Searched orders for "(.*)": (.*)\.$')
_S_MATCH = re.compile(r'(ORD-\d+) "([^"]*)" for (.+?) <([^>]*)> at \$([\d.]+)')
_S_ORDER = re.compile(
    r'^- Order (ORD-\d+) "([^"]*)" for (.+?) <([^>]*)> at \$([\d.]+): (.+), \$([\d.]+) refunded\.$'
)
_S_MISSING = re.compile(r"^- Order (ORD-\d+) does not exist\.$")
_S_REFUNDED = re.compile(r"^- Refunded \$([\d.]+) on (ORD-\d+)\.$")
_S_FAILED = re.compile(r"^- Refund on (ORD-\d+) not issued: (.*)$")
_S_EMAILED = re.compile(r"^- Emailed (.+)\.$")


def _match_dict(oid: str, item: str, customer: str, email: str, amount: str) -> dict[str, Any]:
    return {"order_id": oid, "customer": customer, "email": email, "item": item,
            "amount": float(amount)}  # fmt: skip


def _json(text: str) -> Any:
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return None


def _matches(result: str) -> list[dict[str, Any]]:
    """The orders a search result lists; lenient, since a person may have edited it."""
    data = _json(result)
    if isinstance(data, dict):
        data = data.get("matches", data.get("orders"))
    if isinstance(data, list):
        return [m for m in data if isinstance(m, dict) and m.get("order_id")]
    return [{"order_id": oid.upper()} for oid in dict.fromkeys(_ID.findall(result))]


# -- reading a conversation -------------------------------------------------------------


def facts_of_messages(messages: list[dict[str, Any]]) -> Facts:
    """The facts in a live conversation (whose first message may be a summary)."""
    facts = Facts()
    pending: list[tuple[str, dict[str, Any]]] = []
    for message in messages:
        content = message.get("content")
        blocks: list[dict[str, Any]] = (
            [{"type": "text", "text": content}] if isinstance(content, str) else content or []
        )
        for block in blocks:
            kind = block.get("type")
            if kind == "text" and message.get("role") == "user":
                _take_user_text(facts, str(block.get("text", "")))
            elif kind == "tool_use":
                pending.append((str(block.get("name")), dict(block.get("input") or {})))
            elif kind == "tool_result" and pending:
                name, args = pending.pop(0)
                inner = block.get("content", "")
                text = inner if isinstance(inner, str) else text_of(inner)
                facts.learn(name, args, text, bool(block.get("is_error")))
    return facts


def facts_of_transcript(text: str) -> Facts:
    """The facts in the transcript a compaction request carries (``regista.context``)."""
    facts = Facts()
    items: list[list[str]] = []
    for line in text.split("\n"):
        if line.startswith(("user: ", "assistant: ", "assistant called ", "tool result")):
            items.append([line])
        elif items:  # a continuation of a multi-line text
            items[-1].append(line)
    pending: list[tuple[str, dict[str, Any]]] = []
    for item in items:
        head, body = item[0], "\n".join(item)
        if head.startswith("user: "):
            _take_user_text(facts, body[len("user: ") :])
        elif m := re.match(r"assistant called (\w+)\((.*)\)$", body, re.DOTALL):
            args = _json(m.group(2))
            pending.append((m.group(1), args if isinstance(args, dict) else {}))
        elif (m := re.match(r"tool result( \(error\))?: (.*)$", body, re.DOTALL)) and pending:
            name, args = pending.pop(0)
            facts.learn(name, args, m.group(2), m.group(1) is not None)
    return facts


def _take_user_text(facts: Facts, text: str) -> None:
    if text.startswith(SUMMARY_PREFIX):
        facts.read_summary(text[len(SUMMARY_PREFIX) :])
    elif not facts.task:
        facts.task = text


def summarise(request: LlmRequest) -> str:
    """The summary the demo model writes for a compaction request."""
    transcript = "\n".join(text_of(m.get("content", "")) for m in request.messages)
    return facts_of_transcript(transcript).summary()


# -- deciding ----------------------------------------------------------------------------


def _relevant(task: Task, want: Wanted, match: dict[str, Any]) -> bool:
    email, customer = str(match.get("email", "")).lower(), str(match.get("customer", ""))
    if task.email and email and email != task.email:
        return False
    if task.name and customer and not email and customer.lower() != task.name.lower():
        return False
    item = str(match.get("item", "")).lower()
    return not (want.item and item and want.item.lower() not in item)


def _resolve(task: Task, facts: Facts, want: Wanted) -> str | None:
    """The order id that ``want`` refers to, once known."""
    if want.order_id and want.order_id not in facts.missing:
        return want.order_id
    for _query, matches in facts.searches:
        for m in matches:
            oid = str(m["order_id"]).upper()
            if oid not in facts.missing and _relevant(task, want, m):
                return oid
    return None


def decide(task: Task, facts: Facts) -> tuple[str, list[tuple[str, dict[str, Any]]]]:
    """The next move: a short text and the tool calls to make (none: the final answer)."""
    if not task.wanted:
        return (
            "I could not tell which order to refund: please give the order id or the product "
            'name in double quotes, e.g. "Trailblazer 2".',
            [],
        )
    resolved: list[tuple[Wanted, str]] = []
    for want in task.wanted:
        oid = _resolve(task, facts, want)
        if oid is None:
            tried = [q for q, _ in facts.searches]
            queries = task.queries(want)
            query = queries[len(tried) % len(queries)]
            if not tried:
                text = f'Let me find the order: searching for "{query}".'
            else:
                text = f'No matching order yet. Trying another search: "{query}".'
            return text, [("search_orders", {"query": query})]
        resolved.append((want, oid))
    lookups = [oid for _, oid in resolved if oid not in facts.orders]
    if lookups:
        text = f"Looking up {' and '.join(lookups)}."
        return text, [("get_order", {"order_id": oid}) for oid in lookups]
    refunds = [oid for _, oid in resolved if oid not in facts.refunded and oid not in facts.failed]
    if refunds:
        calls = []
        for oid in refunds:
            o = facts.orders[oid]
            left = round(float(o.get("amount", 0)) - float(o.get("refunded", 0)), 2)
            calls.append(
                ("issue_refund", {"order_id": oid, "amount": left, "reason": task.reason()})
            )
        return f"Issuing the refund{'s' if len(calls) > 1 else ''}.", calls
    to = task.email or str(facts.orders[resolved[0][1]].get("email", ""))
    report = _report(facts, [oid for _, oid in resolved])
    if not facts.emailed:
        first = task.name.split()[0] if task.name else "there"
        body = f"Hi {first},\n\n{report}\n\nBest regards,\nCustomer Support"
        subject = "Your refund" if not facts.failed else "Your refund request"
        return "Letting the customer know.", [
            ("send_email", {"to": to, "subject": subject, "body": body})
        ]
    return f"Done. {report} I emailed {facts.emailed[-1]}.", []


def _report(facts: Facts, order_ids: list[str]) -> str:
    parts = []
    for oid in order_ids:
        item = facts.orders.get(oid, {}).get("item", oid)
        if oid in facts.refunded:
            parts.append(f"We refunded ${facts.refunded[oid]:.2f} for the {item} ({oid}).")
        else:
            why = facts.failed.get(oid, "it could not be issued")
            parts.append(
                f"The refund for the {item} ({oid}) was not issued ({why.rstrip('.')}); "
                "a supervisor will review it within two business days."
            )
    return " ".join(parts)


# -- the model ---------------------------------------------------------------------------


def _usage(request: LlmRequest, content: list[dict[str, Any]]) -> dict[str, int]:
    # About four characters a token, like the real models' tokenisers on English text.
    return {
        "input_tokens": len(canonical_json(request.canonical())) // 4,
        "output_tokens": max(1, len(orjson.dumps(content)) // 4),
    }


def refund_model(request: LlmRequest) -> dict[str, Any]:
    """Answer ``request`` as the refund agent's model would (deterministically)."""
    digest = request.hash
    if request.system == SUMMARY_SYSTEM:
        content: list[dict[str, Any]] = [{"type": "text", "text": summarise(request)}]
        return {
            "id": f"msg_demo_{digest[:20]}",
            "content": content,
            "stop_reason": "end_turn",
            "usage": _usage(request, content),
        }
    facts = facts_of_messages(request.messages)
    text, calls = decide(Task.parse(facts.task), facts)
    content = [{"type": "text", "text": text}]
    for i, (name, args) in enumerate(calls):
        tid = hashlib.sha256(f"{digest}:{i}".encode()).hexdigest()[:24]
        content.append({"type": "tool_use", "id": f"toolu_{tid}", "name": name, "input": args})
    return {
        "id": f"msg_demo_{digest[:20]}",
        "content": content,
        "stop_reason": "tool_use" if calls else "end_turn",
        "usage": _usage(request, content),
    }
