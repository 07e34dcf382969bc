"""The engine as the debugger sees it: the one module ``regista_tui`` imports besides the
public API (``regista``). Re-exports only; the engine never imports the TUI.

The debugger reads traces, diffs runs, forks, sweeps and lists runs through the names here
and through nothing else of the engine's (``tests/core/test_engine_facade.py`` holds the
line, as harlequin's UI talks to its adapters through one interface): the engine's modules
can move and change inside, and only this table follows them. What the debugger needs next
from the engine is added here, never imported from the module that defines it. Every name is
imported on first use, so the debugger's cold start pays for the index and nothing else.

The debugger never sets the engine's state: a setting it makes is a call
(:func:`~regista.samples.demo_pace`).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

# Another tool's session (Claude Code, Codex, OTLP JSON) opens like a trace: the
# importers register their formats with the trace layer when imported (cheaply).
import regista.importers  # noqa: F401

if TYPE_CHECKING:
    from regista import samples
    from regista._gc import paused_gc
    from regista.breakdown import BY, breakdown, step_ms, subagent_of, tokens_and_cost
    from regista.cli._edits import fork_argv
    from regista.cli.sdk_child import fork_child
    from regista.defaults import DEFAULT_TRACE_DIR, trace_path
    from regista.diff import KINDS
    from regista.diff.masks import DIVERGED, MASKED, MaskSet, mask_set, pair_verdict, split_changes
    from regista.diff.nway import NWayDiff, NWayRow, align_many, divergence_text
    from regista.diff.runfile import RunFile
    from regista.diff.runs import (
        AlignedPair,
        Divergence,
        RunDiff,
        aligned_head,
        diff_files,
        step_summary,
    )
    from regista.diff.steps import list_changes, request_config
    from regista.diff.structural import Change, short_repr, structural_diff
    from regista.errors import RegistaError, TraceError, UserError
    from regista.fork import validate_model_edit
    from regista.importers.memory import RUNS
    from regista.loading import load_agent
    from regista.loops import Repeat, RepeatFinder
    from regista.pricing import add_costs
    from regista.samples import demo_pace
    from regista.savings import Savings
    from regista.server.handoff import REPLAY_KEY, ReplayDesk, ReplayHandoff
    from regista.store.recall import recall
    from regista.store.runs import (
        DEFAULT_DIR,
        IMPORTS_DIR,
        RunInfo,
        RunList,
        families_of,
        has_default_runs,
        list_runs,
    )
    from regista.subagents import find_run, subagent_link
    from regista.sweep import CANCEL_FILE, Fork, Sweep, SweepRow, load_sweep, sweep_rows
    from regista.sweep.table import sweep_masks, table_cells
    from regista.tokens import Tokens, compact_count, tokens_of
    from regista.trace.events import (
        ContextCompaction,
        ErrorEvent,
        LlmResponseEvent,
        SessionEnd,
        SessionStart,
        ToolResult,
    )
    from regista.trace.formats import OpenedRun, is_pipe, memory_file
    from regista.trace.index import StepEntry, StepList, TraceIndex
    from regista.trace.steps import Step
    from regista.trace.validate import too_deep
    from regista.vocab import (
        KIND_COLOURS,
        KIND_MARKS,
        LABELS,
        OUTCOME_COLOURS,
        cost_amount,
        cost_text,
        end_outcome,
        outcome_text,
        run_outcome,
        step_line,
    )

__all__ = [
    "BY",
    "CANCEL_FILE",
    "DEFAULT_DIR",
    "DEFAULT_TRACE_DIR",
    "DIVERGED",
    "IMPORTS_DIR",
    "KINDS",
    "KIND_COLOURS",
    "KIND_MARKS",
    "LABELS",
    "MASKED",
    "OUTCOME_COLOURS",
    "REPLAY_KEY",
    "RUNS",
    "AlignedPair",
    "Change",
    "ContextCompaction",
    "Divergence",
    "ErrorEvent",
    "Fork",
    "LlmResponseEvent",
    "MaskSet",
    "NWayDiff",
    "NWayRow",
    "OpenedRun",
    "RegistaError",
    "Repeat",
    "RepeatFinder",
    "ReplayDesk",
    "ReplayHandoff",
    "RunDiff",
    "RunFile",
    "RunInfo",
    "RunList",
    "Savings",
    "SessionEnd",
    "SessionStart",
    "Step",
    "StepEntry",
    "StepList",
    "Sweep",
    "SweepRow",
    "Tokens",
    "ToolResult",
    "TraceError",
    "TraceIndex",
    "UserError",
    "add_costs",
    "align_many",
    "aligned_head",
    "breakdown",
    "compact_count",
    "cost_amount",
    "cost_text",
    "demo_pace",
    "diff_files",
    "divergence_text",
    "end_outcome",
    "families_of",
    "find_run",
    "fork_argv",
    "fork_child",
    "has_default_runs",
    "is_pipe",
    "list_changes",
    "list_runs",
    "load_agent",
    "load_sweep",
    "mask_set",
    "memory_file",
    "outcome_text",
    "pair_verdict",
    "paused_gc",
    "recall",
    "request_config",
    "run_outcome",
    "samples",
    "short_repr",
    "split_changes",
    "step_line",
    "step_ms",
    "step_summary",
    "structural_diff",
    "subagent_link",
    "subagent_of",
    "sweep_masks",
    "sweep_rows",
    "table_cells",
    "tokens_and_cost",
    "tokens_of",
    "too_deep",
    "trace_path",
    "validate_model_edit",
]

#: Name -> the module that defines it, imported on first use.
_LAZY = {
    "samples": "regista",
    "paused_gc": "regista._gc",
    "BY": "regista.breakdown",
    "breakdown": "regista.breakdown",
    "subagent_of": "regista.breakdown",
    "step_ms": "regista.breakdown",
    "tokens_and_cost": "regista.breakdown",
    "fork_argv": "regista.cli._edits",
    "fork_child": "regista.cli.sdk_child",
    "DEFAULT_TRACE_DIR": "regista.defaults",
    "trace_path": "regista.defaults",
    "KINDS": "regista.diff",
    "DIVERGED": "regista.diff.masks",
    "MASKED": "regista.diff.masks",
    "MaskSet": "regista.diff.masks",
    "mask_set": "regista.diff.masks",
    "pair_verdict": "regista.diff.masks",
    "split_changes": "regista.diff.masks",
    "NWayDiff": "regista.diff.nway",
    "NWayRow": "regista.diff.nway",
    "align_many": "regista.diff.nway",
    "divergence_text": "regista.diff.nway",
    "RunFile": "regista.diff.runfile",
    "AlignedPair": "regista.diff.runs",
    "Divergence": "regista.diff.runs",
    "RunDiff": "regista.diff.runs",
    "aligned_head": "regista.diff.runs",
    "diff_files": "regista.diff.runs",
    "step_summary": "regista.diff.runs",
    "list_changes": "regista.diff.steps",
    "request_config": "regista.diff.steps",
    "Change": "regista.diff.structural",
    "short_repr": "regista.diff.structural",
    "structural_diff": "regista.diff.structural",
    "RegistaError": "regista.errors",
    "TraceError": "regista.errors",
    "UserError": "regista.errors",
    "validate_model_edit": "regista.fork",
    "RUNS": "regista.importers.memory",
    "load_agent": "regista.loading",
    "Repeat": "regista.loops",
    "RepeatFinder": "regista.loops",
    "add_costs": "regista.pricing",
    "demo_pace": "regista.samples",
    "Savings": "regista.savings",
    "REPLAY_KEY": "regista.server.handoff",
    "ReplayDesk": "regista.server.handoff",
    "ReplayHandoff": "regista.server.handoff",
    "recall": "regista.store.recall",
    "DEFAULT_DIR": "regista.store.runs",
    "IMPORTS_DIR": "regista.store.runs",
    "RunInfo": "regista.store.runs",
    "RunList": "regista.store.runs",
    "families_of": "regista.store.runs",
    "has_default_runs": "regista.store.runs",
    "list_runs": "regista.store.runs",
    "find_run": "regista.subagents",
    "subagent_link": "regista.subagents",
    "CANCEL_FILE": "regista.sweep",
    "Fork": "regista.sweep",
    "Sweep": "regista.sweep",
    "SweepRow": "regista.sweep",
    "load_sweep": "regista.sweep",
    "sweep_rows": "regista.sweep",
    "sweep_masks": "regista.sweep.table",
    "table_cells": "regista.sweep.table",
    "Tokens": "regista.tokens",
    "compact_count": "regista.tokens",
    "tokens_of": "regista.tokens",
    "ContextCompaction": "regista.trace.events",
    "ErrorEvent": "regista.trace.events",
    "LlmResponseEvent": "regista.trace.events",
    "SessionEnd": "regista.trace.events",
    "SessionStart": "regista.trace.events",
    "ToolResult": "regista.trace.events",
    "OpenedRun": "regista.trace.formats",
    "is_pipe": "regista.trace.formats",
    "memory_file": "regista.trace.formats",
    "StepEntry": "regista.trace.index",
    "StepList": "regista.trace.index",
    "TraceIndex": "regista.trace.index",
    "Step": "regista.trace.steps",
    "too_deep": "regista.trace.validate",
    "KIND_COLOURS": "regista.vocab",
    "KIND_MARKS": "regista.vocab",
    "LABELS": "regista.vocab",
    "OUTCOME_COLOURS": "regista.vocab",
    "cost_amount": "regista.vocab",
    "cost_text": "regista.vocab",
    "end_outcome": "regista.vocab",
    "outcome_text": "regista.vocab",
    "run_outcome": "regista.vocab",
    "step_line": "regista.vocab",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'regista.engine' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
