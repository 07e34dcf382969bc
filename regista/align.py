"""Moved to :mod:`regista.diff.align`; this name still imports it."""

from __future__ import annotations

from regista.diff.align import (
    Alignment,
    align,
    align_levels,
)

__all__ = [
    "Alignment",
    "align",
    "align_levels",
]
