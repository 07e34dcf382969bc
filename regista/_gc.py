"""Pausing the garbage collector while a great many long-lived objects are built."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["paused_gc"]


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
    """
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.freeze()
            gc.unfreeze()
            gc.enable()
