"""Ending recorded sessions on a long-running server.

The record proxy and live forks write one trace per agent session. A plain SDK agent never
says it is done, so a session ends (``session.end``) when no call has continued it for
``session_idle`` seconds — checked by :class:`SessionReaper` and on every recorded call —
and when the server stops (:func:`end_sessions`). A killed server leaves each open trace
readable and unfinished, losing at most the calls in flight: each call is written right
after its answer has been passed on.
"""

from __future__ import annotations

import threading

from regista.server.context import ServerContext

__all__ = ["SessionReaper", "end_sessions", "sweep_sessions"]


def sweep_sessions(ctx: ServerContext) -> None:
    """End the idle sessions of the record proxy and of live forks."""
    from regista.server.record import book
    from regista.server.replays import registry

    book(ctx).sweep()
    registry(ctx).sweep_sessions()


def end_sessions(ctx: ServerContext) -> None:
    """End every open session (the server is stopping)."""
    from regista.server.record import book
    from regista.server.replays import registry

    book(ctx).close()
    registry(ctx).close()


class SessionReaper:
    """A daemon thread that calls :func:`sweep_sessions` every ``interval`` seconds, and
    :func:`end_sessions` when stopped.

    Usage::

        with SessionReaper(ctx):
            serve(app)
    """

    def __init__(self, ctx: ServerContext, interval: float | None = None) -> None:
        self.ctx = ctx
        idle = ctx.session_idle
        self.interval = interval or (min(max(idle / 4, 0.05), 5.0) if idle else None)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="regista-reaper", daemon=True)

    def _run(self) -> None:
        assert self.interval is not None
        while not self._stop.wait(self.interval):
            sweep_sessions(self.ctx)

    def start(self) -> SessionReaper:
        if self.interval is not None:
            self._thread.start()
        return self

    def stop(self) -> None:
        """Stop sweeping and end every open session (safe to call twice)."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=10)
        end_sessions(self.ctx)

    def __enter__(self) -> SessionReaper:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
