"""Re-creating an agent from a reference: ``module:attr``.

``attr`` is an ``Agent``, or a callable that returns one when called with no arguments.
The same rule holds everywhere an agent reference appears (``agent_ref`` in a trace,
``--agent`` on any command).
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from regista.errors import AgentLoadError, UserError

if TYPE_CHECKING:
    from regista.types import AgentSpec

__all__ = ["load_agent", "resolve_agent"]


def load_agent(ref: str) -> Any:
    """Import ``module:attr`` and return the ``Agent`` it names.

    Raises:
        AgentLoadError: The reference is malformed, cannot be imported, or does not give
            an ``Agent``.
    """
    from regista.agent import Agent

    module_name, sep, attr = ref.partition(":")
    if not sep or not module_name or not attr:
        raise AgentLoadError(
            f"agent reference {ref!r} is not of the form 'module:attr' "
            "(e.g. 'myapp.agents:support_agent')"
        )
    cwd = str(Path.cwd())
    if cwd not in sys.path:  # like `python -m`, let references name local modules
        sys.path.insert(0, cwd)
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise AgentLoadError(f"cannot import {module_name!r} for agent {ref!r}: {exc}") from None
    except Exception as exc:
        raise AgentLoadError(
            f"importing {module_name!r} for agent {ref!r} failed: {type(exc).__name__}: {exc}"
        ) from None
    target: Any = module
    for part in attr.split("."):
        try:
            target = getattr(target, part)
        except AttributeError:
            raise AgentLoadError(f"module {module_name!r} has no attribute {attr!r}") from None
    if isinstance(target, Agent):
        return target
    if callable(target):
        try:
            made = target()
        except Exception as exc:
            raise AgentLoadError(
                f"calling {ref} to make the agent failed: {type(exc).__name__}: {exc}"
            ) from None
        if isinstance(made, Agent):
            return made
        raise AgentLoadError(f"{ref}() returned {type(made).__name__}, not an Agent")
    raise AgentLoadError(f"{ref} is a {type(target).__name__}, not an Agent or a factory")


def resolve_agent(agent: AgentSpec | None, agent_ref: str | None, missing: str) -> Any:
    """The agent a command runs: ``agent`` (an ``Agent`` or ``module:attr``), else the one
    a trace's ``agent_ref`` names.

    Args:
        agent: What the caller gave, if anything.
        agent_ref: The trace's ``agent_ref``.
        missing: The message when there is neither.

    Raises:
        UserError: Neither gives an agent (``missing``).
        AgentLoadError: A reference cannot be loaded.
    """
    if agent is not None:
        return load_agent(agent) if isinstance(agent, str) else agent
    if agent_ref:
        return load_agent(agent_ref)
    raise UserError(missing)
