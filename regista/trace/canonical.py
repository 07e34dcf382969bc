"""Canonical JSON and the request hash.

``request_hash`` is SHA-256 hex over JSON with sorted keys, no insignificant white space,
UTF-8 (not ASCII-escaped), with secret shapes replaced by their markers (``regista.redact``):
the hash is over what a trace holds, whether or not the trace was redacted. Traces of
schema version 1 hashed the canonical JSON as it was, secrets included: their events carry
``request_hash_form: "plain"`` once migrated (:func:`hashes_redacted` tells), and every
function here takes ``redact=False`` for them. orjson gives
exactly that with ``OPT_SORT_KEYS`` and is ~10x faster than the standard library on the
large requests agents send.

A conversation's messages are the same objects from one request to the next, so each
message's redacted JSON is kept (by identity, for the last few thousand messages): hashing
a request redacts only what is new in it. The bytes hashed are exactly
``redact_bytes(canonical_json(request))``: no secret shape crosses from one JSON value into
the next, so redacting the parts is redacting the whole.

A session's requests grow: each one is the previous one's messages and a few more.
:class:`PrefixHasher` gives the same hashes as :func:`request_hash` while hashing only the
new messages of each request, so a session's hashing is linear in its length instead of
quadratic.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from operator import is_
from typing import Any

import orjson

from regista.redact import redact_bytes

__all__ = [
    "PrefixHasher",
    "canonical_json",
    "hashes_redacted",
    "message_bytes",
    "request_hash",
    "same_json",
]

_CACHE_SIZE = 8192
_cache: OrderedDict[int, tuple[Any, bytes]] = OrderedDict()
_lock = threading.Lock()
# Redacted bytes by their canonical bytes: a server digests a fresh parse of the same
# history on every call, where identity never hits. Bounded by bytes, not entries.
_CONTENT_BUDGET = 32 << 20
_by_content: OrderedDict[bytes, bytes] = OrderedDict()
_content_size = [0]


def canonical_json(value: Any) -> bytes:
    """Sorted-key, compact, UTF-8 JSON bytes."""
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)


def hashes_redacted(event: Any) -> bool:
    """Whether ``event``'s ``request_hash`` is over the redacted canonical JSON (every
    version-2 event) or over the plain one (events migrated from version 1)."""
    extra = getattr(event, "model_extra", None) or {}
    return extra.get("request_hash_form") != "plain"


def message_bytes(message: Any, *, redact: bool = True) -> bytes:
    """The redacted canonical JSON of one message (remembered for the last few thousand);
    with ``redact=False``, the plain canonical JSON."""
    if not redact:
        return canonical_json(message)
    key = id(message)
    with _lock:
        hit = _cache.get(key)
        if hit is not None and hit[0] is message:
            _cache.move_to_end(key)
            return hit[1]
    data = _redacted(canonical_json(message))
    with _lock:
        _cache[key] = (message, data)  # the message is held, so its id is not reused
        if len(_cache) > _CACHE_SIZE:
            _cache.popitem(last=False)
    return data


def _redacted(canon: bytes) -> bytes:
    """``redact_bytes(canon)``, remembered by content for recently seen values."""
    with _lock:
        hit = _by_content.get(canon)
        if hit is not None:
            _by_content.move_to_end(canon)
            return hit
    data = redact_bytes(canon)
    if len(canon) > _CONTENT_BUDGET // 8:
        return data
    if data == canon:
        data = canon  # share the bytes: most values hold no secret
    with _lock:
        if canon not in _by_content:
            _by_content[canon] = data
            _content_size[0] += len(canon) + (0 if data is canon else len(data))
        while _content_size[0] > _CONTENT_BUDGET and _by_content:
            old, red = _by_content.popitem(last=False)
            _content_size[0] -= len(old) + (0 if red is old else len(red))
    return data


def request_hash(canonical_request: dict[str, Any], *, redact: bool = True) -> str:
    """SHA-256 hex of the canonical JSON of a normalised request, secrets redacted (not
    with ``redact=False``: the hash of schema-1 traces)."""
    scrub = _redacted if redact else _same
    h = hashlib.sha256(b"{")
    for i, key in enumerate(sorted(canonical_request)):
        value = canonical_request[key]
        h.update((b"," if i else b"") + canonical_json(key) + b":")
        if key == "messages" and isinstance(value, list):
            h.update(b"[" + b",".join(message_bytes(m, redact=redact) for m in value) + b"]")
        else:
            h.update(scrub(canonical_json(value)))
    h.update(b"}")
    return h.hexdigest()


class PrefixHasher:
    """:func:`request_hash` for a growing conversation, incremental over its messages.

    The canonical JSON of a request is ``{<keys before "messages">,"messages":[m0,m1,…],
    <keys after>}``. The hasher keeps the SHA-256 state after the messages of the last
    request it hashed; a request whose messages start with those messages (the same
    objects, or equal as JSON) continues from that state. Anything else (another head,
    a history rewritten by a compaction) is hashed from the start, and becomes the state.

    What was hashed (messages, system prompt, tools, …) must not be changed in place
    afterwards: it is recognised by identity first (the agent loop builds new lists and
    never changes a sent request).
    """

    def __init__(self, *, redact: bool = True) -> None:
        self._redact = redact
        self._head = b""
        self._messages: list[Any] = []
        self._state: Any = None
        self._last_tail: tuple[list[str], list[Any], bytes, list[bytes]] | None = None
        #: The messages list last compared as JSON, and its canonical JSON.
        self._json: tuple[list[Any], bytes] | None = None

    def __call__(self, canonical_request: dict[str, Any]) -> str:
        """The :func:`request_hash` of ``canonical_request``."""
        messages = canonical_request.get("messages")
        if not isinstance(messages, list):
            return request_hash(canonical_request, redact=self._redact)
        keys = sorted(canonical_request)
        before = [k for k in keys if k < "messages"]
        after = [k for k in keys if k > "messages"]
        head = b"{" + b"".join(
            _member(canonical_request, k, i, self._redact) for i, k in enumerate(before)
        )
        head += b',"messages":[' if before else b'"messages":['
        known = self._messages
        n = len(known)
        if (
            self._state is not None
            and head == self._head
            and len(messages) >= n
            and self._same_prefix(messages, known)
        ):
            state = self._state.copy()
            start = n
        else:
            state = hashlib.sha256(head)
            start = 0
        for i in range(start, len(messages)):
            if i:
                state.update(b",")
            state.update(message_bytes(messages[i], redact=self._redact))
        self._head, self._messages, self._state = head, list(messages), state
        made = self._json
        # the JSON made of these messages is that of the next request's known ones
        self._json = (self._messages, made[1]) if made and made[0] is messages else None
        final = state.copy()
        final.update(self._tail(canonical_request, after))
        return str(final.hexdigest())

    def _same_prefix(self, messages: list[Any], known: list[Any]) -> bool:
        """Whether ``messages`` starts with ``known``, equal as JSON: the same objects (the
        agent loop), or a fresh parse of the same history (a server), told by their
        canonical JSON: that of ``messages`` starts with that of ``known`` up to a value's
        end (made once per request: it is the next request's ``known``)."""
        if all(map(is_, messages, known)):  # the same objects (C speed: O(history))
            return True
        try:
            mine = canonical_json(messages)
            if self._json is not None and self._json[0] is known:
                theirs = self._json[1]
            else:
                theirs = canonical_json(known)
        except TypeError:  # not JSON: compare value by value
            return all(same_json(a, b) for a, b in zip(messages, known, strict=False))
        self._json = (messages, mine)
        end = len(theirs) - 1  # before its "]"
        return mine[:end] == theirs[:end] and mine[end : end + 1] in (b",", b"]")

    def _tail(self, request: dict[str, Any], keys: list[str]) -> bytes:
        """``],<keys after "messages">}``; kept while they stay the same (system, tools…):
        the same objects, or values of the same canonical JSON (a server parses each
        request afresh: comparing the bytes is many times faster than value by value)."""
        values = [request[k] for k in keys]
        last = self._last_tail
        if last is not None and last[0] == keys:
            # a value that is the same object has the same JSON: the agent loop passes the
            # same system prompt and tools, and a new ``params`` dict, on every call
            canon = [
                made if v is was else canonical_json(v)
                for v, was, made in zip(values, last[1], last[3], strict=True)
            ]
            if canon == last[3]:
                self._last_tail = (keys, values, last[2], canon)
                return last[2]
        else:
            canon = [canonical_json(v) for v in values]
        scrub = redact_bytes if self._redact else _same
        tail = b"]" + b"".join(
            b"," + canonical_json(k) + b":" + scrub(c) for k, c in zip(keys, canon, strict=True)
        )
        self._last_tail = (keys, values, tail + b"}", canon)
        return tail + b"}"


def _member(request: dict[str, Any], key: str, i: int, redact: bool) -> bytes:
    """``"key":value`` as :func:`request_hash` hashes it (``i``: its position)."""
    value = canonical_json(request[key])
    return (
        (b"," if i else b"")
        + canonical_json(key)
        + b":"
        + (redact_bytes(value) if redact else value)
    )


def _same(data: bytes) -> bytes:
    return data


def same_json(a: Any, b: Any) -> bool:
    """Equal as JSON (``True == 1`` and ``1 == 1.0`` in Python, but not in canonical JSON)."""
    if a is b:
        return True
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same_json(v, b[k]) for k, v in a.items())
    if isinstance(a, list):
        return len(a) == len(b) and all(same_json(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)
