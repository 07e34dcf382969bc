"""Subagent runs: the run a step started (a Claude Code ``Task`` call, a compaction agent).

An imported step that started a subagent carries ``subagent: {"session_id", …}`` on its
``tool.call`` (or ``context.compaction``) event. The run is found among the runs converted
in memory in this process (a transcript opened directly), else beside the trace (a folder
written by ``regista import``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from regista.errors import TraceError
from regista.trace.index import TraceIndex
from regista.trace.steps import Step

__all__ = ["open_subagent", "subagent_link"]


def subagent_link(step: Step) -> dict[str, Any] | None:
    """The ``subagent`` link of a step, if it started one."""
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


def open_subagent(index: TraceIndex, link: dict[str, Any]) -> TraceIndex:
    """An index of the subagent run ``link`` names.

    Raises:
        TraceError: The run is neither converted in memory nor beside the trace.
    """
    from regista_tui.__main__ import open_index

    sid = link["session_id"]
    path = find_run(sid, index.path)
    if path is None:
        raise TraceError(
            f"the subagent's run {sid} is not beside {index.path.name} "
            "(regista import writes it there)"
        )
    child, _ = open_index(path)
    return child
