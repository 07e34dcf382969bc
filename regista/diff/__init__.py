"""The diff family: two runs aligned step by step, each pair classified, field-level changes.

- :mod:`regista.diff.runs`: :func:`diff_runs` and its result (:class:`RunDiff`); the rules.
- :mod:`regista.diff.steps`: how two steps compare (signatures, kinds, changes).
- :mod:`regista.diff.structural`: the field-level diff of two JSON-like values.
- :mod:`regista.diff.align`: the alignment of two sequences of signatures.

The names below are imported on first use, so that a provider needing only
:mod:`regista.diff.structural` does not load the whole family.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from regista.diff.runs import (
        KINDS,
        LABELS,
        AlignedPair,
        DiffKind,
        Divergence,
        RunDiff,
        diff_runs,
        step_summary,
    )

__all__ = [
    "KINDS",
    "LABELS",
    "AlignedPair",
    "DiffKind",
    "Divergence",
    "RunDiff",
    "diff_runs",
    "step_summary",
]


def __getattr__(name: str) -> Any:
    if name not in __all__:
        raise AttributeError(f"module 'regista.diff' has no attribute {name!r}")
    value = getattr(importlib.import_module("regista.diff.runs"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
