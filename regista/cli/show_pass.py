"""One pass over a loaded trace for ``regista show``: each step's columns and the summary.

A big trace holds hundreds of thousands of events spread over hundreds of megabytes; every
pass over them costs as much in memory reads as in work. Grouping the events into steps,
reading each step's columns and adding up the summary are done here while each event is
read once, with the rules of :func:`regista.trace.steps.build_steps` (a step begins with
its opening event, numbered steps in order), of ``Step``'s views (the first event of each
kind) and of :meth:`regista.trace.reader.Trace.summary`, which it says the same as.
"""

from __future__ import annotations

from collections import Counter
from functools import cached_property
from operator import attrgetter
from typing import TYPE_CHECKING, Any

from regista.breakdown import took_ms
from regista.tokens import Tokens, tokens_of
from regista.trace import grouping
from regista.trace.grouping import COUNTS, RULES, opens
from regista.trace.names import (
    CONTEXT_COMPACTION,
    ERROR,
    LLM_REQUEST,
    LLM_RESPONSE,
    PERMISSION_DECISION,
    TOOL_CALL,
    TOOL_RESULT,
    StepKind,
)

if TYPE_CHECKING:
    from regista.trace.listing import Listing
    from regista.trace.reader import Trace, TraceSummary

from regista.vocab import RunOutcome, compaction_gist, end_outcome, model_gist, tool_gist

__all__ = ["Glance", "Row", "StepsPass", "marks_text", "ms_text", "tokens_text"]

_DENIED, _ERROR, _UNFINISHED = "[yellow]denied[/]", "[red]error[/]", "[yellow]unfinished[/]"
# A step's facts (regista.trace.grouping's flags).
_IS_COMPLETE, _IS_DENIED, _IS_ERROR = grouping.COMPLETE, grouping.DENIED, grouping.ERROR
_FACTS = grouping.FACTS
_LIVE = (None, "live")  # who answered a step: live, or not said (then live)
_FLAGS = attrgetter("flags")


def ms_text(value: float) -> str:
    """``f"{value:,.0f}"`` (a short duration, the common case, without the format call:
    ``round`` rounds a tie to even as the format does)."""
    if 0.0 < value < 999.5:
        return str(round(value))
    return f"{value:,.0f}"


def tokens_text(usage: dict[str, Any] | None) -> str:
    """A step's tokens (:meth:`~regista.tokens.Tokens.short`: ``in/out+cached``), or
    nothing."""
    if not usage:
        return ""
    return tokens_of(usage).short()


def marks_text(denied: bool, is_error: bool, complete: bool, origin: str, mixed: bool) -> str:
    """A step's markers (rich markup)."""
    tags = []
    if denied:
        tags.append(_DENIED)
    elif is_error:
        tags.append(_ERROR)
    if not complete and not is_error:  # a failed call: its error says why
        tags.append(_UNFINISHED)
    if origin != "live":
        tags.append(f"[magenta]{origin}[/]")
    elif mixed:
        tags.append("[green]live[/]")
    return " ".join(tags)


class Row:
    """One step: what its columns need, read from the first event of each kind as it came
    (and those events, for its whole gist)."""

    # What a step has not read yet (a step sets its own as it reads them: most of a row's
    # fields are never set).
    response: Any = None
    call: Any = None
    result: Any = None
    compaction: Any = None
    error: Any = None
    #: The model the request named.
    model: str | None = None
    #: Answered by an offline model.
    scripted = False
    tool: str | None = None
    #: Its facts, folded from its events by the rules.
    flags = 0
    #: Who answered: the first response, result or compaction.
    origin: str | None = None
    tokens = ""
    gist: str | None = None
    # What regista.loops.RepeatFinder reads of a step, under the names Step gives them (set
    # with call, response and error).
    tool_call: Any = None
    response_event: Any = None
    errors: tuple[Any, ...] = ()

    def __init__(self, index: int, kind: StepKind, first: Any) -> None:
        self.index, self.kind = index, kind
        # its first event, and its last one as far as a step cut short needs it (for its time)
        self.first = self.last = first
        self.rules = RULES[kind]

    @property
    def denied(self) -> bool:
        return bool(self.flags & _IS_DENIED)

    @property
    def ms(self) -> float | None:
        """How long the step took (:func:`regista.breakdown.took_ms`)."""
        kind = self.kind
        closing = (
            self.response if kind == "model" else self.result if kind == "tool" else self.compaction
        )
        return took_ms(self.first, closing, self.last, ran=not self.denied)

    def whole_gist(self) -> str:
        """The gist in full."""
        if self.kind == "model":
            return model_gist(self.response, self.error)
        if self.kind == "tool":
            return tool_gist(self.call, self.result)
        return "" if self.compaction is None else compaction_gist(self.compaction)

    def columns(self, mixed: bool, limit: int | None) -> tuple[str, str, str, str, str]:
        """Name, tokens, milliseconds, markers (rich markup) and gist (with ``limit`` maybe
        only its start: see :func:`regista.vocab.gist_of`).

        ``mixed``: the run mixes recorded and live steps (a replay, resume or fork), so
        the live ones are tagged too.
        """
        kind = self.kind
        gist = self.gist
        if kind == "model":
            # Who answered: an offline model shows as "scripted", never as the model name
            # the request carried.
            title = "scripted" if self.scripted else self.model or "?"
            closing = self.response
            if gist is None:  # no answer: the error says why
                gist = model_gist(closing, self.error, limit)
        elif kind == "tool":
            title = self.tool or "?"
            closing = self.result
            if gist is None:  # no result
                gist = tool_gist(self.call, closing, limit)
        else:
            title = "compaction"
            closing = self.compaction
        flags = self.flags
        # A denied tool never ran (its time: see ms).
        if flags & _IS_DENIED:
            ms = ""
        else:
            # took_ms's common case first: a duration its closing event recorded, short
            # (ms_text's: rounded to the µs, then to the ms)
            took = getattr(closing, "duration_ms", None)
            if type(took) is float and 0.0 < took < 999.0:
                ms = str(round(round(took, 3)))
            else:
                took = took_ms(self.first, closing, self.last)
                ms = "" if took is None else ms_text(took)
        origin = self.origin
        if flags & _FACTS == _IS_COMPLETE and origin in _LIVE and not mixed:
            marks = ""  # the usual step: nothing to mark
        else:
            marks = marks_text(
                bool(flags & _IS_DENIED),
                bool(flags & _IS_ERROR),
                bool(flags & _IS_COMPLETE),
                origin or "live",
                mixed,
            )
        return title, self.tokens, ms, marks, gist or ""


class StepsPass:
    """The steps of ``trace`` as :class:`Row` objects, in step order, and its summary.

    Args:
        trace: The loaded trace.
        limit: Make only the start of each gist, at least this long (``None``: whole).
    """

    def __init__(self, trace: Trace | Listing, limit: int | None) -> None:
        #: How long a gist was made at least (``None``: whole).
        self.limit = limit
        end = trace.end
        rows: dict[int, Row] = {}
        get = rows.get
        usages: list[Tokens] = []  # of each response and compaction (grouping.PRICED)
        costs: list[float | None] = []
        turn = -1
        tallies = [0] * grouping.TALLIES  # the run's, by the core's COUNTS
        count_of = COUNTS.get
        for ev in trace.events:
            what = ev.type
            # The step: begun by its opening event; an event before it belongs to none.
            n = getattr(ev, "step", None)
            row = None if n is None else get(n)
            if row is None and n is not None:
                kind = opens(n, what)
                if kind is not None:
                    row = rows[n] = Row(n, kind, ev)
            if row is not None:  # its facts (regista.trace.grouping)
                rule = row.rules.get(what)
                if rule is not None and not row.flags & rule[0]:
                    read = rule[3]
                    row.flags |= rule[2] if read is not None and getattr(ev, read) else rule[1]
            # What it adds to the run's tallies (regista.trace.grouping.COUNTS).
            count = count_of(what)
            if count is not None:
                tally, read, loose = count
                if (read is None or getattr(ev, read) is not True) and (row is None or not loose):
                    tallies[tally] += 1
            # What the summary adds up comes from every event; a row reads the first event
            # of each kind in its step.
            if what == LLM_RESPONSE:
                usage = ev.response.get("usage")
                counted = tokens_of(usage) if usage else None  # each usage read once
                if counted is not None:
                    usages.append(counted)
                if end is None:
                    turn = max(turn, ev.turn)
                    costs.append(ev.cost_usd)
                if row is not None and row.response is None:
                    row.response = row.response_event = ev
                    row.origin = row.origin or ev.source
                    if row.kind == "model":
                        row.scripted = ev.provider == "scripted"
                        row.tokens = "" if counted is None else counted.short()
                        row.gist = model_gist(ev, None, limit)
            elif what == TOOL_RESULT:
                if row is not None and row.result is None:
                    row.result = ev
                    row.origin = row.origin or ev.source
                    if row.kind == "tool":  # its call opened it
                        row.gist = tool_gist(row.call, ev, limit)
            elif what == TOOL_CALL:
                if row is not None and row.call is None:
                    row.call = row.tool_call = ev
                    row.tool = ev.name
            elif what == PERMISSION_DECISION:
                if row is not None:
                    row.last = ev
            elif what == LLM_REQUEST:
                if row is not None and row.model is None:
                    row.model = ev.model
            elif what == CONTEXT_COMPACTION:
                usage = ev.usage
                counted = tokens_of(usage) if usage else None
                if counted is not None:
                    usages.append(counted)
                if end is None:
                    costs.append(ev.cost_usd)
                if row is not None and row.compaction is None:
                    row.compaction = ev
                    row.origin = row.origin or ev.source
                    if row.kind == "compaction":
                        row.tokens = "" if counted is None else counted.short()
                        row.gist = compaction_gist(ev, limit)
            elif what == ERROR and row is not None:
                row.last = ev
                if row.error is None:
                    row.error = ev
                    row.errors = (ev,)
        #: The steps in order.
        self.rows = [rows[k] for k in sorted(rows)]
        self._start, self._end = trace.start, end
        # The run's counts (regista.trace.grouping.run_counts); the costs and turns were
        # kept only when the run did not end (its session.end says them).
        self._counts: dict[str, Any] = grouping.run_counts(
            tallies, len(rows), Counter(map(_FLAGS, self.rows)), end, turn, costs, usages
        )
        #: The run's tokens (:mod:`regista.tokens`).
        self.tokens: Tokens = self._counts["tokens"]
        #: What the summary says that a header shows (without the models).
        self.glance = Glance(self._start, end, **self._counts)

    @cached_property
    def summary(self) -> TraceSummary:
        """What :meth:`Trace.summary` says (made when asked: it needs the models)."""
        from regista.trace.reader import TraceSummary

        return TraceSummary.of(self._start, self._end, usage=self.tokens.as_usage(), **self._counts)


class Glance:
    """A run's summary as a header shows it: :class:`~regista.trace.reader.TraceSummary`'s
    fields, with its :class:`~regista.tokens.Tokens` for its ``usage``."""

    def __init__(self, start: Any, end: Any, **counts: Any) -> None:
        self.session_id: str = start.session_id
        self.task: str = start.task
        self.model: str = start.model
        self.provider: str = start.provider
        self.stop_reason: str | None = end.stop_reason if end else None
        self.status: RunOutcome = end_outcome(end)
        self.output: str | None = end.output if end else None
        self.replay_of: str | None = start.replay_of
        self.forked_from: dict[str, Any] | None = start.forked_from
        self.turns: int = counts["turns"]
        self.steps: int = counts["steps"]
        self.tool_calls: int = counts["tool_calls"]
        self.cost_usd: float | None = counts["cost_usd"]
        self.errors: int = counts["errors"]
        self.denials: int = counts["denials"]
        self.compactions: int = counts["compactions"]
        self.tokens: Tokens = counts["tokens"]

    @property
    def cost_basis(self) -> str:
        """How :attr:`cost_usd` was made (see :func:`regista.pricing.cost_basis`)."""
        from regista.pricing import run_cost_basis

        return run_cost_basis(self.cost_usd, self.model)
