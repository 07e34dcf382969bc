"""Canonical JSON and the request hash.

``request_hash`` is SHA-256 hex over JSON with sorted keys, no insignificant white space,
UTF-8 (not ASCII-escaped), with secret shapes replaced by their markers (``regista.redact``):
the hash is over what a trace holds, whether or not the trace was redacted. orjson gives
exactly that with ``OPT_SORT_KEYS`` and is ~10x faster than the standard library on the
large requests agents send.

A conversation's messages are the same objects from one request to the next, so each
message's redacted JSON is kept (by identity, for the last few thousand messages): hashing
a request redacts only what is new in it. The bytes hashed are exactly
``redact_bytes(canonical_json(request))``: no secret shape crosses from one JSON value into
the next, so redacting the parts is redacting the whole.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from typing import Any

import orjson

from regista.redact import redact_bytes

__all__ = ["canonical_json", "message_bytes", "request_hash"]

_CACHE_SIZE = 8192
_cache: OrderedDict[int, tuple[Any, bytes]] = OrderedDict()
_lock = threading.Lock()


def canonical_json(value: Any) -> bytes:
    """Sorted-key, compact, UTF-8 JSON bytes."""
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)


def message_bytes(message: Any) -> bytes:
    """The redacted canonical JSON of one message (remembered for the last few thousand)."""
    key = id(message)
    with _lock:
        hit = _cache.get(key)
        if hit is not None and hit[0] is message:
            _cache.move_to_end(key)
            return hit[1]
    data = redact_bytes(canonical_json(message))
    with _lock:
        _cache[key] = (message, data)  # the message is held, so its id is not reused
        if len(_cache) > _CACHE_SIZE:
            _cache.popitem(last=False)
    return data


def request_hash(canonical_request: dict[str, Any]) -> str:
    """SHA-256 hex of the canonical JSON of a normalised request, secrets redacted."""
    h = hashlib.sha256(b"{")
    for i, key in enumerate(sorted(canonical_request)):
        value = canonical_request[key]
        h.update((b"," if i else b"") + canonical_json(key) + b":")
        if key == "messages" and isinstance(value, list):
            h.update(b"[" + b",".join(message_bytes(m) for m in value) + b"]")
        else:
            h.update(redact_bytes(canonical_json(value)))
    h.update(b"}")
    return h.hexdigest()
