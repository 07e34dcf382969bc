"""Where a fork's live half comes from: the agent, its provider, and how to name them.

The agent is the one given to the app (an ``Agent``, or ``--agent module:attr``), else the
trace's ``agent_ref``. It is re-created for every fork (a sample agent's tools then work
on a fresh shop), except an ``Agent`` object handed to the app, which is reused.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from regista.errors import RegistaError, UserError

__all__ = ["LiveHalf", "resolve_live"]


@dataclass(frozen=True)
class LiveHalf:
    """The agent that runs a fork's live steps.

    Attributes:
        agent: The ``Agent``.
        origin: Where it came from (``--agent``, the trace's ``agent_ref``, ``given``).
        provider: The provider's name (``scripted``, ``anthropic``, …).
        model: The model its requests name.
    """

    agent: Any
    origin: str
    provider: str
    model: str

    @property
    def scripted(self) -> bool:
        """The live half is the offline demo model (no key, no network, $0)."""
        return self.provider == "scripted"

    def describe(self) -> str:
        """One line for a person: who answers the live steps."""
        who = (
            "scripted (the offline demo model: no key, no network, $0)"
            if self.scripted
            else f"{self.model} via {self.provider}"
        )
        return f"{who} · {self.origin}"


def resolve_live(agent: Any, trace_agent_ref: str | None) -> LiveHalf:
    """Find the agent for a fork's live half and make sure its provider can run.

    Args:
        agent: An ``Agent``, a ``module:attr`` reference, or ``None``.
        trace_agent_ref: The trace's ``agent_ref`` (used when ``agent`` is ``None``).

    Raises:
        UserError: No agent can be found or loaded, or its provider cannot run (e.g. no
            API key: the message says what to set).
    """
    from regista.loading import load_agent

    if agent is not None and not isinstance(agent, str):
        live, origin = agent, "the agent given to the app"
    else:
        ref = agent or trace_agent_ref
        if not ref:
            raise UserError(
                "this trace records no agent_ref, so the live half has no agent: start "
                "regista-tui with --agent module:attr (an Agent, or a function returning one)"
            )
        origin = f"agent {ref} (--agent)" if agent else f"agent {ref} (the trace's agent_ref)"
        live = load_agent(ref)
    try:
        provider = live.provider  # an agent with provider=None makes its Anthropic client here
    except RegistaError:
        raise
    except Exception as exc:  # a broken provider is shown as one line, not a traceback
        raise UserError(f"the agent's provider cannot start: {type(exc).__name__}: {exc}") from None
    if getattr(provider, "stream", None) is False:
        # Stream the live half so its text appears in the TUI as it is generated.
        provider.stream = True
    return LiveHalf(live, origin, str(getattr(provider, "name", "?")), str(live.model))
