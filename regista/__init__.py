"""regista: an agent harness whose log is its state.

Every session writes an append-only JSONL trace; replay, resume, fork, diff, tape tests and
OpenTelemetry export all read that one file.
"""

from typing import TYPE_CHECKING, Any

from regista._version import __version__
from regista.agent import Agent
from regista.context import ContextConfig
from regista.errors import (
    AgentLoadError,
    InvalidEditError,
    MissingCredentialsError,
    ProviderError,
    RegistaError,
    ReplayDivergence,
    ReplayDivergenceWarning,
    TraceError,
    TraceFormatError,
    UnsupportedSchemaVersion,
    UserError,
)
from regista.fork import ForkResult, ModelAnswerEdit, ToolResultEdit, fork, rewind
from regista.loop import RunResult
from regista.policy import Decision, ToolCallInfo, allow, deny
from regista.replay import replay, resume
from regista.tools import Tool, ToolOutcome, tool

if TYPE_CHECKING:
    from regista.diff import RunDiff, diff_runs

__all__ = [
    "Agent",
    "AgentLoadError",
    "ContextConfig",
    "Decision",
    "ForkResult",
    "InvalidEditError",
    "MissingCredentialsError",
    "ModelAnswerEdit",
    "ProviderError",
    "RegistaError",
    "ReplayDivergence",
    "ReplayDivergenceWarning",
    "RunDiff",
    "RunResult",
    "Tool",
    "ToolCallInfo",
    "ToolOutcome",
    "ToolResultEdit",
    "TraceError",
    "TraceFormatError",
    "UnsupportedSchemaVersion",
    "UserError",
    "__version__",
    "allow",
    "deny",
    "diff_runs",
    "fork",
    "replay",
    "resume",
    "rewind",
    "tool",
]

# Imported on first use. (Functions named like their module, ``replay`` and ``fork``,
# are imported eagerly: the submodule would otherwise shadow the function.)
_LAZY = {
    "diff_runs": "regista.diff",
    "RunDiff": "regista.diff",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'regista' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)
