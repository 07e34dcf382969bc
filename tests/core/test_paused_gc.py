"""``paused_gc``: the cyclic garbage made while the collector was paused is collected in
the end, in a process that reads trace after trace (a server, the debugger, a test run)."""

from __future__ import annotations

import gc
import weakref

import pytest

from regista import _gc
from regista._gc import paused_gc


class _Node:
    """An object in a reference cycle: only the cyclic collector can free it."""

    def __init__(self) -> None:
        self.me = self


def test_garbage_made_in_paused_blocks_is_collected_in_the_end(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each block builds objects as a trace load does, and drops a cycle. The blocks move
    what they built into the oldest generation, whose collection CPython alone never
    starts for objects moved there: 1.8 MB a corrupt trace piled up in the long fuzz run."""
    assert gc.isenabled()
    # a full collection is due after 20 blocks (fewer to run than with the real floor)
    monkeypatch.setattr(_gc, "_FLOOR", 20_000, raising=False)
    monkeypatch.setattr(_gc, "_moved", 0, raising=False)
    monkeypatch.setattr(_gc, "_long_lived", 0, raising=False)
    cycles = []
    for _ in range(60):
        with paused_gc():
            trace = [{"n": i} for i in range(1000)]  # what a load returns; freed later
            node = _Node()
            cycles.append(weakref.ref(node))
            del node
        del trace
    alive = sum(ref() is not None for ref in cycles)
    assert alive <= 40, f"{alive} of {len(cycles)} cycles never collected"


def test_a_paused_block_leaves_the_collector_as_it_found_it() -> None:
    with paused_gc():
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    try:
        with paused_gc():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()
