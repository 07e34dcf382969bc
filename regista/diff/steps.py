"""How two steps compare: their signatures, their classification, their field-level changes.

The rules are described in :mod:`regista.diff`, which aligns whole runs with these.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any

from regista.diff.structural import Change, structural_diff
from regista.trace.canonical import canonical_json, hashes_redacted
from regista.trace.events import LlmRequestEvent
from regista.trace.steps import Step
from regista.types import LlmRequest
from regista.vocab import DiffKind, step_label

__all__ = [
    "DiffKind",
    "classify",
    "list_changes",
    "request_config",
    "signature",
    "step_changes",
    "step_summary",
]

#: A diff row's one-line description of a step (kept under its older name).
step_summary = step_label


# -- signatures ---------------------------------------------------------------------------


_ID_FIELD = {"tool_use": "id", "tool_result": "tool_use_id"}


def _rename_blocks(content: Any, ids: dict[str, str], rename: Callable[[str], str]) -> Any:
    """``content`` with the ids of its tool_use / tool_result blocks renamed.

    ``ids`` maps old ids to new ones and grows with ``rename(old)`` for unseen ids; only
    the blocks that change are copied.
    """
    if not isinstance(content, list):
        return content
    out: list[Any] | None = None
    for i, block in enumerate(content):
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        key = _ID_FIELD.get(kind) if isinstance(kind, str) else None
        old = block.get(key) if key is not None else None
        if key is None or not isinstance(old, str):
            continue
        new = ids.get(old)
        if new is None:
            new = ids[old] = rename(old)
        if new != old:
            if out is None:
                out = list(content)
            out[i] = {**block, key: new}
    return content if out is None else out


def _rename_messages(messages: Any, ids: dict[str, str], rename: Callable[[str], str]) -> Any:
    """``messages`` with the ids in their content blocks renamed (see ``_rename_blocks``)."""
    if not isinstance(messages, list):
        return messages
    out: list[Any] | None = None
    for i, message in enumerate(messages):
        if not isinstance(message, dict):
            continue
        content = message.get("content")
        new = _rename_blocks(content, ids, rename)
        if new is not content:
            if out is None:
                out = list(messages)
            out[i] = {**message, "content": new}
    return messages if out is None else out


def _ordinals(messages: Any) -> Any:
    """``messages`` with tool_use ids renamed ``#0``, ``#1``, … by order of appearance."""
    ids: dict[str, str] = {}
    return _rename_messages(messages, ids, lambda _: f"#{len(ids)}")


def _digest(tag: bytes, value: Any) -> bytes:
    return tag + hashlib.blake2b(canonical_json(value), digest_size=16).digest()


def signature(step: Step) -> tuple[bytes, tuple[str, ...]]:
    """(exact key, coarse key) of a step: the key it is aligned on, and the one its
    leftovers are paired on."""
    if step.kind == "model":
        req = step.request_event
        assert req is not None
        return _digest(b"m", _ordinals(req.messages)), ("model",)
    if step.kind == "tool":
        call = step.tool_call
        assert call is not None
        return _digest(b"t", [call.name, call.input]), ("tool", call.name)
    comp = step.compaction
    assert comp is not None
    return _digest(b"c", _ordinals(comp.replaced)), ("compaction",)


def _config(step: Step) -> dict[str, Any]:
    req = step.request_event
    assert req is not None
    return request_config(req)


def request_config(req: LlmRequestEvent | LlmRequest) -> dict[str, Any]:
    """What a model request (as written, or rebuilt) sets besides its messages (model,
    system, tools, …)."""
    return {
        "model": req.model,
        "system": req.system,
        "tools": req.tools,
        "tool_choice": req.tool_choice,
        "max_tokens": req.max_tokens,
        "params": req.params,
    }


def _errors(step: Step) -> list[dict[str, str]]:
    return [{"type": e.error_type, "message": e.message} for e in step.errors]


def _model_output(step: Step) -> dict[str, Any]:
    ev = step.response_event
    resp = ev.response if ev is not None else {}
    return {
        "content": resp.get("content"),
        "stop_reason": resp.get("stop_reason"),
        "stop_sequence": resp.get("stop_sequence"),
    }


def _tool_output(step: Step) -> dict[str, Any]:
    res, dec = step.result, step.decision
    out: dict[str, Any] = {
        "decision": {"allowed": dec.allowed, "reason": dec.reason} if dec else None,
        "result": {"content": res.content, "is_error": res.is_error} if res else None,
    }
    return out


def classify(a: Step, b: Step, key_a: bytes, key_b: bytes) -> DiffKind:
    """How two aligned steps differ, given their exact signature keys."""
    if a.kind == "model":
        if _config(a) != _config(b):
            return "changed_config"
        if key_a != key_b:
            return "changed_input"
        oa, ob = _model_output(a), _model_output(b)
        same = oa == ob or (
            {**oa, "content": None} == {**ob, "content": None}
            and _ordinals([oa]) == _ordinals([ob])
        )
        return "same" if same and _errors(a) == _errors(b) else "changed_decision"
    if key_a != key_b:
        return "changed_input"
    if a.kind == "tool":
        return "same" if _tool_output(a) == _tool_output(b) else "changed_decision"
    ca, cb = a.compaction, b.compaction
    assert ca is not None and cb is not None
    if _hashes_differ(ca, cb):
        return "changed_config"
    return "same" if ca.summary == cb.summary else "changed_decision"


def _hashes_differ(ca: Any, cb: Any) -> bool:
    """Whether two compactions' request hashes differ. A hash migrated from schema 1 is over
    the plain JSON and a schema-2 one over the redacted JSON: the two are not comparable,
    and their replaced histories are compared instead."""
    return hashes_redacted(ca) == hashes_redacted(cb) and ca.request_hash != cb.request_hash


# -- field-level changes ------------------------------------------------------------------


def _id_order(messages: Any) -> list[str]:
    ids: dict[str, str] = {}
    _rename_messages(messages, ids, lambda old: old)
    return list(ids)


def _renamer(a_messages: Any, b_messages: Any) -> Callable[[Any], Any]:
    """Renames B's tool_use ids to the A ids at the same order of appearance, so that ids
    made at run time do not show up as changes."""
    mapping = dict(zip(_id_order(b_messages), _id_order(a_messages), strict=False))

    def rename(messages: Any) -> Any:
        return _rename_messages(messages, dict(mapping), lambda old: old)

    return rename


def list_changes(old: list[Any], new: list[Any], path: str, offset: int) -> list[Change]:
    """Changes between two lists whose items stand at ``offset`` onwards under ``path``."""
    out: list[Change] = []
    for i in range(max(len(old), len(new))):
        sub = f"{path}[{offset + i}]"
        if i >= len(new):
            out.append(Change(sub, "removed", old=old[i]))
        elif i >= len(old):
            out.append(Change(sub, "added", new=new[i]))
        else:
            out.extend(structural_diff(old[i], new[i], sub))
    return out


def _model_changes(a: Step, b: Step) -> list[Change]:
    ra, rb = a.request_event, b.request_event
    assert ra is not None and rb is not None
    out = structural_diff(_config(a), _config(b), "request")
    rename = _renamer(ra.messages, rb.messages)
    if ra.messages_prefix == rb.messages_prefix:
        out += list_changes(
            ra.messages, rename(rb.messages), "request.messages", ra.messages_prefix
        )
    else:  # different histories: the new messages are compared on their own
        new = list_changes(ra.messages, rename(rb.messages), "request.new_messages", 0)
        if new:
            prefixes = (ra.messages_prefix, rb.messages_prefix)
            out += [Change("request.messages_prefix", "changed", *prefixes), *new]
    oa, ob = _model_output(a), _model_output(b)
    out += structural_diff(oa, _renamer([oa], [ob])([ob])[0], "response")
    out += structural_diff(_errors(a), _errors(b), "errors")
    return out


def _tool_changes(a: Step, b: Step) -> list[Change]:
    ca, cb = a.tool_call, b.tool_call
    assert ca is not None and cb is not None
    out = structural_diff(ca.name, cb.name, "tool.name")
    out += structural_diff(ca.input, cb.input, "tool.input")
    return out + structural_diff(_tool_output(a), _tool_output(b), "")


def _compaction_changes(a: Step, b: Step) -> list[Change]:
    ca, cb = a.compaction, b.compaction
    assert ca is not None and cb is not None
    rename = _renamer(ca.replaced, cb.replaced)
    out = list_changes(ca.replaced, rename(cb.replaced), "compaction.replaced", 0)
    if not out and _hashes_differ(ca, cb):
        out.append(Change("compaction.request_hash", "changed", ca.request_hash, cb.request_hash))
    return out + structural_diff(ca.summary, cb.summary, "compaction.summary")


def step_changes(a: Step, b: Step) -> list[Change]:
    """Field-level differences between two steps of the same kind (A old, B new)."""
    if a.kind == "model":
        return _model_changes(a, b)
    if a.kind == "tool":
        return _tool_changes(a, b)
    return _compaction_changes(a, b)
