"""Moved to :mod:`regista.diff.structural`; this name still imports it."""

from __future__ import annotations

from regista.diff.structural import (
    Change,
    format_changes,
    short_repr,
    structural_diff,
)

__all__ = [
    "Change",
    "format_changes",
    "short_repr",
    "structural_diff",
]
