"""Checks of the nested payloads of an event that its pydantic model leaves as plain JSON.

An event's own fields are validated by its model; the messages, content blocks, tool
schemas, responses and usage inside them are plain dicts and lists, read much later by
replay, diff, export and the debugger. :func:`check_event` checks their shape when a line
is loaded, so a corrupt value is a :class:`TraceFormatError` naming the file and line,
never a crash far from the file. The checks are hand-written and cheap (no models are
built): loading stays about as fast as decoding.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from regista.trace.names import (
    CONTEXT_COMPACTION,
    ERROR,
    LLM_REQUEST,
    LLM_RESPONSE,
    PERMISSION_DECISION,
    SESSION_END,
    SESSION_START,
    TOOL_CALL,
    TOOL_RESULT,
    USAGE_COUNTS,
)

__all__ = [
    "MAX_DEPTH",
    "NOTHING_NESTED",
    "block_problem",
    "check_event",
    "check_fields",
    "check_messages",
    "check_response",
    "deeper",
    "more_brackets",
    "too_deep",
]

#: How deeply values may nest inside one event (the event object is level 1). Deeper
#: values are refused when written and when read: every consumer (hashing, diff, export,
#: the debugger) handles this depth with room to spare.
MAX_DEPTH = 100

_NESTING = frozenset((dict, list))


def too_deep(raw: bytes, data: Any, limit: int = MAX_DEPTH) -> bool:
    """Whether ``data`` (decoded from ``raw``) nests deeper than ``limit`` levels.

    A line with fewer brackets than ``limit`` cannot be that deep, nor can an object none
    of whose values is an object or a list (a long tool output quoting JSON): only lines
    with many brackets are walked, a level at a time. A long line is walked without
    counting: the walk visits at most one value per bracket, and counting them reads
    every byte (most of them in strings).
    """
    if len(raw) > 2048:
        if type(data) is dict and _NESTING.isdisjoint(map(type, data.values())):
            return False
        if len(raw) > _COUNT_BELOW:
            return _deeper(data, limit)
    # more_brackets(raw, limit), in line: this runs for every line of a trace
    rest = raw.replace(b"[", b"", limit + 1)
    found = len(raw) - len(rest)
    if found <= limit and found + len(rest) - len(rest.replace(b"{", b"", limit + 1)) <= limit:
        return False
    return _deeper(data, limit)


def more_brackets(raw: bytes, limit: int) -> bool:
    """Whether ``raw`` holds more than ``limit`` opening brackets (``[`` and ``{``).

    They are counted by taking them out, stopping past the limit: ``bytes.replace`` finds
    each one with ``memchr``, several times faster than ``bytes.count`` (a byte at a time)
    on the usual line, whose brackets are few.
    """
    rest = raw.replace(b"[", b"", limit + 1)
    found = len(raw) - len(rest)
    if found > limit:
        return True
    return found + len(rest) - len(rest.replace(b"{", b"", limit + 1 - found)) > limit


#: Lines longer than this are walked rather than counted first (see :func:`too_deep`).
_COUNT_BELOW = 16 * 1024


def _deeper(data: Any, limit: int) -> bool:
    """Whether ``data`` (decoded JSON) nests deeper than ``limit`` levels."""
    return bool(deeper(data, limit))


def deeper(data: Any, limit: int) -> bool | None:
    """Whether ``data`` nests deeper than ``limit`` levels, walked a level at a time (no
    tuple per value, no depth kept per value); ``None`` when a value of another type than
    JSON's own is met (a subclass of dict or list, …), which serialised may nest more: a
    writer then asks its serialised form. Decoded JSON always gets an answer."""
    level = [data]
    depth = 1
    while level:
        if depth > limit:
            return True
        below: list[Any] = []
        keep = below.append
        for value in level:
            if type(value) is dict:
                value = value.values()
            elif type(value) is not list:
                if type(value) not in _PLAIN:
                    return None
                continue  # the top value only: below it, only objects and lists are kept
            for v in value:
                kind = type(v)
                if kind is dict or kind is list:
                    keep(v)
                elif kind not in _PLAIN:
                    return None
        level = below
        depth += 1
    return False


#: The types of JSON's scalars, as decoded.
_PLAIN = frozenset((str, int, float, bool, type(None)))


class _Bad(Exception):
    """A nested value has the wrong shape; the message names where."""


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _str(value: Any, where: str, *, optional: bool = False) -> None:
    if value is None and optional:
        return
    if not isinstance(value, str):
        raise _Bad(f"{where}: expected a string, found {_kind(value)}")


def _dict(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _Bad(f"{where}: expected an object, found {_kind(value)}")
    return value


def _list(value: Any, where: str) -> list[Any]:
    if not isinstance(value, list):
        raise _Bad(f"{where}: expected a list, found {_kind(value)}")
    return value


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def _block(block: Any, where: str, i: int) -> None:
    # ``where`` and ``i`` are joined only on failure: this runs for every block of a trace,
    # so each field's type is looked at first and the place named only when it is wrong.
    if type(block) is not dict:
        raise _Bad(f"{where}[{i}]: expected an object, found {_kind(block)}")
    kind = block.get("type")
    if kind == "text":
        if type(block.get("text")) is not str:
            _str(block.get("text"), f"{where}[{i}].text")
    elif kind == "tool_use":
        if (
            type(block.get("id")) is not str
            or type(block.get("name")) is not str
            or type(block.get("input", _NO_INPUT)) is not dict
        ):
            _str(block.get("id"), f"{where}[{i}].id")
            _str(block.get("name"), f"{where}[{i}].name")
            _dict(block.get("input", {}), f"{where}[{i}].input")
    elif kind == "tool_result":
        if type(block.get("tool_use_id")) is not str:
            _str(block.get("tool_use_id"), f"{where}[{i}].tool_use_id")
        content = block.get("content", "")
        if type(content) is not str:
            inner = f"{where}[{i}].content"
            for j, b in enumerate(_list(content, inner)):
                _block(b, inner, j)
        if block.get("is_error") not in (None, True, False):
            raise _Bad(f"{where}[{i}].is_error: expected true or false")
    elif kind == "thinking":
        if type(block.get("thinking")) is not str:
            _str(block.get("thinking"), f"{where}[{i}].thinking")
    elif kind == "redacted_thinking":
        if type(block.get("data")) is not str:
            _str(block.get("data"), f"{where}[{i}].data")
    elif not isinstance(kind, str):
        raise _Bad(f"{where}[{i}].type: expected a string, found {_kind(kind)}")


def block_problem(block: Any) -> str | None:
    """What is wrong with a content block as a trace's reader sees it (``None``: nothing).
    Importers keep only the blocks that pass, so what they write reads back."""
    try:
        _block(block, "block", 0)
    except _Bad as exc:
        return str(exc)
    return None


#: A tool_use block without ``input`` has an empty one.
_NO_INPUT: dict[str, Any] = {}


def _content(content: Any, where: str) -> None:
    if type(content) is str:
        return
    if type(content) is not list:
        raise _Bad(f"{where}: expected a string or a list, found {_kind(content)}")
    if not _plain_blocks(content):
        for i, block in enumerate(content):
            _block(block, where, i)


def check_messages(messages: Any, where: str = "messages") -> None:
    """Raise ``ValueError`` naming the place when ``messages`` is not a message list."""
    try:
        _messages(messages, where)
    except _Bad as exc:
        raise ValueError(str(exc)) from None


def _messages(messages: Any, where: str) -> None:
    for i, m in enumerate(_list(messages, where)):
        if type(m) is not dict:
            raise _Bad(f"{where}[{i}]: expected an object, found {_kind(m)}")
        # user and assistant, and whatever other role a provider accepted (Claude Code
        # sends ``system`` messages inside ``messages``): kept as sent
        role = m.get("role")
        if role != "user" and role != "assistant" and (type(role) is not str or not role):
            raise _Bad(f"{where}[{i}].role: expected a role (a string), found {_kind(role)}")
        content = m.get("content")
        if type(content) is list:
            if not _plain_blocks(content):
                inner = f"{where}[{i}].content"
                for j, block in enumerate(content):
                    _block(block, inner, j)
        elif type(content) is not str:
            _content(content, f"{where}[{i}].content")


def _plain_blocks(content: list[Any]) -> bool:
    """Whether every block of ``content`` is of a common kind and well formed: a quick
    yes for nearly every list of a trace. A no is looked at again block by block, which
    names what is wrong (or passes a rarer kind of block)."""
    for b in content:
        if type(b) is not dict:
            return False
        kind = b.get("type")
        if kind == "text":
            if type(b.get("text")) is not str:
                return False
        elif kind == "tool_use":
            if (
                type(b.get("id")) is not str
                or type(b.get("name")) is not str
                or type(b.get("input", _NO_INPUT)) is not dict
            ):
                return False
        elif kind == "tool_result":
            if (
                type(b.get("tool_use_id")) is not str
                or type(b.get("content", "")) is not str
                or b.get("is_error") not in (None, True, False)
            ):
                return False
        elif kind == "thinking":
            if type(b.get("thinking")) is not str:
                return False
        else:
            return False
    return True


def _usage(value: Any, where: str) -> None:
    usage = _dict(value, where)
    for key in USAGE_COUNTS:
        if key in usage and not _is_int(usage[key]):
            raise _Bad(f"{where}.{key}: expected a whole number, found {_kind(usage[key])}")


def check_response(payload: Any, where: str = "response") -> None:
    """Raise ``ValueError`` naming the place when ``payload`` is not a response."""
    try:
        _response(payload, where)
    except _Bad as exc:
        raise ValueError(str(exc)) from None


def _response(payload: Any, where: str) -> None:
    # Places are named only on failure: this runs for every answer of a trace, read or
    # written, so the usual answer is told good by a few type tests, in line.
    if type(payload) is not dict:
        _dict(payload, where)
    r: dict[str, Any] = payload
    get = r.get
    content = get("content", _NO_BLOCKS)
    if type(content) is not list:
        _list(content, f"{where}.content")
    if content and not _plain_blocks(content):
        inner = f"{where}.content"
        for i, block in enumerate(content):
            _block(block, inner, i)
    usage = get("usage", _NO_INPUT)
    if type(usage) is not dict:
        _usage(usage, f"{where}.usage")
    counts = usage.get
    if not (  # USAGE_COUNTS, in line
        type(counts("input_tokens", 0)) is int
        and type(counts("output_tokens", 0)) is int
        and type(counts("cache_creation_input_tokens", 0)) is int
        and type(counts("cache_read_input_tokens", 0)) is int
    ):
        _usage(usage, f"{where}.usage")
    ident, model, stop, sequence = get("id"), get("model"), get("stop_reason"), get("stop_sequence")
    if not (
        (ident is None or type(ident) is str)
        and (model is None or type(model) is str)
        and (stop is None or type(stop) is str)
        and (sequence is None or type(sequence) is str)
    ):
        for key in ("id", "model", "stop_reason", "stop_sequence"):
            value = get(key)
            if value is not None and type(value) is not str:
                _str(value, f"{where}.{key}")
    if get("role", "assistant") != "assistant":
        raise _Bad(f"{where}.role: expected 'assistant'")


#: A response without ``content`` has none.
_NO_BLOCKS: list[Any] = []


def _tools(tools: Any, where: str) -> None:
    for i, s in enumerate(_list(tools, where)):
        if type(s) is not dict:
            raise _Bad(f"{where}[{i}]: expected an object, found {_kind(s)}")
        if type(s.get("name")) is not str:
            _str(s.get("name"), f"{where}[{i}].name")
        description = s.get("description")
        if description is not None and type(description) is not str:
            _str(description, f"{where}[{i}].description")
        schema = s.get("input_schema")
        if schema is not None and type(schema) is not dict:
            _dict(schema, f"{where}[{i}].input_schema")


def _counts(value: Any, where: str, keys: tuple[str, ...]) -> None:
    d = _dict(value, where)
    for key in keys:
        if key in d and d[key] is not None and not _is_int(d[key]):
            raise _Bad(f"{where}.{key}: expected a whole number, found {_kind(d[key])}")


#: The kinds of events :func:`check_event` has nothing to look at in (their models check
#: every field they have): a reader need not call it for them.
NOTHING_NESTED = frozenset((TOOL_CALL, PERMISSION_DECISION, ERROR))


def _check(kind: Any, get: Any, messages: bool, tools: bool) -> None:
    """Check the nested payloads of an event of type ``kind`` whose fields ``get(name)``
    gives."""
    if kind == LLM_RESPONSE:
        _response(get("response"), "response")
    elif kind == LLM_REQUEST:
        if messages:
            _messages(get("messages"), "messages")
            if tools:
                _tools(get("tools"), "tools")
        prefix = get("messages_prefix")
        if _is_int(prefix) and prefix < 0:
            raise _Bad("messages_prefix: must not be negative")
        # ``tool_choice`` is any object (its model says so): each provider has its own
        # shapes, and one regista has no model for is kept as it was sent
    elif kind == TOOL_RESULT:
        content = get("content")
        if not isinstance(content, str):
            _content(content, "content")
    elif kind == CONTEXT_COMPACTION:
        if messages:
            _messages(get("replaced"), "replaced")
        _usage(get("usage"), "usage")
    elif kind == SESSION_START:
        _tools(get("tools"), "tools")
        context = get("context")
        if context is not None:
            _counts(context, "context", ("max_tokens", "keep_last"))
        forked_from = get("forked_from")
        if forked_from is not None:
            _counts(forked_from, "forked_from", ("at_step",))
    elif kind == SESSION_END:
        _usage(get("usage"), "usage")
        replay = get("replay")
        if replay is not None:
            _counts(replay, "replay", ("recorded", "edit", "live", "diverged_at", "rejected"))


def check_event(event: Any, *, messages: bool = True, tools: bool = True) -> str | None:
    """Why the nested payloads of a validated ``event`` are malformed, or ``None``
    (``messages=False``: the messages of requests and compactions are not looked at;
    ``tools=False``: nor the tool schemas of a request, checked with an earlier one)."""
    try:
        _check(event.type, partial(getattr, event), messages, tools)
    except _Bad as exc:
        return str(exc)
    except RecursionError:
        return "nested too deeply"
    return None


def check_fields(
    kind: str, fields: dict[str, Any], defaults: dict[str, Any], *, tools: bool = True
) -> str | None:
    """:func:`check_event` for an event about to be written: its ``fields`` (``defaults``
    for those not given). Every writer asks it, so what is written reads back: a shape the
    reader would refuse is refused when written, saying what and where. ``tools=False``:
    a request's tool schemas are the ones of a request checked before."""
    if kind in NOTHING_NESTED:
        return None
    try:  # the events written most, without the lookups of the general case
        if kind == LLM_RESPONSE and "response" in fields:
            _response(fields["response"], "response")
            return None
        if kind == TOOL_RESULT and type(fields.get("content")) is str:
            return None
        if kind == LLM_REQUEST and not tools and "messages" in fields:
            _messages(fields["messages"], "messages")
            prefix = fields.get("messages_prefix", 0)
            if _is_int(prefix) and prefix < 0:
                raise _Bad("messages_prefix: must not be negative")
            return None
    except _Bad as exc:
        return str(exc)
    except RecursionError:
        return "nested too deeply"

    def get(name: str) -> Any:
        if name in fields:
            return fields[name]
        if name in defaults:
            return defaults[name]
        raise _Missing  # the event's model says a required field is missing, when made

    try:
        _check(kind, get, True, tools)
    except _Bad as exc:
        return str(exc)
    except _Missing:
        return None
    except RecursionError:
        return "nested too deeply"
    return None


class _Missing(Exception):
    """A field with no default was not given."""
