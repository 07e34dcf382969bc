"""Opening a subagent's run (the run a step started: see :mod:`regista.subagents`)."""

from __future__ import annotations

from typing import Any

from regista import TraceError
from regista.engine import TraceIndex, find_run, subagent_link

__all__ = ["open_subagent", "subagent_link"]


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
