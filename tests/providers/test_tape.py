"""The tape under every replay: digest matching, play counts, the mismatch check."""

from __future__ import annotations

import threading

from regista.providers.replay import RecordedCall
from regista.providers.tape import Tape, mismatch
from regista.types import LlmRequest, LlmResponse


def _req(text: str) -> LlmRequest:
    return LlmRequest(model="m", messages=[{"role": "user", "content": text}])


def _call(step: int, text: str) -> RecordedCall:
    req = _req(text)
    return RecordedCall(
        step=step,
        kind="model",
        request_hash=req.hash,
        response=LlmResponse(content=[{"type": "text", "text": f"answer {step}"}]),
        provider="scripted",
        build_request=lambda: req,
    )


def test_identical_requests_play_in_order_once_each() -> None:
    tape = Tape([_call(0, "a"), _call(2, "a"), _call(4, "b")])
    assert tape.take(_req("a").hash).step == 0  # type: ignore[union-attr]
    assert tape.take(_req("a").hash).step == 2  # type: ignore[union-attr]
    assert tape.take(_req("a").hash) is None
    assert tape.expected().step == 4  # type: ignore[union-attr]
    assert tape.plays == [1, 1, 0]


def test_in_order_only_takes_the_next_call() -> None:
    tape = Tape([_call(0, "a"), _call(2, "b")])
    assert tape.take(_req("b").hash, in_order=True) is None
    assert tape.take(_req("a").hash, in_order=True).step == 0  # type: ignore[union-attr]
    assert tape.take(_req("b").hash, in_order=True).step == 2  # type: ignore[union-attr]
    assert tape.next_index == 2


def test_concurrent_clients_each_get_their_own_recording() -> None:
    calls = [_call(i * 2, f"q{i}") for i in range(50)]
    tape = Tape(calls)
    got: dict[int, int] = {}
    lock = threading.Lock()

    def client(i: int) -> None:
        rec = tape.take(_req(f"q{i}").hash)
        assert rec is not None
        with lock:
            got[i] = rec.step

    threads = [threading.Thread(target=client, args=(i,)) for i in reversed(range(50))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert got == {i: i * 2 for i in range(50)}
    assert tape.expected() is None and tape.played == 50


def test_mismatch_names_the_nearest_recorded_request() -> None:
    expected, other = _call(0, "hello"), _call(2, "goodbye")
    m = mismatch(expected, _req("goodbye").canonical(), others=[other])
    assert m.changes and "request.messages[0].content" in m.detail
    assert m.nearest == [(2, 0)]
    assert "nearest recorded request: step 2 (0 differences)" in m.nearest_note
    # when the expected call is the nearest, nothing more is said
    assert mismatch(expected, _req("hellp").canonical(), others=[other]).nearest_note == ""
