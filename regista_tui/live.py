"""Where a fork's live half comes from: the agent, its provider, and how to name them.

The agent is the one given to the app (an ``Agent``, or ``--agent module:attr``), else the
trace's ``agent_ref``. It is re-created for every fork (a sample agent's tools then work
on a fresh shop), except an ``Agent`` object handed to the app, which is reused.

A trace with no agent (a program recorded with ``regista record -- CMD``, an imported
session) is forked by running a program against regista's server, as ``regista fork …
-- CMD`` does: the command given after ``regista-tui TRACE --``; without one, the TUI says
the ``regista fork`` line to run.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from typing import Any, Literal

from regista import RegistaError, UserError

__all__ = ["LiveHalf", "resolve_live"]

#: Who answers a fork's live steps: a regista ``Agent``; a program run against regista's
#: server (``-- CMD``); or nobody here (the TUI says the command line to run instead).
How = Literal["agent", "command", "none"]


@dataclass(frozen=True)
class LiveHalf:
    """The agent that runs a fork's live steps.

    Attributes:
        agent: The ``Agent``.
        origin: Where it came from (``--agent``, the trace's ``agent_ref``, ``given``).
        provider: The provider's name (``scripted``, ``anthropic``, …).
        model: The model its requests name.
        how: An agent, a command, or none (see :data:`How`).
        command: The program that runs the fork (``how == "command"``).
    """

    agent: Any
    origin: str
    provider: str
    model: str
    how: How = "agent"
    command: tuple[str, ...] = ()

    @property
    def scripted(self) -> bool:
        """The live half is the offline demo model (no key, no network, $0)."""
        return self.provider == "scripted"

    def describe(self) -> str:
        """One line for a person: who answers the live steps."""
        if self.how == "command":
            return f"the program {shlex.join(self.command)}, its calls live via {self.provider}"
        if self.how == "none":
            return "the program you recorded (no agent here: the TUI says the command to run)"
        who = (
            "scripted (the offline demo model: no key, no network, $0)"
            if self.scripted
            else f"{self.model} via {self.provider}"
        )
        return f"{who} · {self.origin}"


def resolve_live(
    agent: Any, trace_agent_ref: str | None, command: list[str] | None = None, start: Any = None
) -> LiveHalf:
    """Find the agent for a fork's live half and make sure its provider can run.

    Args:
        agent: An ``Agent``, a ``module:attr`` reference, or ``None``.
        trace_agent_ref: The trace's ``agent_ref`` (used when ``agent`` is ``None``).
        command: The program to fork with (``regista-tui TRACE -- CMD``), for a trace
            with no agent (or when no agent is given).
        start: The trace's ``session.start`` (its provider and model name a program's).

    Raises:
        UserError: No agent can be found or loaded, or its provider cannot run (e.g. no
            API key: the message says what to set).
    """
    from regista.engine import load_agent

    if agent is not None and not isinstance(agent, str):
        live, origin = agent, "the agent given to the app"
    else:
        ref = agent or trace_agent_ref
        if not ref or (command and not agent):
            # A recorded program: it runs again against the fork (or the TUI says how).
            provider = str(getattr(start, "provider", "") or "?")
            model = str(getattr(start, "model", "") or "?")
            if command:
                return LiveHalf(None, "-- CMD", provider, model, "command", tuple(command))
            return LiveHalf(None, "no agent", provider, model, "none")
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
