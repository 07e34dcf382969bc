"""The OTLP receiver never rewrites a file it did not write: spans that carry a recorded
run's id become a run of their own, linked to it."""

from __future__ import annotations

import shutil
from pathlib import Path

import httpx2
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

from regista.server import BackgroundServer, create_app
from regista.trace.reader import Trace

from .test_otlp import SAMPLES, _spans, assert_same_run

PROTO = {"content-type": "application/x-protobuf"}


def test_spans_for_a_recorded_run_do_not_replace_it(tmp_path: Path) -> None:
    store = tmp_path / "store"
    store.mkdir()
    recorded = store / "refund_happy.jsonl"
    shutil.copy(SAMPLES / "refund_happy.jsonl", recorded)
    trace = Trace.load(recorded)
    target = store / f"{trace.session_id}.jsonl"
    shutil.copy(recorded, target)  # the run as the store lists it, under its session id
    before = target.read_bytes()
    data = encode_spans(_spans(trace)).SerializeToString()
    with BackgroundServer(create_app(store)) as server, httpx2.Client(base_url=server.url) as c:
        for _ in range(2):  # sent twice: still one copy, and the recording intact
            assert c.post("/v1/traces", content=data, headers=PROTO).status_code == 200
            listed = c.get("/v1/runs").json()["runs"]
    assert target.read_bytes() == before
    copies = [p for p in store.glob("*.jsonl") if p not in (recorded, target)]
    assert len(copies) == 1
    back = Trace.load(copies[0])
    assert back.session_id != trace.session_id
    imported = back.start.metadata["imported_from"]
    assert imported["received_for"] == trace.session_id
    assert len(back.steps()) == len(trace.steps())
    assert {r["id"] for r in listed} >= {trace.session_id, back.session_id}


def test_the_receivers_own_runs_are_still_rewritten(tmp_path: Path) -> None:
    """A later batch of a trace the receiver wrote replaces that run (after a restart too)."""
    store = tmp_path / "store"
    trace = Trace.load(SAMPLES / "refund_happy.jsonl")
    data = encode_spans(_spans(trace)).SerializeToString()
    for _ in range(2):  # two servers: the second did not write the file in its lifetime
        with BackgroundServer(create_app(store)) as server, httpx2.Client(base_url=server.url) as c:
            assert c.post("/v1/traces", content=data, headers=PROTO).status_code == 200
    assert [p.name for p in store.glob("*.jsonl")] == [f"{trace.session_id}.jsonl"]
    assert_same_run(trace, Trace.load(store / f"{trace.session_id}.jsonl"))
