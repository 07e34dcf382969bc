"""regista: an agent harness whose log is its state.

Every session writes an append-only JSONL trace; replay, resume, fork, diff, tape tests and
OpenTelemetry export all read that one file.

The public names are imported on first use, so that ``import regista.trace.index`` (the
debugger's cold start) does not pay for the agent loop, the providers and their models.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from regista._version import __version__
from regista.errors import (
    AgentLoadError,
    InvalidEditError,
    MissingCredentialsError,
    ProviderError,
    RegistaError,
    ReplayDivergence,
    ReplayDivergenceWarning,
    RequestHashMismatch,
    TraceError,
    TraceExistsError,
    TraceFormatError,
    TraceWarning,
    TraceWriteError,
    UnsupportedSchemaVersion,
    UserError,
)

if TYPE_CHECKING:
    from regista.agent import Agent
    from regista.clock import FakeClock
    from regista.context import ContextConfig
    from regista.diff import RunDiff, diff_runs
    from regista.fork import ForkResult, ModelAnswerEdit, ToolResultEdit, fork, rewind
    from regista.loop import RunResult
    from regista.policy import Decision, ToolCallInfo, allow, deny
    from regista.providers.scripted import ScriptedProvider
    from regista.replay import replay, resume
    from regista.tools import Tool, ToolOutcome, current_tool_call, tool
    from regista.trace.formats import OpenedRun
    from regista.trace.reader import Trace

__all__ = [
    "Agent",
    "AgentLoadError",
    "ContextConfig",
    "Decision",
    "FakeClock",
    "ForkResult",
    "InvalidEditError",
    "MissingCredentialsError",
    "ModelAnswerEdit",
    "ProviderError",
    "RegistaError",
    "ReplayDivergence",
    "ReplayDivergenceWarning",
    "RequestHashMismatch",
    "RunDiff",
    "RunResult",
    "ScriptedProvider",
    "Tool",
    "ToolCallInfo",
    "ToolOutcome",
    "ToolResultEdit",
    "Trace",
    "TraceError",
    "TraceExistsError",
    "TraceFormatError",
    "TraceWarning",
    "TraceWriteError",
    "UnsupportedSchemaVersion",
    "UserError",
    "__version__",
    "allow",
    "current_tool_call",
    "deny",
    "diff_runs",
    "fork",
    "open_run",
    "replay",
    "resume",
    "rewind",
    "tool",
]

#: Public name -> the module that defines it, imported on first use.
_LAZY = {
    "Agent": "regista.agent",
    "ContextConfig": "regista.context",
    "FakeClock": "regista.clock",
    "Trace": "regista.trace.reader",
    "RunDiff": "regista.diff",
    "diff_runs": "regista.diff",
    "ForkResult": "regista.fork",
    "ModelAnswerEdit": "regista.fork",
    "ToolResultEdit": "regista.fork",
    "fork": "regista.fork",
    "rewind": "regista.fork",
    "RunResult": "regista.loop",
    "Decision": "regista.policy",
    "ToolCallInfo": "regista.policy",
    "allow": "regista.policy",
    "deny": "regista.policy",
    "ScriptedProvider": "regista.providers.scripted",
    "replay": "regista.replay",
    "resume": "regista.replay",
    "Tool": "regista.tools",
    "ToolOutcome": "regista.tools",
    "tool": "regista.tools",
    "current_tool_call": "regista.tools",
}

#: Functions named like the submodule that defines them: ``regista.replay`` is the
#: function, whether or not the module ``regista.replay`` was imported (it lives on in
#: ``sys.modules``, so ``from regista.replay import resume`` works as usual).
_SHADOWED = frozenset({"replay", "fork"})


def open_run(path: str | Path) -> OpenedRun:
    """Open any run: a regista trace, a pipe, or a session of another tool (Claude Code,
    Codex, OTLP JSON), its format told once from the content.

    ``open_run(path).trace()`` reads it whole, ``.index()`` lazily; ``.format.name`` says
    what it is. See :func:`regista.trace.formats.open_run`.
    """
    import regista.importers  # noqa: F401 - the other tools' formats register on import
    from regista.trace.formats import open_run as open_file

    return open_file(path)


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'regista' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    # What the public API is given to read may be another tool's session: their formats
    # register with the trace layer when the importers are imported (cheaply).
    importlib.import_module("regista.importers")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


class _Package(ModuleType):
    """Keeps a submodule import from replacing the function of the same name."""

    def __setattr__(self, name: str, value: Any) -> None:
        if name in _SHADOWED and isinstance(value, ModuleType):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
