"""Pausing the garbage collector while a great many long-lived objects are built."""

from __future__ import annotations

import gc
import sys
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["paused_gc"]

#: The memory blocks allocated after the first paused block, after a block that by itself
#: doubled them, or after the last full collection made here: the measure of what lives
#: long (0: not measured yet).
_long_lived = 0
#: Fewer new blocks than this never start a full collection.
_FLOOR = 100_000
#: A block that made fewer objects than this (a small trace, one step) leaves them young,
#: where the collector's next young collection is cheap: counting what lives walks every
#: tracked object of the process, which in a long-lived one (a server, the debugger, a test
#: session) costs more than the small read itself.
_SMALL = 20_000


@contextmanager
def paused_gc() -> Iterator[None]:
    """No cyclic garbage collection inside the block (it resumes after, if it was on).

    Loading a trace builds hundreds of thousands of objects that live on and make no
    reference cycles; the collector would scan them again and again as they pile up,
    for nothing (it doubles the time to load a big trace).

    On the way out, what was made inside joins the oldest generation (``freeze`` then
    ``unfreeze`` moves every tracked object there without looking at it): left in the
    youngest, the first collection after the block would walk all of it at once, and the
    next generation's collection again.

    What is moved there is only collected by a full collection, which CPython starts by
    counting what *its* collections moved: it never counts these. So nothing that may be
    garbage is moved: the young generations are collected first (a few thousand objects
    at most), and a block that raised (a corrupt trace: a partial load and the frames of
    its error) leaves what it made young. Without this, a process that reads trace after
    trace (a server, the debugger, a test session) grew by 1.8 MB for each corrupt trace
    that the command line read 18 times in one process.

    A successful block may still have made cycles that become garbage later (an index and
    its steps): once the process holds twice the memory blocks it held after the first
    block (or the last full collection made here), a full collection runs. It runs as a
    block starts, and is decided on what the process held then: a collection when one ends
    would walk every object the block just made, for garbage that is not among them (a
    small trace read first, then one of 200 MB: the big read paid 1.1 s for a collection
    of its own events). A block that by itself made the process grow by as much as it held
    (the first, or a big read after small ones) becomes the measure: what it made lives,
    and the garbage left from before it is smaller than that. The blocks are counted by
    the allocator (``sys.getallocatedblocks``, microseconds): counting the tracked objects
    walks every one of them (``gc.get_freeze_count``: 0.13 s on a big trace, each block),
    and the collector's allocation counters also count the dictionaries it stops
    tracking. A process that reads one trace never pays for a full collection; one that
    reads trace after trace pays one each time its memory doubled: the price of not
    keeping its garbage. A small block (fewer than ``_SMALL`` new objects, from the
    allocation count) is neither frozen nor becomes a measure.
    """
    global _long_lived
    was_on = gc.isenabled()
    before = sys.getallocatedblocks()
    if was_on:
        if _long_lived and before - _long_lived >= max(_FLOOR, _long_lived):
            gc.collect()
            before = _long_lived = sys.getallocatedblocks()
        else:
            gc.collect(1)
    gc.disable()
    done = False
    try:
        yield
        done = True
    finally:
        if was_on:
            done = done and gc.get_count()[0] >= _SMALL  # net new objects since collect(1)
            if done:
                gc.freeze()
                gc.unfreeze()
            gc.enable()
            if done:
                lived = sys.getallocatedblocks()
                if not _long_lived or lived - before >= max(_FLOOR, _long_lived):
                    _long_lived = lived
