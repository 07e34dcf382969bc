"""Policies decide, per tool call, whether it may run.

A policy is any callable ``policy(call)`` (sync or async) returning ``True``/``False``, a
:class:`Decision` (with a reason), or ``None`` (allow). Each decision is recorded as a
``permission.decision`` event; a denial reaches the model as an error tool result.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from regista.aio import await_maybe

__all__ = ["Decision", "ToolCallInfo", "allow", "deny", "evaluate_policy"]


@dataclass(frozen=True)
class ToolCallInfo:
    """The tool call a policy is asked about."""

    id: str
    name: str
    input: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Decision:
    """A policy's answer."""

    allowed: bool
    reason: str | None = None

    def __bool__(self) -> bool:
        return self.allowed


def allow(reason: str | None = None) -> Decision:
    return Decision(True, reason)


def deny(reason: str | None = None) -> Decision:
    return Decision(False, reason)


PolicyFn = Callable[[ToolCallInfo], Any]


async def evaluate_policy(policy: PolicyFn | None, call: ToolCallInfo) -> Decision:
    """Ask ``policy`` about ``call``; a policy that raises denies, with the error as reason."""
    if policy is None:
        return Decision(True, None)
    try:
        answer = await await_maybe(policy(call))
    except Exception as exc:  # a broken policy must not run the tool, nor crash the run
        return Decision(False, f"policy raised {type(exc).__name__}: {exc}")
    if answer is None:
        return Decision(True, None)
    if isinstance(answer, Decision):
        return answer
    return Decision(bool(answer), None)


def policy_name(policy: PolicyFn | None) -> str | None:
    if policy is None:
        return None
    mod = getattr(policy, "__module__", None)
    qual = getattr(policy, "__qualname__", None) or type(policy).__qualname__
    return f"{mod}:{qual}" if mod else qual
