"""Check a trace's requests against their ``request_hash``.

Each ``llm.request`` stores only what is new since the request before it; the full request
is rebuilt on read, and its hash must be the recorded ``request_hash``. A trace edited by
hand (or corrupted in a way that still parses) fails here, before a replay, fork, tape test
or export uses the rebuilt text. Compactions are checked the same way, their request
rebuilt from the replaced messages and the session's context configuration.

Hashing a long session naively would be quadratic (every request repeats its history).
The canonical JSON of a request is ``{"max_tokens":N,"messages":[m1,m2,…],"model":…}`` (keys
sorted), so the hash state after the messages so far is carried from one request to the
next and copied to finish each: every message is serialised and hashed once.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from regista.errors import RequestHashMismatch
from regista.redact import redact_bytes
from regista.trace.canonical import canonical_json, hashes_redacted, message_bytes, request_hash

if TYPE_CHECKING:
    from regista.trace.reader import Trace

__all__ = ["VerifyReport", "check_rebuilt", "is_imported", "verify_requests"]


@dataclass(frozen=True)
class VerifyReport:
    """What :func:`verify_requests` checked."""

    requests: int
    compactions: int


def is_imported(trace: Trace) -> bool:
    """A session converted from another tool's files: its request hashes are stand-ins."""
    return "imported_from" in (trace.start.metadata or {})


def _split(canonical: dict[str, Any], redact: bool) -> tuple[bytes, bytes]:
    """The canonical JSON of a request before and after its messages (secrets redacted, as
    ``request_hash`` does, unless ``redact`` is false)."""
    whole = canonical_json({**canonical, "messages": []})
    head, _, tail = whole.partition(b'"messages":[]')
    if redact:
        head, tail = redact_bytes(head), redact_bytes(tail)
    return head + b'"messages":[', b"]" + tail


def verify_requests(trace: Trace) -> VerifyReport:
    """Check every rebuilt request of ``trace`` against its ``request_hash``.

    Raises:
        RequestHashMismatch: The first request that does not match (names file and line).
    """
    from regista.trace.events import ContextCompaction, LlmRequestEvent

    path = trace.path or "<memory>"
    requests = compactions = 0
    state: Any = None
    state_head = b""
    state_redact = True
    hashed = 0  # messages of the previous request that ``state`` holds
    prev: list[dict[str, Any]] = []
    for ev in trace.events:
        if isinstance(ev, LlmRequestEvent):
            messages = prev[: ev.messages_prefix] + ev.messages
            canonical = {
                "model": ev.model,
                "system": ev.system,
                "messages": messages,
                "tools": ev.tools,
                "tool_choice": ev.tool_choice,
                "max_tokens": ev.max_tokens,
                "params": ev.params,
            }
            redact = hashes_redacted(ev)
            head, tail = _split(canonical, redact)
            if (
                state is None
                or head != state_head
                or redact != state_redact
                or ev.messages_prefix < hashed
            ):
                state, state_head, state_redact, hashed = hashlib.sha256(head), head, redact, 0
            for i in range(hashed, len(messages)):
                state.update((b"," if i else b"") + message_bytes(messages[i], redact=redact))
            hashed = len(messages)
            final = state.copy()
            final.update(tail)
            if final.hexdigest() != ev.request_hash and not _redacted_v1(canonical, ev):
                raise RequestHashMismatch(
                    path,
                    ev.seq + 1,
                    f"the request of step {ev.step} does not match its request_hash: "
                    "the trace was edited or is corrupt",
                )
            prev = messages
            requests += 1
        elif isinstance(ev, ContextCompaction):
            if _compaction_hash(trace, ev) != ev.request_hash:
                raise RequestHashMismatch(
                    path,
                    ev.seq + 1,
                    f"the compaction of step {ev.step} does not match its request_hash: "
                    "the trace was edited or is corrupt",
                )
            compactions += 1
    return VerifyReport(requests, compactions)


def _redacted_v1(canonical: dict[str, Any], ev: Any) -> bool:
    """A schema-1 request whose hash is already the redacted one (written by the first
    releases that redacted, before schema 2)."""
    return not hashes_redacted(ev) and request_hash(canonical) == ev.request_hash


def _compaction_hash(trace: Trace, ev: Any) -> str | None:
    from regista.context import ContextConfig, compaction_request

    cfg = ContextConfig.from_dict(trace.start.context) or ContextConfig()
    try:
        request = compaction_request(trace.start.model, ev.replaced, cfg)
    except (TypeError, ValueError):
        return None
    if hashes_redacted(ev) or request.hash == ev.request_hash:
        return request.hash
    return request_hash(request.canonical(), redact=False)


def check_rebuilt(trace: Trace) -> None:
    """Verify ``trace``'s requests before they are rebuilt for use (replay, fork, tape
    test, export); imported sessions, whose hashes are stand-ins, are let through.

    Raises:
        RequestHashMismatch: A request does not match its ``request_hash``.
    """
    if not is_imported(trace):
        verify_requests(trace)
