"""Sequence alignment for run diffs: a minimal edit script over hashable keys.

:func:`align` is Myers' O((N+M)·D) difference algorithm (the one behind ``git diff``), after
stripping the common prefix and suffix: runs that differ in a few places cost little more
than one pass over them. It returns a *minimal* alignment (a longest common subsequence),
so an extra or missing item shifts nothing after it.

The exact search is bounded: at most ``max_cost`` edits, and fewer on long sequences (its
work grows with length × edits). Past that, the middle is aligned the *patience* way (as
``git diff --patience``): items that occur exactly once on each side anchor the alignment
(their longest increasing run), and each stretch between anchors is aligned again, exactly
when it is small enough. Stretches with no unique item stay unmatched. The result is still
sensible, no longer guaranteed minimal, and the time stays near-linear even for two long
runs that have little in common.

:func:`align_levels` aligns on progressively coarser keys: exact matches first, then, inside
each gap between them, items that agree on the next key (e.g. the same kind of step), so
that a changed item at the same place pairs up instead of showing as a deletion and an
insertion.
"""

from __future__ import annotations

import bisect
from collections.abc import Hashable, Sequence

__all__ = ["Alignment", "align", "align_levels"]

#: Aligned index pairs in order: ``(i, j)`` matched, ``(i, None)`` only in ``a``,
#: ``(None, j)`` only in ``b``.
Alignment = list[tuple[int | None, int | None]]

#: Above this many differences the exact search hands over to the patience alignment.
MAX_COST = 1000
#: Work budget of one exact search (about (N + M) × edits steps); longer sequences get a
#: proportionally lower edit limit.
WORK = 2_000_000
#: How deeply patience alignment may recurse into the stretches between its anchors.
MAX_DEPTH = 64


def align(a: Sequence[Hashable], b: Sequence[Hashable], *, max_cost: int = MAX_COST) -> Alignment:
    """Align two sequences so that as many equal items as possible are matched.

    Within each stretch between matches, the items only in ``a`` come before those only
    in ``b``.
    """
    return _expand(_matches(a, b, 0, len(a), 0, len(b), max_cost), len(a), len(b))


def align_levels(
    a: Sequence[Sequence[Hashable]],
    b: Sequence[Sequence[Hashable]],
    *,
    max_cost: int = MAX_COST,
) -> list[tuple[int | None, int | None, int]]:
    """Align items that carry one key per level, finest first.

    Items are matched on ``key[0]`` over the whole sequences; the unmatched stretches
    between two matches are then aligned on ``key[1]``, and so on.

    Returns:
        ``(i, j, level)`` in order; ``level`` is the key level a match was made on
        (``-1`` for an item only one side has).
    """
    levels = min((len(k) for k in [*a, *b]), default=0)
    out: list[tuple[int | None, int | None, int]] = []
    _align_level(a, b, 0, len(a), 0, len(b), 0, levels, max_cost, out)
    return out


def _align_level(
    a: Sequence[Sequence[Hashable]],
    b: Sequence[Sequence[Hashable]],
    a0: int,
    a1: int,
    b0: int,
    b1: int,
    level: int,
    levels: int,
    max_cost: int,
    out: list[tuple[int | None, int | None, int]],
) -> None:
    if level >= levels or a0 == a1 or b0 == b1:
        out.extend((i, None, -1) for i in range(a0, a1))
        out.extend((None, j, -1) for j in range(b0, b1))
        return
    ka = [a[i][level] for i in range(a0, a1)]
    kb = [b[j][level] for j in range(b0, b1)]
    i, j = a0, b0
    for mi, mj in _matches(ka, kb, 0, len(ka), 0, len(kb), max_cost):
        _align_level(a, b, i, a0 + mi, j, b0 + mj, level + 1, levels, max_cost, out)
        out.append((a0 + mi, b0 + mj, level))
        i, j = a0 + mi + 1, b0 + mj + 1
    _align_level(a, b, i, a1, j, b1, level + 1, levels, max_cost, out)


def _expand(matches: list[tuple[int, int]], n: int, m: int) -> Alignment:
    out: Alignment = []
    i = j = 0
    for mi, mj in [*matches, (n, m)]:
        out.extend((x, None) for x in range(i, mi))
        out.extend((None, y) for y in range(j, mj))
        if mi < n and mj < m:
            out.append((mi, mj))
        i, j = mi + 1, mj + 1
    return out


def _matches(
    a: Sequence[Hashable],
    b: Sequence[Hashable],
    a0: int,
    a1: int,
    b0: int,
    b1: int,
    max_cost: int,
    depth: int = 0,
) -> list[tuple[int, int]]:
    """Matched index pairs of a (near-)longest common subsequence of ``a[a0:a1]``,
    ``b[b0:b1]``."""
    head: list[tuple[int, int]] = []
    while a0 < a1 and b0 < b1 and a[a0] == b[b0]:
        head.append((a0, b0))
        a0 += 1
        b0 += 1
    tail: list[tuple[int, int]] = []
    while a0 < a1 and b0 < b1 and a[a1 - 1] == b[b1 - 1]:
        a1 -= 1
        b1 -= 1
        tail.append((a1, b1))
    tail.reverse()
    if a0 == a1 or b0 == b1:
        return head + tail
    limit = min(max_cost, WORK // (a1 - a0 + b1 - b0))
    middle = _myers(a, b, a0, a1, b0, b1, limit)
    if middle is None:
        middle = _patience(a, b, a0, a1, b0, b1, max_cost, depth)
    return head + middle + tail


def _patience(
    a: Sequence[Hashable],
    b: Sequence[Hashable],
    a0: int,
    a1: int,
    b0: int,
    b1: int,
    max_cost: int,
    depth: int,
) -> list[tuple[int, int]]:
    """Anchor on items unique to both sides, then align between the anchors."""
    if depth >= MAX_DEPTH:
        return []
    count_a: dict[Hashable, int] = {}
    for i in range(a0, a1):
        count_a[a[i]] = count_a.get(a[i], 0) + 1
    count_b: dict[Hashable, int] = {}
    where_b: dict[Hashable, int] = {}
    for j in range(b0, b1):
        count_b[b[j]] = count_b.get(b[j], 0) + 1
        where_b[b[j]] = j
    unique = [
        (i, where_b[a[i]]) for i in range(a0, a1) if count_a[a[i]] == 1 and count_b.get(a[i]) == 1
    ]
    out: list[tuple[int, int]] = []
    i0, j0 = a0, b0
    for i, j in _increasing(unique):
        out += _matches(a, b, i0, i, j0, j, max_cost, depth + 1)
        out.append((i, j))
        i0, j0 = i + 1, j + 1
    if out:
        out += _matches(a, b, i0, a1, j0, b1, max_cost, depth + 1)
    return out


def _increasing(pairs: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The longest run of ``pairs`` (sorted by their first item) whose second items increase."""
    tops: list[int] = []  # smallest last j of an increasing run of each length
    ends: list[int] = []  # index in pairs of that last element
    back: list[int] = []
    for n, (_, j) in enumerate(pairs):
        k = bisect.bisect_left(tops, j)
        back.append(ends[k - 1] if k > 0 else -1)
        if k == len(tops):
            tops.append(j)
            ends.append(n)
        else:
            tops[k] = j
            ends[k] = n
    out: list[tuple[int, int]] = []
    n = ends[-1] if ends else -1
    while n >= 0:
        out.append(pairs[n])
        n = back[n]
    out.reverse()
    return out


def _myers(
    a: Sequence[Hashable],
    b: Sequence[Hashable],
    a0: int,
    a1: int,
    b0: int,
    b1: int,
    max_cost: int,
) -> list[tuple[int, int]] | None:
    """Myers' greedy forward search; ``None`` when more than ``max_cost`` edits are needed.

    ``v[k]`` is the furthest ``x`` reached on diagonal ``k = x - y`` (offsets relative to
    ``a0``/``b0``); a snapshot of ``v`` per edit count lets the path be walked back.
    """
    n, m = a1 - a0, b1 - b0
    limit = min(n + m, max_cost)
    off = limit + 1
    v = [0] * (2 * limit + 3)
    history: list[list[int]] = []
    for d in range(limit + 1):
        for k in range(-d, d + 1, 2):
            if k == -d or (k != d and v[off + k - 1] < v[off + k + 1]):
                x = v[off + k + 1]
            else:
                x = v[off + k - 1] + 1
            y = x - k
            while x < n and y < m and a[a0 + x] == b[b0 + y]:
                x += 1
                y += 1
            v[off + k] = x
            if x >= n and y >= m:
                history.append(v[off - d : off + d + 1])
                return _walk_back(history, n, m, a0, b0)
        history.append(v[off - d : off + d + 1])
    return None


def _walk_back(history: list[list[int]], n: int, m: int, a0: int, b0: int) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    x, y = n, m
    for d in range(len(history) - 1, 0, -1):
        prev = history[d - 1]  # index k + (d - 1) holds diagonal k
        k = x - y
        if k == -d or (k != d and prev[k - 1 + d - 1] < prev[k + 1 + d - 1]):
            pk = k + 1
            px = prev[pk + d - 1]
            sx = px  # moved down: b[py] inserted
        else:
            pk = k - 1
            px = prev[pk + d - 1]
            sx = px + 1  # moved right: a[px] deleted
        while x > sx:
            x -= 1
            y -= 1
            out.append((a0 + x, b0 + y))
        x, y = px, px - pk
    while x > 0 and y > 0:
        x -= 1
        y -= 1
        out.append((a0 + x, b0 + y))
    out.reverse()
    return out
