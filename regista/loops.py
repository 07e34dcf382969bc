"""Loops and waste: the steps where an agent went round in circles.

Three kinds of repeat are flagged, each naming the earlier step it repeats:

- ``repeated_call``: a tool call with the same tool name and the same input as an earlier
  one (the agent asked again for what it was already told);
- ``retry``: a call that fails with the same error as the call before it of the same tool,
  or a model call that fails as the model call before it did (retrying what cannot work);
- ``repeated_answer``: a model answer equal to an earlier one (its text and the calls it
  asks for; the ids the provider gives tool calls do not count).

:class:`RepeatFinder` reads steps one at a time (a run that is still being written is read
as it grows); :func:`find_repeats` reads a whole run. Only a digest of what was seen is
kept, so a long session with large tool inputs costs little memory.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import orjson

from regista.tokens import Tokens

__all__ = [
    "GROUPS_SHOWN",
    "REPEAT_KINDS",
    "Repeat",
    "RepeatFinder",
    "describe_group",
    "find_repeats",
    "group_repeats",
    "waste",
]

#: How many groups of repeats a view prints; the rest are counted on one line.
GROUPS_SHOWN = 20
#: How many of a group's steps its line names.
STEPS_NAMED = 3

#: The kinds of repeat, and how a person reads each.
REPEAT_KINDS: dict[str, str] = {
    "repeated_call": "same tool call as step {first}",
    "retry": "same error as step {first}",
    "repeated_answer": "same answer as step {first}",
}


@dataclass(frozen=True)
class Repeat:
    """One step that repeats an earlier one.

    Attributes:
        step: The step that repeats.
        kind: ``repeated_call``, ``retry`` or ``repeated_answer``.
        first: The earlier step it repeats (the first of its kind).
        what: What was repeated, in one line (the tool and its input, the error, the answer),
            as the first repeat of its :attr:`key` said it (the same input written with its
            keys in another order is the same call).
        key: What makes two repeats the same (the whole call, error or answer, not its
            shortened :attr:`what`): the repeats of one key are one group
            (:func:`group_repeats`).
    """

    step: int
    kind: str
    first: int
    what: str
    key: Any = field(default=None, compare=False, repr=False)

    def describe(self) -> str:
        """``same tool call as step 1: search_orders {"query": …}``."""
        return f"{REPEAT_KINDS[self.kind].format(first=self.first)}: {self.what}"

    def as_dict(self) -> dict[str, Any]:
        return {"step": self.step, "kind": self.kind, "first": self.first, "what": self.what}


_hash16 = partial(hashlib.blake2b, digest_size=16)


def _digest(value: Any) -> bytes:
    try:
        data = orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    except (TypeError, orjson.JSONEncodeError):
        data = repr(value).encode("utf-8", "replace")
    return _hash16(data).digest()


def _short(text: str, limit: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _answer_form(content: Any) -> Any:
    """An answer as compared: its blocks without the ids a provider gives them."""
    if not isinstance(content, list):
        return content
    out = []
    for block in content:
        if isinstance(block, dict) and ("id" in block or "signature" in block):
            block = dict(block)
            block.pop("id", None)
            block.pop("signature", None)
        out.append(block)  # a block without them is compared as it is
    return out


def _result_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(
            str(b.get("text", "")) for b in content if isinstance(b, dict) and "text" in b
        )
    return str(content)


class RepeatFinder:
    """Flags repeats step by step: ``add(step)`` returns the repeats of that step."""

    def __init__(self) -> None:
        self._calls: dict[bytes, int] = {}
        self._answers: dict[bytes, int] = {}
        #: The last tool call's error by tool name: (step, digest of the error), and the
        #: first step of the run of retries it belongs to.
        self._tool_errors: dict[str, tuple[int, bytes]] = {}
        self._model_error: tuple[int, bytes] | None = None
        #: What each key's repeats say (:attr:`Repeat.what`), made at its first repeat: a
        #: loop of ten thousand turns describes its call once.
        self._said: dict[Any, str] = {}
        self.repeats: list[Repeat] = []

    def _what(self, key: tuple[Any, ...], said: Callable[[], str]) -> str:
        """What the repeats of ``key`` say, in one line (``said()`` at its first repeat)."""
        what = self._said.get(key)
        if what is None:
            what = self._said[key] = _short(said())
        return what

    def add(self, step: Any) -> list[Repeat]:
        """The repeats ``step`` (a :class:`~regista.trace.steps.Step`) makes, also kept in
        :attr:`repeats`."""
        kind = step.kind
        if kind == "tool":
            found = self._tool(step)
        elif kind == "model":
            found = self._model(step)
        else:
            return []
        if found:
            self.repeats += found
        return found

    def _tool(self, step: Any) -> list[Repeat]:
        call = step.tool_call
        if call is None:
            return []
        found: list[Repeat] = []
        name, index = call.name, step.index
        key = _digest([name, call.input])
        first = self._calls.setdefault(key, index)
        if first != index:
            group: tuple[Any, ...] = ("call", key)
            what = self._what(
                group, lambda: f"{name} {orjson.dumps(call.input).decode(errors='replace')}"
            )
            found.append(Repeat(index, "repeated_call", first, what, group))
        result = step.result
        if result is None:
            return found
        if result.is_error:
            error = _digest(_result_text(result.content))
            last = self._tool_errors.get(name)
            if last is not None and last[1] == error:
                group = ("tool", name, error)
                text = self._what(group, lambda: _result_text(result.content))
                found.append(Repeat(index, "retry", last[0], text, group))
                self._tool_errors[name] = (last[0], error)  # the run keeps its first
            else:
                self._tool_errors[name] = (index, error)
        elif self._tool_errors:
            self._tool_errors.pop(name, None)  # it worked: the run of retries ends
        return found

    def _model(self, step: Any) -> list[Repeat]:
        errors = step.errors
        if errors:
            found: list[Repeat] = []
            error = errors[0]
            key = _digest([error.error_type, error.message])
            last = self._model_error
            if last is not None and last[1] == key:
                text = _short(f"{error.error_type}: {error.message}")
                found.append(Repeat(step.index, "retry", last[0], text, ("model", key)))
            else:
                self._model_error = (step.index, key)
            return found
        response = step.response_event
        if response is None:
            return []
        self._model_error = None
        content = _answer_form(response.response.get("content"))
        if not content:
            return []
        key = _digest(content)
        index = step.index
        first = self._answers.setdefault(key, index)
        if first == index:
            return []
        text = self._what(
            ("answer", key),
            lambda: " ".join(
                str(b.get("text", ""))
                or f"{b.get('name', '')} {orjson.dumps(b.get('input')).decode()}"
                for b in content
                if isinstance(b, dict)
            ),
        )
        return [Repeat(index, "repeated_answer", first, text, ("answer", key))]


def find_repeats(steps: Iterable[Any]) -> list[Repeat]:
    """Every repeat of a run's steps (:class:`~regista.trace.steps.Step` s), in order."""
    finder = RepeatFinder()
    for step in steps:
        finder.add(step)
    return finder.repeats


def waste(
    repeats: list[Repeat],
    took: Callable[[int], tuple[Tokens, float | None]],
    *,
    each: bool = True,
) -> dict[str, Any] | None:
    """What the repeats took, as every view gives it (``show --json``, MCP, ``runs --json``,
    share): how many, their tokens and cost (``took(step)`` gives a step's), each repeat
    (``each``; a view that prints only the groups leaves them out), and the repeats
    grouped by what they repeat (:func:`group_repeats`); ``None`` when there is none."""
    if not repeats:
        return None
    from regista.pricing import add_costs, round_cost

    spent = {step: took(step) for step in dict.fromkeys(r.step for r in repeats)}
    tokens = Tokens()
    cost: float | None = 0.0
    for t, c in spent.values():
        tokens = tokens + t
        cost = add_costs(cost, c)
    out: dict[str, Any] = {
        "count": len(spent),
        "tokens": tokens.as_dict(),
        "cost_usd": round_cost(cost),
    }
    if each:
        out["repeats"] = [r.as_dict() for r in repeats]
    out["groups"] = group_repeats(repeats, spent.__getitem__)
    return out


def group_repeats(
    repeats: list[Repeat], took: Callable[[int], tuple[Tokens, float | None]]
) -> list[dict[str, Any]]:
    """The repeats grouped by what they repeat (the same tool and input, the same error of
    the same tool, the same answer), the most wasteful first (cost, then tokens, then how
    many): each group's kind, the step it repeats, what, how many, every step that
    repeats it, and their tokens and cost summed. A loop of ten thousand turns is a few
    groups: what a person reads first.

    A step that repeats in two ways (the same call, failing as before) is in both groups.
    """
    from regista.pricing import add_costs, round_cost

    by_key: dict[Any, list[Repeat]] = {}
    for r in repeats:
        key = r.key if r.key is not None else (r.kind, r.first, r.what)
        by_key.setdefault(key, []).append(r)
    groups: list[dict[str, Any]] = []
    for members in by_key.values():
        tokens = Tokens()
        cost: float | None = 0.0
        steps = list(dict.fromkeys(r.step for r in members))
        for step in steps:
            t, c = took(step)
            tokens = tokens + t
            cost = add_costs(cost, c)
        head = members[0]
        groups.append(
            {
                "kind": head.kind,
                "first": min(r.first for r in members),
                "what": head.what,
                "count": len(steps),
                "steps": steps,
                "tokens": tokens.as_dict(),
                "cost_usd": round_cost(cost),
            }
        )
    groups.sort(
        key=lambda g: (-(g["cost_usd"] or 0.0), -g["tokens"]["total"], -g["count"], g["steps"][0])
    )
    return groups


def describe_group(group: dict[str, Any]) -> str:
    """A group of repeats in one line, ``what`` last (a narrow view cuts it first):
    ``same tool call as step 1: search_orders {…}`` for a single repeat;
    ``×40 same tool call as step 1 (at steps 3, 5, 7 … +37 more; 1,200 tokens · $0.0040):
    search_orders {…}`` for more."""
    from regista.vocab import cost_amount

    said = REPEAT_KINDS[group["kind"]].format(first=group["first"])
    n = group["count"]
    if n <= 1:
        return f"{said}: {group['what']}"
    steps = group["steps"]
    named = ", ".join(map(str, steps[:STEPS_NAMED]))
    more = f" … +{len(steps) - STEPS_NAMED:,} more" if len(steps) > STEPS_NAMED else ""
    took = f"{group['tokens']['total']:,} tokens · {cost_amount(group['cost_usd'])}"
    return f"×{n:,} {said} (at steps {named}{more}; {took}): {group['what']}"
