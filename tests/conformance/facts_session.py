"""One abstract session, generated from a seed, and what its run's facts must be.

A :class:`Session` is what happened, whoever wrote it down: the turns a person typed, the
model calls of each turn (their usage, cache parts included, and the tool calls they asked
for, some of which fail) and maybe a compaction before a turn. :func:`generate` makes one
from a seeded generator, within what a writer can say (:class:`Can`: a Codex rollout has no
1-hour cache writes, regista's own loop runs one typed task, …); :meth:`Session.expected`
gives the facts every view of its run must show (:class:`Facts`).

``REGISTA_FUZZ_SEED`` changes the sessions (as in the other fuzz tests);
``REGISTA_FUZZ_ITERATIONS`` sets how many each writer is given (default 3).
"""

from __future__ import annotations

import os
import random
from dataclasses import dataclass, field
from typing import Any

from regista.pricing import cost_usd, round_cost, total_cost
from regista.tokens import Tokens

ITERATIONS = int(os.environ.get("REGISTA_FUZZ_ITERATIONS", "3"))
_SEED = os.environ.get("REGISTA_FUZZ_SEED")

#: A model no price table knows: its run's cost is unknown.
UNPRICED = "acme-reasoner-7"


def rng_for(writer: str, n: int) -> random.Random:
    """The seeded generator of session ``n`` of ``writer``."""
    return random.Random(f"regista-facts-{writer}-{n}" + (f"-{_SEED}" if _SEED else ""))


@dataclass(frozen=True)
class Can:
    """What a writer can record of a session."""

    turns: bool = True  # more than one typed turn
    compaction: bool = True
    compaction_usage: bool = True  # the summarising call's usage is in the source
    compaction_in_turn: bool = False  # compacts between the calls of a turn (the loop)
    cache_write: bool = True
    cache_1h: bool = True
    reasoning: bool = False
    tool_errors: bool = True  # a tool result can say it failed
    models: tuple[str, ...] = ("claude-sonnet-4-5", UNPRICED)


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    arg: str
    output: str
    fails: bool


@dataclass(frozen=True)
class Call:
    """One model call: its text, the tools it asks for, its usage."""

    text: str
    tools: tuple[ToolCall, ...]
    usage: Tokens


@dataclass(frozen=True)
class Compaction:
    summary: str
    usage: Tokens


@dataclass(frozen=True)
class Turn:
    prompt: str
    calls: tuple[Call, ...]
    compaction: Compaction | None = None
    #: Where the compaction is made: before the call of this index (regista's loop compacts
    #: between its calls), or ``None``: before the turn's prompt (a coding agent's).
    compact_at: int | None = None


@dataclass(frozen=True)
class Step:
    """One step as a run records it: its kind, its usage (a tool step has none), whether
    it failed."""

    kind: str
    usage: Tokens | None = None
    fails: bool = False


@dataclass(frozen=True)
class Facts:
    """A run's facts, as every view must give them (``None``: a view that does not say)."""

    kinds: tuple[str, ...]
    outcome: str
    errors: int
    tokens: Tokens
    cost_usd: float | None
    turns: int
    tool_calls: int
    step_tokens: tuple[int | None, ...] = field(default=())


@dataclass(frozen=True)
class Session:
    seed: int
    model: str
    turns: tuple[Turn, ...]

    def first_calls(self, k: int) -> Session:
        """The session as far as its first ``k`` model calls (and their tools)."""
        turns: list[Turn] = []
        for t in self.turns:
            if k <= 0:
                break
            kept = t.calls[:k]
            at = t.compact_at
            compaction = t.compaction if at is None or at < len(kept) else None
            turns.append(Turn(t.prompt, kept, compaction, at if compaction else None))
            k -= len(t.calls)
        return Session(self.seed, self.model, tuple(turns))

    def calls(self) -> list[Call]:
        return [c for t in self.turns for c in t.calls]

    def steps(self) -> list[Step]:
        """The session's steps, in the order a run numbers them."""
        out: list[Step] = []
        for t in self.turns:
            for i, c in enumerate(t.calls):
                if t.compaction is not None and i == (t.compact_at or 0):
                    out.append(Step("compaction", t.compaction.usage))
                out.append(Step("model", c.usage))
                out.extend(Step("tool", None, tc.fails) for tc in c.tools)
        return out

    def kinds(self) -> tuple[str, ...]:
        return tuple(st.kind for st in self.steps())

    def step_tokens(self) -> tuple[int | None, ...]:
        """Each step's tokens (cache included; a tool step has none)."""
        return tuple(None if st.usage is None else st.usage.total for st in self.steps())

    def usages(self) -> list[Tokens]:
        """Every priced part in the order the run made them: compactions and calls."""
        return [st.usage for st in self.steps() if st.usage is not None]

    def expected(self, outcome: str) -> Facts:
        tokens = Tokens()
        for u in self.usages():
            tokens = tokens + u
        cost = total_cost(cost_usd(self.model, u) for u in self.usages())
        return Facts(
            kinds=self.kinds(),
            outcome=outcome,
            errors=sum(tc.fails for c in self.calls() for tc in c.tools),
            tokens=tokens,
            cost_usd=round_cost(cost),
            turns=len(self.turns),
            tool_calls=sum(len(c.tools) for c in self.calls()),
            step_tokens=self.step_tokens(),
        )


_WORDS = ["Paris", "Rome", "Oslo", "Lima", "Quito", "Accra", "Hanoi", "Perth"]


def _usage(rng: random.Random, can: Can) -> Tokens:
    out = rng.randint(1, 900)
    write = rng.choice([0, 0, rng.randint(1, 3000)]) if can.cache_write else 0
    hour = rng.choice([0, write]) if can.cache_1h and write else 0
    if hour and rng.random() < 0.5:  # both durations in one call
        hour = rng.randint(0, write)
    return Tokens(
        input=rng.randint(1, 2500),
        output=out,
        cache_read=rng.choice([0, rng.randint(1, 60_000)]),
        cache_write_5m=write - hour,
        cache_write_1h=hour,
        reasoning=rng.randint(0, out) if can.reasoning else 0,
    )


def generate(rng: random.Random, can: Can, seed: int = 0) -> Session:
    """One session within what ``can`` says the writer records (every third one, from the
    first, of several turns with a compaction where the writer records them)."""
    full = seed % 3 == 0 and can.turns and can.compaction
    n_turns = rng.randint(2, 3) if full else rng.randint(1, 3) if can.turns else 1
    turns: list[Turn] = []
    tool_n = 0
    for t in range(n_turns):
        calls: list[Call] = []
        for k in range(rng.randint(0, 3)):
            tools: list[ToolCall] = []
            for _ in range(rng.choice([1, 1, 2, 3])):
                tool_n += 1
                city = rng.choice(_WORDS)
                fails = can.tool_errors and rng.random() < 0.3
                tools.append(
                    ToolCall(
                        id=f"toolu_{seed:02d}{tool_n:04d}",
                        name=rng.choice(["get_weather", "get_forecast"]),
                        arg=city,
                        output=f"no data for {city}" if fails else f"sunny in {city}",
                        fails=fails,
                    )
                )
            calls.append(Call(f"Turn {t}, call {k}: looking.", tuple(tools), _usage(rng, can)))
        calls.append(Call(f"Turn {t}: done, {rng.choice(_WORDS)}.", (), _usage(rng, can)))
        compaction, at = None, None
        if t > 0 and can.compaction and (rng.random() < 0.5 or (full and t == 1)):
            usage = _usage(rng, can) if can.compaction_usage else Tokens()
            compaction = Compaction(f"Summary before turn {t}.", usage)
        elif can.compaction_in_turn and len(calls) > 2 and (seed % 3 == 0 or rng.random() < 0.3):
            # before the last call: the loop compacts once the tools before it said a lot
            # (and keeps the last answer: two answers at least are needed before it)
            compaction = Compaction("Summary of the calls so far.", _usage(rng, can))
            at = len(calls) - 1
        prompt = f"Question {t}: weather in {rng.choice(_WORDS)}?"
        turns.append(Turn(prompt, tuple(calls), compaction, at))
    return Session(seed, rng.choice(can.models), tuple(turns))


def tool_reply(session: Session, tool_id: str) -> ToolCall:
    """The tool call of ``session`` with id ``tool_id``."""
    return next(tc for c in session.calls() for tc in c.tools if tc.id == tool_id)


def anthropic_answer(call: Call) -> dict[str, Any]:
    """``call`` as a Messages API response (content, stop reason, usage)."""
    content: list[dict[str, Any]] = [{"type": "text", "text": call.text}]
    content += [
        {"type": "tool_use", "id": tc.id, "name": tc.name, "input": {"city": tc.arg, "ref": tc.id}}
        for tc in call.tools
    ]
    return {
        "content": content,
        "stop_reason": "tool_use" if call.tools else "end_turn",
        "usage": call.usage.usage_dict(),
    }
