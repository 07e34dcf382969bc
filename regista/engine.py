"""The engine as the TUI sees it: the one module of regista's that ``regista_tui`` imports
beyond the public API (re-exports only; the engine never imports the TUI)."""

from __future__ import annotations

from regista.breakdown import BY, breakdown, subagent_of, tokens_and_cost
from regista.diff.masks import MASKED, pair_verdict
from regista.diff.nway import NWayDiff, NWayRow, align_many, divergence_text
from regista.diff.runs import AlignedPair, Divergence, RunDiff, step_summary
from regista.errors import RegistaError, TraceError, UserError
from regista.importers.detect import detect
from regista.importers.memory import LIVE_S, follow
from regista.loops import Repeat, RepeatFinder
from regista.server.handoff import REPLAY_KEY, ReplayDesk, ReplayHandoff
from regista.subagents import find_run, subagent_link
from regista.sweep import CANCEL_FILE, Fork, Sweep, SweepRow, load_sweep, sweep_rows
from regista.sweep.table import sweep_masks, table_cells
from regista.tokens import compact_count
from regista.vocab import KIND_COLOURS, KIND_MARKS, LABELS, cost_amount

__all__ = [
    "BY",
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
    "Repeat",
    "RepeatFinder",
    "ReplayDesk",
    "ReplayHandoff",
    "RunDiff",
    "Sweep",
    "SweepRow",
    "TraceError",
    "UserError",
    "align_many",
    "breakdown",
    "compact_count",
    "cost_amount",
    "detect",
    "divergence_text",
    "find_run",
    "follow",
    "load_sweep",
    "pair_verdict",
    "step_summary",
    "subagent_link",
    "subagent_of",
    "sweep_masks",
    "sweep_rows",
    "table_cells",
    "tokens_and_cost",
]
