"""The engine as the TUI sees it: the one module of regista's that ``regista_tui`` imports
beyond the public API (re-exports only; the engine never imports the TUI).

The names of :data:`_FROM` are loaded on first use (a sweep's names cost nothing to a TUI
that never opens one).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from regista.errors import RegistaError, UserError
from regista.importers.detect import detect
from regista.importers.memory import LIVE_S, follow
from regista.server.handoff import REPLAY_KEY, ReplayDesk, ReplayHandoff

if TYPE_CHECKING:
    from regista.diff.masks import MASKED, pair_verdict
    from regista.diff.nway import NWayDiff, NWayRow, align_many, divergence_text
    from regista.diff.runs import AlignedPair, Divergence, RunDiff, step_summary
    from regista.errors import TraceError
    from regista.sweep import CANCEL_FILE, Fork, Sweep, SweepRow, load_sweep, sweep_rows
    from regista.sweep.table import sweep_masks, table_cells
    from regista.vocab import KIND_COLOURS, KIND_MARKS, LABELS

#: Each name and the module it comes from.
_FROM: dict[str, str] = {
    # errors
    "TraceError": "regista.errors",
    # diffs
    "AlignedPair": "regista.diff.runs",
    "Divergence": "regista.diff.runs",
    "RunDiff": "regista.diff.runs",
    "step_summary": "regista.diff.runs",
    "NWayDiff": "regista.diff.nway",
    "NWayRow": "regista.diff.nway",
    "align_many": "regista.diff.nway",
    "divergence_text": "regista.diff.nway",
    "KIND_COLOURS": "regista.vocab",
    "KIND_MARKS": "regista.vocab",
    "LABELS": "regista.vocab",
    # sweeps
    "CANCEL_FILE": "regista.sweep",
    "Fork": "regista.sweep",
    "Sweep": "regista.sweep",
    "SweepRow": "regista.sweep",
    "load_sweep": "regista.sweep",
    "sweep_rows": "regista.sweep",
    "table_cells": "regista.sweep.table",
    "sweep_masks": "regista.sweep.table",
    "MASKED": "regista.diff.masks",
    "pair_verdict": "regista.diff.masks",
}

__all__ = [
    "CANCEL_FILE",
    "KIND_COLOURS",
    "KIND_MARKS",
    "LABELS",
    "LIVE_S",
    "MASKED",
    "REPLAY_KEY",
    "AlignedPair",
    "Divergence",
    "Fork",
    "NWayDiff",
    "NWayRow",
    "RegistaError",
    "ReplayDesk",
    "ReplayHandoff",
    "RunDiff",
    "Sweep",
    "SweepRow",
    "TraceError",
    "UserError",
    "align_many",
    "detect",
    "divergence_text",
    "follow",
    "load_sweep",
    "pair_verdict",
    "step_summary",
    "sweep_masks",
    "sweep_rows",
    "table_cells",
]


def __getattr__(name: str) -> Any:
    module = _FROM.get(name)
    if module is None:
        raise AttributeError(f"module 'regista.engine' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
