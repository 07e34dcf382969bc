"""Subagent runs: the run a step started (a Claude Code ``Task`` call, a compaction agent).

An imported step that started a subagent carries ``subagent: {"session_id", …}`` on its
``tool.call`` (or ``context.compaction``) event. The run is found among the runs converted
in memory in this process (a transcript opened directly), else beside the trace (a folder
written by ``regista import``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

__all__ = ["find_run", "subagent_link"]


def subagent_link(step: Any) -> dict[str, Any] | None:
    """The ``subagent`` link of a :class:`~regista.trace.steps.Step`, if it started one."""
    for ev in step.events:
        link = (ev.model_extra or {}).get("subagent")
        if isinstance(link, dict) and isinstance(link.get("session_id"), str):
            return link
    return None


def find_run(session_id: str, beside: Path) -> Path | None:
    """Where the run ``session_id`` can be read, or ``None``."""
    from regista.importers.memory import RUNS

    found = RUNS.path_of(session_id, beside)
    if found is not None:
        return found
    candidate = beside.parent / f"{session_id}.jsonl"
    return candidate if candidate.is_file() else None
