"""How a trace's events group into steps, and what a step's events say of it.

Every reader of a trace (the reference ``build_steps`` and ``Step``, the debugger's index, the
two-run view's ``RunFile``, ``regista show``'s pass, ``regista runs``) groups by this module
and derives a step's facts from it, so they say the same of the same file
(``docs/readers.md``). It imports nothing but the names of the event types: a scan of line
heads uses it before the event models are loaded.

**Grouping.** Events carry their step's number. A step is begun by the first event of its
number whose type opens a step (:data:`KIND_OF`); an event of a number that no opener had
begun when it came belongs to no step (an ``error`` event then counts as an error of the
run, apart from its steps, even when an opener of its number comes later); an event without
a number belongs to none. A number below 0 is refused
(:class:`NegativeStep`): a reader of lines says so in the reference's words by reading the
line with ``parse_line``.

**Facts.** A step's facts are bit flags, folded from its events in order by :data:`RULES`:

- :data:`COMPLETE`: its closing event was read (a model step's ``llm.response``, a tool
  step's ``tool.result``, a compaction's own event);
- :data:`ERROR`: an ``error`` event of the step, or its *first* ``tool.result`` says
  ``is_error``;
- :data:`DENIED`: its *first* ``permission.decision`` did not allow the call;
- ``failed`` (:func:`failed`): an error, and not denied (a denial is counted apart).

A rule is ``(guard, if_false, if_true, field)``: an event whose step's flags hold none of
``guard`` adds ``if_true`` when its ``field`` is true (a ``tool.result``'s ``is_error``, a
decision's ``allowed``), else ``if_false`` (a rule with no field reads nothing: the two are
the same). A reader of objects folds with :func:`fold` or :func:`step_flags`, or looks the
rule up in its own loop, as a reader of dicts or bytes does, reading the field its own way
and only when the guard lets the rule apply.

**The run's counts.** What a run's summary says beyond its steps is tallied from single
events by :data:`COUNTS` (per type: ``(tally, field, loose)``): a ``tool.call`` adds one to
:data:`TOOL_CALLS`, a ``context.compaction`` to :data:`COMPACTIONS`, a
``permission.decision`` whose ``allowed`` is not true to :data:`DENIALS`, an ``error`` of no
step to :data:`LOOSE_ERRORS`. The usage and cost of the events of :data:`PRICED` (model
answers and compactions) add up to the run's tokens and cost. :func:`run_counts` makes the
run's counts of its tallies and its steps' flags (errors: the failed steps and the loose
errors; turns and cost from ``session.end``, else from the answers and the sum).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any, Final

from regista.trace.names import (
    CONTEXT_COMPACTION,
    LLM_RESPONSE,
    PERMISSION_DECISION,
    SESSION_END,
    SESSION_START,
    STEP_KINDS,
    TOOL_CALL,
    TOOL_RESULT,
    StepKind,
)
from regista.trace.names import (
    ERROR as _ERROR_EVENT,
)

__all__ = [
    "BYTES_RULES_BY_CODE",
    "COMPACTIONS",
    "COMPLETE",
    "COUNTS",
    "COUNTS_BYTES",
    "DECIDED",
    "DENIALS",
    "DENIED",
    "ERROR",
    "FACTS",
    "KINDS",
    "KIND_CODE",
    "KIND_OF",
    "KIND_OF_BYTES",
    "LOOSE_ERRORS",
    "PRICED",
    "PRICED_BYTES",
    "RESULTED",
    "RULES",
    "STEPLESS",
    "STEPLESS_BYTES",
    "STEP_IN_HEAD",
    "TALLIES",
    "TOOL_CALLS",
    "TYPE_IN_HEAD",
    "Count",
    "Grouping",
    "NegativeStep",
    "Rule",
    "count",
    "failed",
    "fold",
    "opens",
    "run_counts",
    "step_flags",
]

#: The one table of step kinds (:data:`~regista.trace.names.STEP_KINDS`), keyed by the event
#: type as a decoded event says it; :data:`KIND_OF_BYTES` is the same table keyed by the bytes
#: a scan of lines meets. (Kept apart: a type and its bytes hash alike, so one dict holding
#: both would compare a string with bytes at each lookup, slowly, and with a BytesWarning
#: under ``python -b``.)
KIND_OF: Final[dict[str, StepKind]] = STEP_KINDS
KIND_OF_BYTES: Final[dict[bytes, StepKind]] = {
    name.encode(): kind for name, kind in STEP_KINDS.items()
}
# A line's type and step number, as a reader of lines finds them in its first bytes (where
# the writer puts its envelope; white space from other writers tolerated).
TYPE_IN_HEAD: Final = re.compile(rb'"type"\s*:\s*"([a-z.]+)"')
STEP_IN_HEAD: Final = re.compile(rb'"step"\s*:\s*(-?\d+)')
#: The kinds of step, in a fixed order: a reader that keeps a kind as a small number uses
#: its position here (:data:`KIND_CODE`).
KINDS: Final[tuple[StepKind, ...]] = tuple(dict.fromkeys(STEP_KINDS.values()))
KIND_CODE: Final[dict[str, int]] = {kind: code for code, kind in enumerate(KINDS)}

# A step's facts, as bits.
ERROR: Final = 1
DENIED: Final = 2
COMPLETE: Final = 4
#: Its first ``tool.result`` was read (a later one changes nothing).
RESULTED: Final = 8
#: Its first ``permission.decision`` was read (a later one changes nothing).
DECIDED: Final = 16
#: The bits that are facts (the others say what was read).
FACTS: Final = ERROR | DENIED | COMPLETE

#: What closes each kind of step: the event whose reading makes it complete.
_CLOSING: Final[dict[StepKind, str]] = {
    "model": LLM_RESPONSE,
    "tool": TOOL_RESULT,
    "compaction": CONTEXT_COMPACTION,
}


#: A rule: ``(guard, if_false, if_true, field)`` (module docstring).
Rule = tuple[int, int, int, str | None]


def _rules(kind: StepKind) -> dict[str, Rule]:
    rules: dict[str, Rule] = {
        _ERROR_EVENT: (0, ERROR, ERROR, None),
        TOOL_RESULT: (RESULTED, RESULTED, RESULTED | ERROR, "is_error"),
        PERMISSION_DECISION: (DECIDED, DECIDED | DENIED, DECIDED, "allowed"),
    }
    closing = _CLOSING[kind]
    guard, if_false, if_true, read = rules.get(closing, (0, 0, 0, None))
    rules[closing] = (guard, if_false | COMPLETE, if_true | COMPLETE, read)
    return rules


#: Per kind of step: what each type of event does to its flags (a :data:`Rule`), keyed by
#: the type; a type not in it does nothing.
RULES: Final[dict[StepKind, dict[str, Rule]]] = {kind: _rules(kind) for kind in KINDS}
#: :data:`RULES` keyed by the type's bytes, by :data:`KIND_CODE` (for a scan of lines).
BYTES_RULES_BY_CODE: Final[tuple[dict[bytes, Rule], ...]] = tuple(
    {name.encode(): rule for name, rule in RULES[kind].items()} for kind in KINDS
)


class NegativeStep(ValueError):
    """An event's step number is below 0 (no writer makes one)."""

    def __init__(self, number: int) -> None:
        super().__init__(f"step: must not be negative ({number})")


def opens(number: int, etype: str | bytes) -> StepKind | None:
    """The kind of step that an event of type ``etype`` begins, when its number ``number``
    has no step yet; ``None`` when it begins none (the event then belongs to no step).

    A reader calls it only when it meets a number it has no step for.

    Raises:
        NegativeStep: ``number`` is below 0.
    """
    if number < 0:
        raise NegativeStep(number)
    if isinstance(etype, bytes):
        return KIND_OF_BYTES.get(etype)
    return KIND_OF.get(etype)


class Grouping:
    """Which step each event belongs to: step number to position (in the order the steps
    were begun), a step opened only by an opener (:func:`opens`).

    Readers that keep their steps otherwise (the index's columns) apply the same rule with
    :func:`opens`, called where they meet a number they have no step for.
    """

    __slots__ = ("at", "kinds", "numbers")

    def __init__(self) -> None:
        #: The position of each step number.
        self.at: dict[int, int] = {}
        #: Each step's number and kind, by position.
        self.numbers: list[int] = []
        self.kinds: list[StepKind] = []

    def place(self, number: int | None, etype: str | bytes) -> int | None:
        """The position of the step an event of number ``number`` and type ``etype``
        belongs to (a new step's, position ``len(numbers) - 1``, when it opens one);
        ``None`` when it belongs to none.

        Raises:
            NegativeStep: ``number`` is below 0.
        """
        if number is None:
            return None
        pos = self.at.get(number)
        if pos is None:
            kind = opens(number, etype)
            if kind is None:
                return None
            pos = self.at[number] = len(self.numbers)
            self.numbers.append(number)
            self.kinds.append(kind)
        return pos

    def __len__(self) -> int:
        return len(self.numbers)


def fold(flags: int, kind: StepKind, etype: str | bytes, value: bool) -> int:
    """A step's ``flags`` after one more event of its, of type ``etype`` (``value``: the
    truth of the field its rule reads, if any)."""
    if isinstance(etype, bytes):
        rule = BYTES_RULES_BY_CODE[KIND_CODE[kind]].get(etype)
    else:
        rule = RULES[kind].get(etype)
    if rule is None or flags & rule[0]:
        return flags
    return flags | (rule[2] if value else rule[1])


def step_flags(kind: StepKind, events: Iterable[Any]) -> int:
    """The flags of a step of kind ``kind`` whose events (decoded, in order) are ``events``."""
    rules = RULES[kind]
    flags = 0
    for event in events:
        rule = rules.get(event.type)
        if rule is not None and not flags & rule[0]:
            read = rule[3]
            flags |= rule[2] if read is not None and getattr(event, read) is True else rule[1]
    return flags


def failed(flags: int) -> bool:
    """A step in error that was not denied (a denial is counted apart)."""
    return flags & (ERROR | DENIED) == ERROR


# -- the run's counts ----------------------------------------------------------------------

# A run's tallies, by their place in the list of them a reader keeps.
TOOL_CALLS: Final = 0
DENIALS: Final = 1
COMPACTIONS: Final = 2
LOOSE_ERRORS: Final = 3
#: How many tallies a run keeps.
TALLIES: Final = 4

#: What one event adds to the run's tallies: ``(tally, field, loose)``: one to ``tally``,
#: when its ``field`` (if any) is not true, and when ``loose``, only if the event belongs to
#: no step.
Count = tuple[int, str | None, bool]

#: Per type of event, what it adds to the run's tallies (a :data:`Count`); a type not in it
#: adds nothing.
COUNTS: Final[dict[str, Count]] = {
    TOOL_CALL: (TOOL_CALLS, None, False),
    PERMISSION_DECISION: (DENIALS, "allowed", False),
    CONTEXT_COMPACTION: (COMPACTIONS, None, False),
    _ERROR_EVENT: (LOOSE_ERRORS, None, True),
}
#: :data:`COUNTS` keyed by the type's bytes (for a scan of lines).
COUNTS_BYTES: Final[dict[bytes, Count]] = {name.encode(): c for name, c in COUNTS.items()}
#: The types of event whose usage and cost add up to the run's tokens and cost (in the
#: order met), and whose ``turn`` (a model's answer's) says the run's turns.
PRICED: Final = frozenset((LLM_RESPONSE, CONTEXT_COMPACTION))
PRICED_BYTES: Final = frozenset(name.encode() for name in PRICED)
#: The types of event that carry no step number, or may not (an error of the run): every
#: other event belongs to a step, and a trace that gives one no number is refused.
STEPLESS: Final = frozenset((SESSION_START, SESSION_END, _ERROR_EVENT))
STEPLESS_BYTES: Final = frozenset(name.encode() for name in STEPLESS)


def count(tallies: list[int], etype: str | bytes, in_step: bool, value: bool) -> None:
    """Add to ``tallies`` what one event of type ``etype`` counts for (``in_step``: it
    belongs to a step; ``value``: the truth of the field its count reads, if any)."""
    rule = COUNTS_BYTES.get(etype) if isinstance(etype, bytes) else COUNTS.get(etype)
    if rule is None:
        return
    tally, read, loose = rule
    if (read is None or not value) and not (loose and in_step):
        tallies[tally] += 1


def run_counts(
    tallies: list[int],
    steps: int,
    flags: Mapping[int, int],
    end: Any,
    turn: int,
    costs: Iterable[float | None],
    usages: Iterable[Any],
) -> dict[str, Any]:
    """A run's counts, as :class:`~regista.trace.reader.TraceSummary` names them (``turns``,
    ``steps``, ``tool_calls``, ``cost_usd``, ``errors``, ``denials``, ``compactions``,
    ``tokens``).

    Args:
        tallies: The run's tallies (:data:`COUNTS`).
        steps: How many steps it has.
        flags: How many steps have each value of flags (at least every step in error).
        end: Its ``session.end`` event, or ``None``.
        turn: The highest ``turn`` of its model answers (-1: none).
        costs: The ``cost_usd`` of its :data:`PRICED` events, in order.
        usages: The usage of its :data:`PRICED` events (as
            :func:`regista.tokens.token_totals` reads them).
    """
    from regista.pricing import total_cost
    from regista.tokens import token_totals

    if end is not None:
        cost, turns = end.cost_usd, end.turns
    else:
        cost, turns = total_cost(costs), max(0, turn + 1)
    # One failure is counted once: a step in error (a denial is counted apart), or an error
    # event of no step.
    failures = sum(n for f, n in flags.items() if failed(f))
    return {
        "turns": turns,
        "steps": steps,
        "tool_calls": tallies[TOOL_CALLS],
        "cost_usd": cost,
        "errors": failures + tallies[LOOSE_ERRORS],
        "denials": tallies[DENIALS],
        "compactions": tallies[COMPACTIONS],
        "tokens": token_totals(usages),
    }
