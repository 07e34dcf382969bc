"""Closing a screen's trace once the screen is gone and no worker thread still reads it."""

from __future__ import annotations

import threading
from collections.abc import Callable

__all__ = ["Lease"]


class Lease:
    """Who still reads a resource that a screen owns: its worker threads.

    The screen calls :meth:`end` when it goes away; ``close`` runs then, or when the last
    reader lets go, whichever comes later, and exactly once. A thread that starts reading
    after the end is told no.
    """

    def __init__(self, close: Callable[[], object]) -> None:
        self._close = close
        self._lock = threading.Lock()
        self._readers = 0
        self._ended = False

    def hold(self) -> bool:
        """Start reading; ``False``: the screen is gone, do not read."""
        with self._lock:
            if self._ended:
                return False
            self._readers += 1
            return True

    def release(self) -> None:
        """Done reading (after a :meth:`hold` that said yes)."""
        with self._lock:
            self._readers -= 1
            close = self._ended and not self._readers
        if close:
            self._close()

    def end(self) -> None:
        """The screen is gone: close now, or when the last reader lets go."""
        with self._lock:
            if self._ended:
                return
            self._ended = True
            close = not self._readers
        if close:
            self._close()
