"""Redacted message bytes are remembered by content: a fresh parse of the same history
(as a server digests on every call) hashes to the same value, secrets redacted."""

from __future__ import annotations

import hashlib

import orjson

from regista.redact import redact_bytes
from regista.trace.canonical import canonical_json, request_hash

KEY = "sk-ant-api03-" + "Ab3dE6gH9jK2mN5pQ8sT1vW4yZ7" * 2


def _plain_hash(request: dict[str, object]) -> str:
    return hashlib.sha256(redact_bytes(canonical_json(request))).hexdigest()


def test_a_fresh_parse_of_the_same_history_hashes_the_same() -> None:
    request = {
        "model": "m",
        "system": f"use {KEY} nowhere",
        "messages": [
            {"role": "user", "content": f"my key is {KEY}"},
            {"role": "assistant", "content": [{"type": "text", "text": "noted"}]},
        ],
        "tools": [],
    }
    raw = orjson.dumps(request)
    first = request_hash(orjson.loads(raw))
    second = request_hash(orjson.loads(raw))  # new objects: only the content cache can hit
    assert first == second == _plain_hash(request)
    assert KEY.encode() not in redact_bytes(canonical_json(request))
