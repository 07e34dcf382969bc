"""Time as the agent loop sees it.

Timestamps (``ts``) and durations come from a clock; the default reads the system time,
and :class:`FakeClock` makes byte-identical traces for tests and the sample traces.
"""

from __future__ import annotations

import time
from typing import Protocol

from regista.trace.events import now_ts

__all__ = ["Clock", "FakeClock", "SystemClock"]


class Clock(Protocol):
    """Time as the loop sees it; a fake clock makes byte-identical traces."""

    def ts(self) -> str:
        """The timestamp of an event being written."""
        ...

    def perf(self) -> float:
        """A monotonic time in seconds, for durations."""
        ...


class SystemClock:
    def ts(self) -> str:
        return now_ts()

    def perf(self) -> float:
        return time.perf_counter()


class FakeClock:
    """Starts at ``start`` and advances ``tick_ms`` each time it is read."""

    def __init__(self, start: str = "2026-01-01T00:00:00", tick_ms: int = 250) -> None:
        from datetime import datetime

        self._t = datetime.fromisoformat(start).timestamp()
        self._tick = tick_ms / 1000

    def ts(self) -> str:
        from datetime import UTC, datetime

        self._t += self._tick
        d = datetime.fromtimestamp(self._t, UTC)
        return d.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"

    def perf(self) -> float:
        return self._t
