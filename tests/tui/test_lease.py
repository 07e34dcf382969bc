"""``Lease``: a screen's trace is closed once, after the screen is gone and its threads let go."""

from __future__ import annotations

import threading
from typing import Any

from regista_tui.lease import Lease


def test_closed_at_the_end_when_nobody_reads() -> None:
    closed: list[int] = []
    lease = Lease(lambda: closed.append(1))
    assert lease.hold()
    lease.release()
    assert closed == []
    lease.end()
    lease.end()
    assert closed == [1]
    assert not lease.hold()  # a thread that starts after the end does not read


def test_closed_by_the_last_reader_after_the_end() -> None:
    closed: list[int] = []
    lease = Lease(lambda: closed.append(1))
    assert lease.hold() and lease.hold()
    lease.end()
    lease.release()
    assert closed == []
    lease.release()
    assert closed == [1]


def test_many_threads_close_it_exactly_once_and_never_while_read() -> None:
    for _ in range(50):
        state = {"open": True, "closes": 0, "bad": 0}

        def close(state: dict[str, object] = state) -> None:
            state["open"] = False
            state["closes"] = int(state["closes"]) + 1  # type: ignore[call-overload]

        lease = Lease(close)
        start = threading.Barrier(9)

        def read(
            lease: Lease = lease, state: dict[str, object] = state, start: Any = start
        ) -> None:
            start.wait()
            for _ in range(200):
                if not lease.hold():
                    return
                if not state["open"]:
                    state["bad"] = 1
                lease.release()

        threads = [threading.Thread(target=read) for _ in range(8)]
        for t in threads:
            t.start()
        start.wait()
        lease.end()
        for t in threads:
            t.join()
        assert state["closes"] == 1 and state["bad"] == 0
