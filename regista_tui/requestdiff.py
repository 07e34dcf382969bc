"""The structural diff of a model request against the previous one, from a lazy index.

Only the messages after the part both requests share are rebuilt, so the diff of step
19,999 of a long run does not decode the whole run.
"""

from __future__ import annotations

from regista.engine import Change, TraceIndex, list_changes, request_config, structural_diff

__all__ = ["request_diff"]


def request_diff(index: TraceIndex, pos: int) -> list[Change] | None:
    """Changes from the previous model request to the request of step ``pos``.

    Returns:
        ``None`` when ``pos`` is the first model call (nothing to compare with).
    """
    cur = index.request_event(pos)
    prev_pos = index.previous_request(pos)
    if cur is None or prev_pos is None:
        return None
    prev = index.request_event(prev_pos)
    if prev is None:
        return None
    changes = structural_diff(request_config(prev), request_config(cur), "request")
    prev_len = prev.messages_prefix + len(prev.messages)
    start = min(cur.messages_prefix, prev_len)
    old = index.request_messages(prev_pos, start)
    new = index.request_messages(pos, start)
    return changes + list_changes(old, new, "request.messages", start)
