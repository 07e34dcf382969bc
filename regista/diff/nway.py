"""A parent run and several forks of it, aligned in one table (an N-way diff).

Each fork is aligned with the parent by :func:`regista.diff.diff_runs` (step signatures,
Myers, then coarser keys, as the two-run diff). The rows are those alignments merged on the
parent's steps: a row per parent step, with each fork's step paired to it (or none: the
fork does not have it), and, before it, rows for the steps that forks have and the parent
does not (inserted at the same place in two forks, they share rows, in their order).

:func:`fork_divergence` says where a fork first *behaved* differently from its parent: the
edited steps are where it was made to differ, and a model step whose request changed only
because of what came before (the edited result is in it) but whose answer is the same is
not a divergence either, nor a pair that differs only in masked values (ids, timestamps:
:mod:`regista.diff.masks`). The first pair of steps other than those that differ is.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from regista.diff.runs import AlignedPair, Divergence, RunDiff, diff_runs
from regista.diff.structural import Change
from regista.vocab import LABELS, DiffKind

if TYPE_CHECKING:
    from regista.diff.masks import MaskSet

__all__ = ["NWayDiff", "NWayRow", "align_many", "divergence_text", "fork_divergence"]


def _real_changes(pair: AlignedPair, masks: MaskSet | None) -> list[Change]:
    """The pair's changes that ``masks`` do not explain."""
    if not masks:
        return pair.changes
    from regista.diff.masks import split_changes

    return split_changes(pair.changes, masks)[0]


def fork_divergence(
    diff: RunDiff,
    edited: set[int] | frozenset[int] = frozenset(),
    masks: MaskSet | None = None,
) -> Divergence | None:
    """Where the fork (run B of ``diff``) first behaved differently from its parent (run
    A), other than at its ``edited`` steps; ``None`` when it never did (see the module
    docs). ``masks``: a pair that differs only where they cover (its verdict ``masked``,
    as ``regista diff`` says) is no divergence either."""
    # a fork that has not ended (running, or cut short) has not reached the parent's
    # steps after its last one: those are not missing, only not there yet
    ended = diff.b.end is not None
    last = max((i for i, p in enumerate(diff.pairs) if p.b_step is not None), default=-1)
    for i in diff.differences:
        pair = diff.pairs[i]
        if not ended and i > last:
            break
        if pair.a_step is not None and pair.a_step == pair.b_step and pair.a_step in edited:
            continue
        if pair.a_step is not None and pair.b_step is not None:
            real = _real_changes(pair, masks)
            if not real:
                continue  # masked
            answered = any(c.path.startswith(("response", "error")) for c in real)
            if pair.kind == "changed_input" and pair.step_kind == "model" and not answered:
                continue  # the request holds what came before; the answer is the same
        return Divergence(i, pair)
    return None


def divergence_kind(div: Divergence) -> DiffKind:
    """The kind a divergence is told as: a model step whose request and answer both changed
    is a changed decision (its request changed because of the edit)."""
    if div.kind == "changed_input" and div.pair.step_kind == "model":
        return "changed_decision"
    return div.kind


def divergence_text(div: Divergence | None) -> str:
    """``step 2: changed · decision``, ``step 7 (parent only): delete`` or ``none``."""
    if div is None:
        return "none"
    label = LABELS[divergence_kind(div)]
    if div.kind == "insert":
        return f"step {div.b_step} (fork only): {label}"
    if div.kind == "delete":
        return f"step {div.a_step} (parent only): {label}"
    if div.a_step == div.b_step:
        return f"step {div.b_step}: {label}"
    return f"step {div.b_step} (parent {div.a_step}): {label}"


@dataclass
class NWayRow:
    """One row: the parent's step (``None``: a step only forks have) and, per fork, the
    aligned pair (``None``: this fork has nothing here)."""

    parent_step: int | None
    cells: list[AlignedPair | None]


@dataclass
class NWayDiff:
    """The parent and its forks aligned (see the module docs).

    Attributes:
        diffs: Each fork's diff with the parent (run A is the parent).
        rows: The merged rows.
        first: Per fork, the row of its first divergence (``None``: it never diverged).
    """

    diffs: list[RunDiff]
    rows: list[NWayRow] = field(default_factory=list)
    first: list[int | None] = field(default_factory=list)


def align_many(
    parent: str | Path,
    forks: Sequence[str | Path | None],
    edited: Sequence[set[int]] | None = None,
    masks: MaskSet | None = None,
) -> NWayDiff:
    """Align ``forks`` (a ``None``: a fork with no trace yet, an empty column) with
    ``parent``; ``edited``: each fork's edited steps and ``masks`` the masks (for its first
    divergence, see :func:`fork_divergence`)."""
    diffs: list[RunDiff | None] = [
        diff_runs(parent, f, settled=True) if f is not None else None for f in forks
    ]
    parent_steps = 0
    for d in diffs:
        if d is not None:
            parent_steps = max(
                parent_steps,
                1 + max((p.a_step for p in d.pairs if p.a_step is not None), default=-1),
            )
    k = len(forks)
    gaps: list[dict[int, list[AlignedPair]]] = [{} for _ in range(k)]
    at: list[dict[int, AlignedPair]] = [{} for _ in range(k)]
    place: dict[tuple[int, int], tuple[int, int]] = {}  # (fork, pair index) -> (gap, nth)
    for n, d in enumerate(diffs):
        if d is None:
            continue
        pending: list[tuple[int, AlignedPair]] = []
        for i, pair in enumerate(d.pairs):
            if pair.a_step is None:
                pending.append((i, pair))
                continue
            gaps[n][pair.a_step] = [p for _, p in pending]
            for nth, (j, _) in enumerate(pending):
                place[(n, j)] = (pair.a_step, nth)
            pending = []
            at[n][pair.a_step] = pair
            place[(n, i)] = (pair.a_step, -1)
        gaps[n][parent_steps] = [p for _, p in pending]
        for nth, (j, _) in enumerate(pending):
            place[(n, j)] = (parent_steps, nth)
    rows: list[NWayRow] = []
    where: dict[tuple[int, int], int] = {}  # (gap, nth or -1) -> row
    for g in range(parent_steps + 1):
        extra = max((len(gaps[n].get(g, [])) for n in range(k)), default=0)
        for r in range(extra):
            where[(g, r)] = len(rows)
            cells = [gaps[n][g][r] if r < len(gaps[n].get(g, [])) else None for n in range(k)]
            rows.append(NWayRow(None, cells))
        if g < parent_steps:
            where[(g, -1)] = len(rows)
            rows.append(NWayRow(g, [at[n].get(g) for n in range(k)]))
    out = NWayDiff([d for d in diffs if d is not None], rows)
    for n, d in enumerate(diffs):
        mine = set(edited[n]) if edited else set()
        div = None if d is None else fork_divergence(d, mine, masks)
        out.first.append(None if div is None else where[place[(n, div.index)]])
    return out
