"""Canonical JSON and the request hash.

``request_hash`` is SHA-256 hex over JSON with sorted keys, no insignificant white space,
UTF-8 (not ASCII-escaped). orjson gives exactly that with ``OPT_SORT_KEYS`` and is ~10x
faster than the standard library on the large requests agents send.
"""

from __future__ import annotations

import hashlib
from typing import Any

import orjson

__all__ = ["canonical_json", "request_hash"]


def canonical_json(value: Any) -> bytes:
    """Sorted-key, compact, UTF-8 JSON bytes."""
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)


def request_hash(canonical_request: dict[str, Any]) -> str:
    """SHA-256 hex of the canonical JSON of a normalised request."""
    return hashlib.sha256(canonical_json(canonical_request)).hexdigest()
