"""Moved to :mod:`regista.diff.steps`; this name still imports it."""

from __future__ import annotations

from regista.diff.steps import (
    DiffKind,
    classify,
    list_changes,
    request_config,
    signature,
    step_changes,
    step_summary,
)

__all__ = [
    "DiffKind",
    "classify",
    "list_changes",
    "request_config",
    "signature",
    "step_changes",
    "step_summary",
]
