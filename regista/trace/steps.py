"""Steps: the unit people scrub, fork and diff.

A step is one model call (``llm.request`` + ``llm.response``), one tool call
(``tool.call`` + ``permission.decision`` + ``tool.result``) or one compaction, numbered
from 0 in trace order. Every event that belongs to a step carries its ``step``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from operator import attrgetter
from typing import Any

from regista.trace.events import (
    ContextCompaction,
    ErrorEvent,
    LlmRequestEvent,
    LlmResponseEvent,
    PermissionDecision,
    ToolCall,
    ToolResult,
)
from regista.trace.grouping import COMPLETE, DENIED, ERROR, Grouping, step_flags
from regista.trace.names import StepKind
from regista.types import LlmRequest, LlmResponse

__all__ = ["Step", "StepKind", "build_steps"]


@dataclass
class Step:
    """One step and the events that make it up (in trace order)."""

    index: int
    kind: StepKind
    events: list[Any] = field(default_factory=list)
    resolve_request: Callable[[LlmRequestEvent], LlmRequest] | None = field(
        default=None, repr=False, compare=False
    )
    _request: LlmRequest | None = field(default=None, repr=False, compare=False)
    #: The first event of each class, and the list (and its length) it was made from.
    _roles: tuple[Any, int, dict[type[Any], Any]] = field(
        default=(None, -1, {}), init=False, repr=False, compare=False
    )
    #: Its facts (``regista.trace.grouping``'s flags), and the list (and length) they were
    #: folded from.
    _flags: tuple[Any, int, int] = field(
        default=(None, -1, 0), init=False, repr=False, compare=False
    )

    @property
    def request(self) -> LlmRequest | None:
        """The full request of a model step (rebuilt on first use), else ``None``."""
        if self._request is None and self.resolve_request is not None:
            ev = self.request_event
            if ev is not None:
                self._request = self.resolve_request(ev)
        return self._request

    def roles(self) -> dict[type[Any], Any]:
        """The first event of each class in the step (what the properties below look up;
        events are added to the list or the list replaced, never changed in place)."""
        events = self.events
        seen, count, roles = self._roles
        if seen is not events or count != len(events):  # first look, or events changed
            roles = {}
            for ev in events:
                roles.setdefault(type(ev), ev)
            self._roles = (events, len(events), roles)
        return roles

    def _first(self, cls: type[Any]) -> Any:
        return self.roles().get(cls)

    @property
    def request_event(self) -> LlmRequestEvent | None:
        return self._first(LlmRequestEvent)  # type: ignore[no-any-return]

    @property
    def response_event(self) -> LlmResponseEvent | None:
        return self._first(LlmResponseEvent)  # type: ignore[no-any-return]

    @property
    def response(self) -> LlmResponse | None:
        ev = self.response_event
        return LlmResponse.model_validate(ev.response) if ev else None

    @property
    def tool_call(self) -> ToolCall | None:
        return self._first(ToolCall)  # type: ignore[no-any-return]

    @property
    def decision(self) -> PermissionDecision | None:
        return self._first(PermissionDecision)  # type: ignore[no-any-return]

    @property
    def result(self) -> ToolResult | None:
        return self._first(ToolResult)  # type: ignore[no-any-return]

    @property
    def compaction(self) -> ContextCompaction | None:
        return self._first(ContextCompaction)  # type: ignore[no-any-return]

    @property
    def errors(self) -> list[ErrorEvent]:
        return [ev for ev in self.events if isinstance(ev, ErrorEvent)]

    @property
    def turn(self) -> int:
        for ev in self.events:
            turn = getattr(ev, "turn", None)
            if turn is not None:
                return int(turn)
        return 0

    @property
    def flags(self) -> int:
        """Its facts, as :mod:`regista.trace.grouping` folds them from its events (as
        :meth:`roles`, made again when the events changed)."""
        events = self.events
        seen, count, flags = self._flags
        if seen is not events or count != len(events):
            flags = step_flags(self.kind, events)
            self._flags = (events, len(events), flags)
        return flags

    @property
    def complete(self) -> bool:
        """False for a step the process died in the middle of: its closing event (a
        model's response, a tool's result) was not written."""
        return bool(self.flags & COMPLETE)

    @property
    def is_error(self) -> bool:
        """An error event of the step, or its first result says ``is_error``."""
        return bool(self.flags & ERROR)

    @property
    def denied(self) -> bool:
        """Its first decision did not allow the call."""
        return bool(self.flags & DENIED)

    @property
    def source(self) -> str:
        """``live``, ``recorded`` (served from a tape) or ``edit`` (a fork's edit)."""
        for ev in self.events:
            if isinstance(ev, LlmResponseEvent | ToolResult | ContextCompaction):
                return str(ev.source)
        return "live"

    @property
    def title(self) -> str:
        """Tool name, or the model for model calls and compactions."""
        if self.kind == "tool":
            call = self.tool_call
            return call.name if call else "?"
        if self.kind == "model":
            # Say who answered: an offline model shows as "scripted", never as the
            # model name the request carried.
            resp = self.response_event
            if resp is not None and resp.provider == "scripted":
                return "scripted"
            req = self.request_event
            return req.model if req else "?"
        return "compaction"


def build_steps(
    events: list[Any], resolve_request: Callable[[LlmRequestEvent], LlmRequest] | None = None
) -> list[Step]:
    """Group events into steps by their ``step`` field, as :class:`~regista.trace.grouping.
    Grouping` does; ``resolve_request`` rebuilds a model step's full request when someone
    asks for it."""
    groups = Grouping()
    at, place = groups.at, groups.place
    steps: list[Step] = []
    for ev in events:
        n = getattr(ev, "step", None)
        if n is None:
            continue
        pos = at.get(n)
        if pos is None:  # a new step, or none: a number no opener began (its opener lost)
            pos = place(n, ev.type)
            if pos is None:
                continue
            steps.append(Step(index=n, kind=groups.kinds[pos], resolve_request=resolve_request))
        steps[pos].events.append(ev)
    return sorted(steps, key=attrgetter("index"))
