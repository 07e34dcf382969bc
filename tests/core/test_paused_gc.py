"""``paused_gc``: the garbage around paused blocks is collected, in a process that reads
trace after trace (a server, the debugger, a test run)."""

from __future__ import annotations

import gc
import weakref

import pytest
from fresh import fresh_python

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


def test_cycles_made_in_blocks_that_succeeded_are_collected_in_the_end() -> None:
    """An index and its steps: a cycle made inside a block that succeeded, dropped later,
    is collected once the process holds twice the objects it held after its first block;
    a process that reads one trace never pays for a full collection."""
    out = fresh_python(
        """
import gc, weakref
from regista._gc import paused_gc

class Node:
    def __init__(self):
        self.me = self

full = []
gc.callbacks.append(lambda phase, info: phase == "start" and info["generation"] == 2
                    and full.append(1))
kept = []
with paused_gc():  # the first read: a big trace (lists: objects the collector tracks)
    kept.append([[i] for i in range(300_000)])
first = len(full)
cycles = []
for _ in range(12):  # trace after trace, each the size of the first
    with paused_gc():
        kept.append([[i] for i in range(300_000)])
        node = Node()
        cycles.append(weakref.ref(node))
    del node
alive = sum(ref() is not None for ref in cycles)
print(first, len(full), alive)
"""
    )
    first, full, alive = map(int, out.split())
    assert first == 0, "the first read paid for a full collection"
    assert 1 <= full <= 5, (
        f"{full} full collections for 12 reads (one each time the objects doubled)"
    )
    # the cycles dropped before the last full collection are gone; those after it wait for
    # the objects to double again (garbage kept is at most what lives)
    assert alive <= 8, f"{alive} of 12 cycles never collected"


def test_a_small_block_does_not_count_the_whole_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """Counting what lives walks every tracked object of the process: in a long-lived one
    (MCP, the server, the debugger) a step's or a small trace's read paid that twice. A
    block that made few objects leaves them young, without freezing or counting."""
    import types

    import regista._gc as module

    calls: list[str] = []

    def spy(name: str) -> object:
        real = getattr(gc, name)

        def call(*args: object) -> object:
            calls.append(name)
            return real(*args)

        return call

    fake = types.SimpleNamespace(
        **{n: getattr(gc, n) for n in ("isenabled", "collect", "disable", "enable", "get_count")},
        freeze=spy("freeze"),
        unfreeze=spy("unfreeze"),
        get_freeze_count=spy("get_freeze_count"),
    )
    monkeypatch.setattr(module, "gc", fake)
    with paused_gc():
        small = [[i] for i in range(100)]
    assert calls == [] and len(small) == 100
    with paused_gc():
        big = [[i] for i in range(module._SMALL * 2)]
    # a big one joins the oldest generation; what lives is measured by the allocator's
    # count of blocks, never by walking every tracked object
    assert calls == ["freeze", "unfreeze"] and len(big) == module._SMALL * 2


def test_a_big_read_after_a_small_one_collects_none_of_its_objects() -> None:
    """A small trace read first (its block imports the readers: tens of thousands of
    objects, the first measure), then a big one: the big block alone doubles the process,
    and a full collection when it ended walked every object it made (1.1 s on 200 MB) for
    garbage that was not among them. The big block becomes the measure instead; nor does
    the next block (a step's read) collect them."""
    out = fresh_python(
        """
import gc
from pathlib import Path
import regista
from regista._gc import paused_gc
from regista.trace.index import read_summary

full = []
gc.callbacks.append(lambda phase, info: phase == "start" and info["generation"] == 2
                    and full.append(1))
samples = Path(regista.__file__).parent.parent / "sample_traces"
read_summary(samples / "refund_happy.jsonl")  # small: its block imports what reads
small = len(full)
kept = []
with paused_gc():  # the big read: lists, objects the collector tracks
    kept.append([[i] for i in range(1_000_000)])
big = len(full)
with paused_gc():  # the next read, a step's: big enough to be frozen
    kept.append([[i] for i in range(30_000)])
read_summary(samples / "refund_search_loop.jsonl")
print(small, big - small, len(full) - big)
"""
    )
    small, big, after = map(int, out.split())
    assert (small, big, after) == (0, 0, 0), (
        f"full collections: {small} in the small read, {big} in the big one, {after} after"
    )
