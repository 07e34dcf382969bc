"""The import builder's shortcuts give what they stand for: the derived session id written
without the ``ulid`` package, the run's usage total summed from kept counts, a run encoded
in pieces as it is whole, and a JSON-lines block read in place."""

from __future__ import annotations

import random
from pathlib import Path

import orjson
from ulid import ULID

from regista.importers._builder import (
    ImportReport,
    RunBuilder,
    RunEncoder,
    _ulid_text,
    derived_session_id,
)
from regista.importers._common import JsonLinesFile, iter_json_lines
from regista.types import Usage


def test_ulid_text_is_ulids() -> None:
    rng = random.Random(27)
    cases = [bytes(16), b"\xff" * 16] + [rng.randbytes(16) for _ in range(2000)]
    for data in cases:
        assert _ulid_text(data) == str(ULID.from_bytes(data))
    sid = derived_session_id("7ee882f8-74b5-4438-abf3-b1589473670f", "2026-03-02T09:15:02.223Z")
    assert str(ULID.from_str(sid)) == sid


def _usage(rng: random.Random) -> dict[str, object]:
    usage: dict[str, object] = {
        "input_tokens": rng.choice([None, 0, rng.randint(0, 10**6)]),
        "output_tokens": rng.randint(0, 5000),
        "cache_creation_input_tokens": rng.choice([0, rng.randint(0, 10**5)]),
        "cache_read_input_tokens": rng.choice([None, rng.randint(0, 10**6)]),
    }
    if rng.random() < 0.5:
        usage["cache_creation"] = {
            "ephemeral_5m_input_tokens": rng.randint(0, 1000),
            "ephemeral_1h_input_tokens": rng.choice([0, rng.randint(0, 1000)]),
        }
    if rng.random() < 0.3:
        usage["reasoning_output_tokens"] = rng.randint(0, 900)
    if rng.random() < 0.2:
        usage["service_tier"] = "standard"
    return usage


def test_usage_total_is_the_sum_of_usages() -> None:
    """Seeded: the builder's total is ``Usage.__add__`` over its calls, whatever mix of
    split, reasoning and plain usages, and when the total was replaced in between."""
    for seed in range(200):
        rng = random.Random(seed)
        b = RunBuilder(
            "01J0000000000000000000000A",
            task="t",
            model="claude-opus-4-6",
            provider="anthropic",
            started="2026-03-02T09:15:02.223Z",
            metadata={},
        )
        expected = Usage()
        for step in range(rng.randint(1, 12)):
            raw = _usage(rng) if rng.random() < 0.9 else None
            response = {"id": f"m{step}", "content": [{"type": "text", "text": "ok"}]}
            if raw is not None:
                response["usage"] = raw
            b.model_step(
                model="claude-opus-4-6",
                response=response,
                request_ts=None,
                response_ts=None,
            )
            expected = expected + Usage.model_validate(raw or {})
            assert b.usage.model_dump() == expected.model_dump(), seed
            if rng.random() < 0.2:  # another writer of the total (as the OTLP importer)
                extra = Usage.model_validate(_usage(rng))
                b.usage = b.usage + extra
                expected = expected + extra


def test_encoder_pieces_are_the_whole() -> None:
    b = RunBuilder(
        "01J0000000000000000000000B",
        task="t",
        model="m",
        provider="anthropic",
        started="2026-03-02T09:15:02.223Z",
        metadata={},
    )
    for n in range(30):
        b.user_blocks([{"type": "text", "text": f"question {n} " * n}])
        b.model_step(
            model="m",
            response={"id": f"m{n}", "content": [{"type": "text", "text": f"answer {n}"}]},
            request_ts=None,
            response_ts=None,
        )
    events = b.finish()
    whole = RunEncoder(b.session_id).encode(events)
    enc = RunEncoder(b.session_id)
    pieces = b"".join(enc.encode(events[i : i + 7]) for i in range(0, len(events), 7))
    assert pieces == whole
    lines = whole.splitlines()
    assert len(lines) == len(events)
    assert [orjson.loads(line)["seq"] for line in lines] == list(range(len(events)))


def test_blocks_read_in_place(tmp_path: Path) -> None:
    """Seeded: a JSON-lines file read a block at a time (blocks far smaller than a line
    too) gives the lines and line numbers of reading it whole."""
    import regista.importers._common as common

    rng = random.Random(5)
    lines = []
    for n in range(300):
        kind = rng.random()
        if kind < 0.1:
            lines.append(b"")
        elif kind < 0.15:
            lines.append(b"not json")
        else:
            lines.append(b'{"n": %d, "pad": "%s"}' % (n, b"x" * rng.randint(0, 3000)))
    data = b"\n".join(lines) + b"\n"
    path = tmp_path / "t.jsonl"
    path.write_bytes(data)
    whole_report = ImportReport()
    whole = list(iter_json_lines(data, path, whole_report))
    for block in (7, 100, 4096, 1 << 20):
        old, common._BLOCK = common._BLOCK, block
        try:
            report = ImportReport()
            reader = JsonLinesFile(path, report)
            assert list(reader.read()) == whole, block
            assert report.bad_lines == whole_report.bad_lines
            assert reader.lineno == len(lines)
            assert reader.offset == len(data)
        finally:
            common._BLOCK = old
