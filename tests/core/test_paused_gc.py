"""``paused_gc``: the garbage around paused blocks is collected, in a process that reads
trace after trace (a server, the debugger, a test run)."""

from __future__ import annotations

import gc
import weakref

import pytest

from regista._gc import paused_gc


class _Node:
    """An object in a reference cycle: only the cyclic collector can free it."""

    def __init__(self) -> None:
        self.me = self


def test_garbage_around_paused_blocks_is_collected() -> None:
    """Cycles dropped between loads, and by loads that fail (a corrupt trace), are not
    moved into the oldest generation, whose collection CPython never starts for objects
    moved there: the long fuzz run grew by 1.8 MB a corrupt trace."""
    assert gc.isenabled()
    cycles = []
    for _ in range(60):
        node = _Node()  # garbage made between two loads
        cycles.append(weakref.ref(node))
        del node
        with paused_gc():
            trace = [{"n": i} for i in range(100)]  # what a load returns
        with pytest.raises(ValueError), paused_gc():
            node = _Node()  # what a load that fails leaves behind
            cycles.append(weakref.ref(node))
            del node
            raise ValueError("corrupt")
        del trace
    alive = sum(ref() is not None for ref in cycles)
    assert alive <= 2, f"{alive} of {len(cycles)} cycles never collected"


def test_a_paused_block_leaves_the_collector_as_it_found_it() -> None:
    with paused_gc():
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(KeyError), paused_gc():
        raise KeyError
    assert gc.isenabled()
    gc.disable()
    try:
        with paused_gc():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_cycles_made_in_blocks_that_succeeded_are_collected_in_the_end(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An index and its steps: a cycle made inside a block that succeeded, dropped later,
    is collected once the blocks moved as many objects as lived there (few here)."""
    from regista import _gc

    monkeypatch.setattr(_gc, "_FLOOR", 1000, raising=False)
    monkeypatch.setattr(_gc, "_long_lived", 1000, raising=False)
    monkeypatch.setattr(_gc, "_moved", 0, raising=False)
    cycles = []
    for _ in range(30):
        with paused_gc():
            trace = [{"n": i} for i in range(200)]
            node = _Node()
            cycles.append(weakref.ref(node))
        del node, trace
    alive = sum(ref() is not None for ref in cycles)
    assert alive <= 25, f"{alive} of {len(cycles)} cycles never collected"
