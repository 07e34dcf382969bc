"""Pausing the garbage collector while a great many long-lived objects are built."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["paused_gc"]

#: Objects that paused blocks moved into the oldest generation since the last full
#: collection made here. CPython starts a full collection when what *its* collections moved
#: there reaches a quarter of what lived there; it never counts what ``freeze`` and
#: ``unfreeze`` move. Without this count a long-lived process (a server, the debugger, a
#: test session) that reads trace after trace would never collect the garbage among them:
#: 1.8 MB more for each corrupt trace that the CLI read 18 times in one process.
_moved = 0
#: Tracked objects after the last full collection made here.
_long_lived = 0
#: Fewer moved objects than this never start a full collection: a process that reads a
#: few traces does not pay for one.
_FLOOR = 100_000


@contextmanager
def paused_gc() -> Iterator[None]:
    """No cyclic garbage collection inside the block (it resumes after, if it was on).

    Loading a trace builds hundreds of thousands of objects that live on and make no
    reference cycles; the collector would scan them again and again as they pile up,
    for nothing (it doubles the time to load a big trace).

    On the way out, what was made inside joins the oldest generation (``freeze`` then
    ``unfreeze`` moves every tracked object there without looking at it): left in the
    youngest, the first collection after the block would walk all of it at once, and the
    next generation's collection again. What joined it is counted, and once it is a
    quarter of what lived there (CPython's own rule, which cannot see these objects) a
    full collection runs, so the garbage among them is collected in the end.
    """
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            made = gc.get_count()[0]  # net tracked objects made since the last collection
            gc.freeze()
            gc.unfreeze()
            gc.enable()
            _collect_when_due(made)


def _collect_when_due(made: int) -> None:
    global _moved, _long_lived
    _moved += made
    if _moved < max(_FLOOR, _long_lived // 4):
        return
    gc.collect()
    _moved = 0
    _long_lived = len(gc.get_objects())
