"""Decoding the lines of a trace: one line (:func:`parse_line`), a list of them
(:func:`parse_lines`), a file read a piece at a time (:func:`parse_file`), or a trace file
by its path (:func:`read_events`).

Each line is decoded, version-checked, migrated, completed (compact requests) and
validated; a corrupt line is a :class:`TraceFormatError` naming file and line, except a
half-written last one, which is dropped with a :class:`TraceWarning`. The event models
(pydantic) are imported when the first line is validated: a listing of clean lines (see
:mod:`regista.trace.listing`) never needs them.
"""

from __future__ import annotations

import operator
import warnings
from bisect import bisect
from collections.abc import Callable
from itertools import product, repeat
from operator import add, getitem
from pathlib import Path
from typing import Any, cast

import orjson

from regista._gc import paused_gc
from regista.errors import (
    NoSuchPathError,
    RegistaError,
    TraceError,
    TraceFormatError,
    TraceWarning,
    UnsupportedSchemaVersion,
    torn_only_line,
)
from regista.trace.compact import RESOLVED, RequestDecoder, Resolver, TraceRefError, put_back
from regista.trace.formats import (
    HEAD_BYTES,
    claiming,
    compressed_error,
    device_error,
    is_regista_trace,
)
from regista.trace.listing import (
    FIELDS,
    built,
    listed,
    modelled,
    modelled_all,
    records,
)
from regista.trace.migrations import migrate
from regista.trace.names import (
    CONTEXT_COMPACTION,
    ERROR,
    LLM_REQUEST,
    LLM_RESPONSE,
    PERMISSION_DECISION,
    SCHEMA_VERSION,
    SESSION_START,
    TOOL_CALL,
    TOOL_RESULT,
)
from regista.trace.validate import (
    MAX_DEPTH,
    NOTHING_NESTED,
    check_event,
    check_messages,
    check_response,
    too_deep,
)

__all__ = [
    "CHUNK",
    "checked_events",
    "not_a_trace_file",
    "parse_file",
    "parse_line",
    "parse_lines",
    "read_events",
]


def parse_line(
    raw: bytes,
    path: Path,
    lineno: int,
    decoder: Resolver | None = None,
    *,
    messages: bool = True,
    light: bool = False,
) -> Any:
    """Decode, version-check, migrate and validate one trace line.

    Args:
        raw: The line, without its newline.
        path: The trace (for messages).
        lineno: The 1-based line number (for messages).
        decoder: Completes compact ``llm.request`` lines from the lines before; give the
            same decoder every line of a trace in order. Without one, a compact request
            is returned as written (no ``system``/``tools``, referred results left out).
        messages: ``False``: an ``llm.request`` is read without its messages, system
            prompt and tools, and a ``context.compaction`` with empty placeholders for the
            messages it replaced (their number kept): neither is checked nor rebuilt.
            For listings of steps, which show neither (``regista show``); such a request
            line is not even decoded past its other fields (see :func:`_request_head`).
        light: With ``messages=False``: a line that validation would leave as it is, is
            given as a :class:`~regista.trace.listing.Listed` view rather than a model
            (see :func:`~regista.trace.listing.listed`).
    """
    if not messages and raw.find(_B_REQUEST_TYPE, 0, 256) >= 0:
        event = _listed_request(raw, path, lineno, light)
        if event is not None:
            return event
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        if "depth limit" in str(exc) or "recursion" in str(exc):
            reason = f"a value nested more than {MAX_DEPTH} levels deep"
            raise TraceFormatError(path, lineno, reason) from None
        raise TraceFormatError(path, lineno, f"not valid JSON ({exc})") from None
    if type(data) is not dict:
        raise TraceFormatError(path, lineno, "an event must be a JSON object")
    return _parsed(raw, data, path, lineno, decoder, messages, light)


def _parsed(
    raw: bytes,
    data: dict[str, Any],
    path: Path,
    lineno: int,
    decoder: Resolver | None,
    messages: bool = True,
    light: bool = False,
) -> Any:
    """:func:`parse_line` of ``raw``, once decoded as ``data`` (a dict)."""
    kind = data.get("type")
    if not messages and kind in _MESSAGES_OF_NAMES:
        return _without_messages(data, path, lineno, light)
    if too_deep(raw, data):
        raise TraceFormatError(path, lineno, f"a value nested more than {MAX_DEPTH} levels deep")
    version = data.get("schema_version")
    if version != SCHEMA_VERSION:
        if not isinstance(version, int) or version < 1:
            raise TraceFormatError(path, lineno, "missing or invalid schema_version")
        if version > SCHEMA_VERSION:
            raise UnsupportedSchemaVersion(path, version, SCHEMA_VERSION)
        data = migrate(data)
    tools: Any = None  # the validated tool schemas this request shares with an earlier one
    if decoder is not None and kind in RESOLVED:
        try:
            decoder.resolve(data)
        except TraceRefError as exc:
            raise TraceFormatError(path, lineno, f"invalid 'llm.request' event: {exc}") from None
        if kind == LLM_REQUEST and isinstance(decoder, RequestDecoder):
            tools = decoder.validated_tools(data.get("tools"))
            if tools is not None:
                del data["tools"]  # validated and checked with the line that wrote them
    # _event_of and _check_step, in line: this runs for every line of a trace
    event = listed(data) if light else modelled(data)
    if event is None:
        event = _validated(data, path, lineno)
    step = getattr(event, "step", None)
    if type(step) is int and step < 0:
        _check_step(event, path, lineno)
    if tools is not None:
        event.__dict__["tools"] = tools
        event.__pydantic_fields_set__.add("tools")
    # A tool result whose content is text (most events of a trace) has nothing nested.
    if kind not in NOTHING_NESTED and (kind != TOOL_RESULT or type(event.content) is not str):
        problem = check_event(event, tools=tools is None)
        if problem is not None:
            raise TraceFormatError(path, lineno, f"invalid {event.type!r} event: {problem}")
        if tools is None and kind == LLM_REQUEST and isinstance(decoder, RequestDecoder):
            decoder.checked(data["tools"], event.tools)
    return event


def _check_step(event: Any, path: Path, lineno: int) -> None:
    """Refuse a step number below 0 (steps are numbered from 0; every reader refuses it,
    the debugger's index in these words too)."""
    step = getattr(event, "step", None)
    if type(step) is int and step < 0:
        raise TraceFormatError(path, lineno, f"invalid {event.type!r} event: {NEGATIVE_STEP}")


#: What is said of a step number below 0.
NEGATIVE_STEP = "step: must not be negative"


def _modelled_piece(
    lines: list[bytes],
    path: Path,
    lineno: int,
    decoder: RequestDecoder,
    sessions: set[Any] | None = None,
) -> list[Any]:
    """The events of the first of ``lines`` (a piece of a file, lines ``lineno + 1`` on)
    that :func:`_model_lines` reads, a few lines at a time (their objects are still in
    the processor's cache when they are checked and built), up to the first few it does
    not read: those and the rest are read a line at a time."""
    events: list[Any] = []
    for start in range(0, len(lines), _FEW):
        got = _model_lines(lines[start : start + _FEW], path, lineno + start, decoder, sessions)
        if got is None:
            break
        events += got
    return events


#: How many lines :func:`_modelled_piece` gives :func:`_model_lines` at once.
_FEW = 128


def _model_lines(
    lines: list[bytes],
    path: Path,
    lineno: int,
    decoder: RequestDecoder,
    sessions: set[Any] | None = None,
) -> list[Any] | None:
    """The events of ``lines`` (lines ``lineno + 1`` on, none of them a file's last) as
    :func:`parse_line` reads them one at a time with ``decoder``, or ``None``, with
    ``decoder`` untouched: read them one at a time, which says what is wrong and where.

    The lines of the kinds written most but requests (:data:`_AT_ONCE`) are checked and
    built into their models a kind at a time, a field at a time (:func:`_at_once`); then
    the requests (:func:`_compact_request`), the lines of other kinds and those of a kind
    not read at once are read in order as :func:`parse_line` reads them, the tool results
    the requests refer to given to ``decoder`` between them as they come. Every line not
    read so is one it reads to the same model without error, so an error is the one it
    raises, at the line it raises it. ``tests/trace/test_decode_pieces.py`` keeps this
    equal to the reading one line at a time.
    """
    try:
        datas = list(map(orjson.loads, lines))
    except orjson.JSONDecodeError:
        return None
    if set(map(type, datas)) != {dict}:
        return None
    # In order (a line's seq is checked as it is read): any line out of order is left to
    # be said at its place.
    if list(map(dict.get, datas, repeat("seq"))) != list(range(lineno, lineno + len(lines))):
        return None
    kinds = list(map(dict.get, datas, repeat("type")))
    where: dict[Any, list[int]] = {}
    try:
        for i, kind in enumerate(kinds):
            at = where.get(kind)
            if at is None:
                where[kind] = [i]
            else:
                at.append(i)
    except TypeError:  # a type that is not hashable
        return None
    made: dict[Any, Any] = {}
    for kind, at in where.items():
        if kind in _AT_ONCE:
            events = _at_once(kind, [lines[i] for i in at], list(map(datas.__getitem__, at)))
            if events is not None:
                made[kind] = events
    # The rest in order, each request after the results before it (which it may refer to)
    found = made.get(TOOL_RESULT, [])
    results = where[TOOL_RESULT] if found else []
    ids, contents = list(map(_tool_use_id, found)), list(map(_content, found))
    noted = 0  # how many of them the decoder has
    read: dict[Any, list[Any]] = {}
    for i in sorted(i for kind, at in where.items() if kind not in made for i in at):
        upto = bisect(results, i, noted)
        if upto > noted:
            decoder.noted(ids[noted:upto], contents[noted:upto])
            noted = upto
        kind = kinds[i]
        event = None
        if kind == LLM_REQUEST:
            event = _compact_request(lines[i], datas[i], path, lineno + i + 1, decoder)
        if event is None:
            event = _parsed(lines[i], datas[i], path, lineno + i + 1, decoder)
        at_kind = read.get(kind)
        if at_kind is None:
            read[kind] = [event]
        else:
            at_kind.append(event)
    if len(results) > noted:
        decoder.noted(ids[noted:], contents[noted:])
    made.update(read)
    if sessions is not None:  # (a line's, as its event's: validation keeps a str as it is)
        sessions.update(map(dict.get, datas, repeat("session_id")))
    return list(map(next, map({k: iter(v) for k, v in made.items()}.__getitem__, kinds)))


def _at_once(kind: str, lines: list[bytes], group: list[dict[str, Any]]) -> list[Any] | None:
    """The models of ``lines`` (of event ``kind``, one of :data:`_AT_ONCE`; decoded as
    ``group``) when :func:`parse_line` reads each of them to the model
    :func:`~regista.trace.listing.modelled` builds, without error; else ``None``: read
    them one at a time."""
    events = modelled_all(kind, group)
    if events is None or not _current_and_stepped(kind, group):
        return None
    # as too_deep says: a line none of whose values is an object or a list (a decision, an
    # error, a result whose content is text: their types were checked) is one level deep
    if kind in _DEEP_KINDS:
        for raw, data in zip(lines, group, strict=True):
            if too_deep(raw, data):
                return None
    if kind == LLM_RESPONSE:
        try:
            for response in map(_response_of, group):
                check_response(response)
        except (ValueError, RecursionError):
            return None
    elif kind == TOOL_RESULT:
        for raw, data, event in zip(lines, group, events, strict=True):
            if type(event.content) is not str and (
                too_deep(raw, data) or check_event(event) is not None
            ):
                return None
    return events


def _compact_request(
    raw: bytes, data: dict[str, Any], path: Path, lineno: int, decoder: RequestDecoder
) -> Any:
    """The model :func:`parse_line` makes of a compact request (``raw``, decoded as
    ``data``) laid out as the writer lays it, in fewer steps; or ``None``, with ``data``
    and ``decoder`` untouched: read it so.

    Its fields are checked as :func:`~regista.trace.listing.modelled` checks them, and
    what it takes from the lines before it is asked for (:meth:`RequestDecoder.taken`:
    the system prompt, the tools, validated with the line that wrote them, and the
    results it refers to); only then are the results put back into its messages, whose
    check (as :func:`check_event`'s) is the only one that may then fail, in the words
    :func:`parse_line` says it.
    """
    keys = tuple(data)
    if keys == _COMPACT_REQUEST:
        refs = None
    elif keys == _COMPACT_REQUEST_REFS:
        refs = data["result_refs"]
    else:
        return None
    values = tuple(data.values())  # (its keys are in the order above)
    if tuple(map(type, values)) not in _COMPACT_TYPES:
        return None
    (
        version,
        sid,
        seq,
        ts,
        kind,
        step,
        turn,
        digest,
        model,
        choice,
        limit,
        params,
        prefix,
        messages,
    ) = values[:14]
    if version != SCHEMA_VERSION or step < 0 or prefix < 0 or too_deep(raw, data):
        return None
    for message in messages:
        if type(message) is not dict:
            return None
    taken = decoder.taken(refs)
    if taken is None:
        return None
    system, tools, contents = taken
    if system is not None and type(system) is not str:
        return None
    if contents:
        put_back(messages, contents)
    try:
        check_messages(messages)
    except ValueError as exc:
        raise TraceFormatError(path, lineno, f"invalid {LLM_REQUEST!r} event: {exc}") from None
    except RecursionError:
        raise TraceFormatError(
            path, lineno, f"invalid {LLM_REQUEST!r} event: nested too deeply"
        ) from None
    return built(  # the model's fields, in its order
        LLM_REQUEST,
        {
            "schema_version": version,
            "session_id": sid,
            "seq": seq,
            "ts": ts,
            "type": kind,
            "step": step,
            "turn": turn,
            "request_hash": digest,
            "model": model,
            "system": system,
            "tools": tools,
            "tool_choice": choice,
            "max_tokens": limit,
            "params": params,
            "messages_prefix": prefix,
            "messages": messages,
        },
    )


#: The kinds :func:`_model_lines` reads a kind at a time (the lines written most but
#: requests, which are completed one at a time from the lines before them).
_AT_ONCE = frozenset((LLM_RESPONSE, TOOL_CALL, PERMISSION_DECISION, TOOL_RESULT, ERROR))
#: The kinds among them whose lines always hold an object (their depth is checked).
_DEEP_KINDS = frozenset((LLM_RESPONSE, TOOL_CALL))
#: A request's fields, in its model's order.
_REQUEST_FIELDS = tuple(f[0] for f in FIELDS[LLM_REQUEST])
#: The keys of a compact request as the writer lays it out: no system prompt, no tools.
_COMPACT_REQUEST = tuple(f for f in _REQUEST_FIELDS if f not in ("system", "tools"))
_COMPACT_REQUEST_REFS = (*_COMPACT_REQUEST, "result_refs")
#: The types of a compact request's values that its model takes as they are (and its
#: ``result_refs``, a list).
_COMPACT_TYPES = frozenset(
    types
    for plain in product(*(f[1] for f in FIELDS[LLM_REQUEST] if f[0] in _COMPACT_REQUEST))
    for types in (plain, (*plain, list))
)
_tool_use_id: Callable[[Any], Any] = operator.attrgetter("tool_use_id")
_content: Callable[[Any], Any] = operator.attrgetter("content")
_version_of: Callable[[dict[str, Any]], Any] = operator.itemgetter("schema_version")
_step_of: Callable[[dict[str, Any]], Any] = operator.itemgetter("step")


def _current_and_stepped(kind: str, group: list[dict[str, Any]]) -> bool:
    """Whether the decoded lines ``group`` of event ``kind`` (their fields' types checked)
    are all of the current schema, and none has a step below 0 (an error's may be
    ``None``): what a piece read at once leaves to :func:`parse_line` otherwise."""
    if {SCHEMA_VERSION} != set(map(_version_of, group)):
        return False
    steps = list(map(_step_of, group))
    if kind == ERROR:
        steps = [n for n in steps if n is not None]
    return not steps or min(steps) >= 0


_response_of: Callable[[dict[str, Any]], Any] = operator.itemgetter("response")


def _event_of(data: dict[str, Any], path: Path, lineno: int, light: bool) -> Any:
    """The event of line ``lineno`` (decoded as ``data``): when validation has nothing to
    do, a listed view (``light``) or its model built as it is; else its model, validated."""
    event = listed(data) if light else modelled(data)
    if event is not None:
        return event
    return _validated(data, path, lineno)


def _validated(data: dict[str, Any], path: Path, lineno: int) -> Any:
    """The model of line ``lineno`` (decoded as ``data``), validated."""
    try:
        return _validate(data)
    except ValueError as exc:  # pydantic's ValidationError
        raise _invalid(exc, data, path, lineno) from None
    except RecursionError:
        raise TraceFormatError(path, lineno, "an event nested too deeply") from None


def _invalid(exc: Any, data: dict[str, Any], path: Path, lineno: int) -> Exception:
    """What the first of ``exc``'s errors (a pydantic ``ValidationError``) says about line
    ``lineno`` (event ``data``)."""
    first = exc.errors()[0]
    loc = ".".join(str(p) for p in first["loc"])
    kind = data.get("type", "?")
    return TraceFormatError(path, lineno, f"invalid {kind!r} event: {loc}: {first['msg']}")


def _first_validate(data: Any) -> Any:
    """Validate ``data`` through the event models, imported now: a listing of clean lines
    (see ``regista.trace.listing``) never needs them."""
    global _validate
    from regista.trace.events import EventAdapter

    _validate = EventAdapter.validator.validate_python
    return _validate(data)


#: ``EventAdapter.validate_python`` without the adapter's own per-call work (bound on
#: first use).
_validate: Callable[[Any], Any] = _first_validate

#: What ``messages=False`` leaves out of each kind of event.
_MESSAGES_OF = {LLM_REQUEST: ("messages", "system", "tools", "result_refs"), CONTEXT_COMPACTION: ()}
#: The same kinds as a tuple: any ``type`` value, hashable or not, is looked for in it.
_MESSAGES_OF_NAMES = tuple(_MESSAGES_OF)


def _request_head(raw: bytes) -> bytes | None:
    """An ``llm.request`` line as written, without ``system``, ``tools`` and what follows
    ``max_tokens`` and ``params`` (its messages): the JSON object of its other fields, found
    without decoding the rest. ``None`` when the line is not laid out so.

    Inside a JSON string every ``"`` is escaped, so ``,"key":`` in the bytes is a key; the
    first one is the line's own when only plain values come before it (the writer's field
    order). A line laid out otherwise gives a head that does not decode, or lacks a field,
    and is then read whole.
    """
    if raw.find(_B_REQUEST_TYPE, 0, 256) < 0:
        return None
    end = raw.find(b',"messages_prefix":')
    if end < 0:
        return None
    start = raw.find(b',"system":', 0, end)
    if start < 0:  # a compact line: the previous request's system prompt and tools hold
        return raw[:end] + b"}"
    resume = raw.find(b',"tool_choice":', start, end)
    if resume < 0:
        return None
    return raw[:start] + raw[resume:end] + b"}"


_B_REQUEST_TYPE = b'"type":"llm.request"'


def _decoded_head(raw: bytes) -> dict[str, Any] | None:
    """A request line's head (:func:`_request_head`) decoded, or ``None``: the line is not
    laid out so, or its head is not a request's object."""
    head = _request_head(raw)
    if head is None:
        return None
    try:
        data = orjson.loads(head)
    except orjson.JSONDecodeError:
        return None
    if type(data) is not dict or data.get("type") != LLM_REQUEST:
        return None
    return data


def _listed_request(raw: bytes, path: Path, lineno: int, light: bool) -> Any:
    """The event of a request line read from its head alone, or ``None``: read it whole."""
    data = _decoded_head(raw)
    if data is None:
        return None
    try:
        return _without_messages(data, path, lineno, light)
    except TraceFormatError:
        return None  # the whole line says what is wrong


def _without_messages(data: dict[str, Any], path: Path, lineno: int, light: bool) -> Any:
    """An ``llm.request`` or ``context.compaction`` line read for a listing of steps
    (``light``: perhaps as a :class:`~regista.trace.listing.Listed` view)."""
    version = data.get("schema_version")
    if not isinstance(version, int) or version < 1:
        raise TraceFormatError(path, lineno, "missing or invalid schema_version")
    if version > SCHEMA_VERSION:
        raise UnsupportedSchemaVersion(path, version, SCHEMA_VERSION)
    if version != SCHEMA_VERSION:
        data = migrate(data)
    for key in _MESSAGES_OF[data["type"]]:
        data.pop(key, None)
    replaced = data.get("replaced")
    if isinstance(replaced, list):
        data["replaced"] = [{} for _ in replaced]
    if data["type"] == LLM_REQUEST:
        data["messages"] = []
    event = _event_of(data, path, lineno, light)
    _check_step(event, path, lineno)
    problem = check_event(event, messages=False)
    if problem is not None:
        raise TraceFormatError(path, lineno, f"invalid {event.type!r} event: {problem}")
    return event


def _light(raw: bytes) -> Any:
    """What ``parse_line(raw, path, lineno, messages=False, light=True)`` gives, for a line
    of the shapes the writer writes (a listing's common case, in fewer steps); ``None`` for
    any other: :func:`parse_line` then reads it, and says what is wrong with it if anything
    is. A line read here is one :func:`parse_line` reads to the same view
    (``tests/trace/test_listing_light.py`` keeps the two equal).

    Only the current schema's lines of the kinds a listing reads most are read here: a
    request from its head (as :func:`_listed_request`), a response, tool call, decision,
    tool result or error whole.
    """
    if raw.find(_B_REQUEST_TYPE, 0, 256) >= 0:
        head = _decoded_head(raw)
        if head is None or not _LEFT_OUT_OF_HEAD.isdisjoint(head):
            return None
        data = head
        version = data.get("schema_version")
        if type(version) is not int or version != SCHEMA_VERSION:
            return None
        data["messages"] = []  # as _without_messages leaves it
        event = listed(data)
        # the rest of check_event(event, messages=False): its messages_prefix is the default
    else:
        try:
            data = orjson.loads(raw)
        except orjson.JSONDecodeError:
            return None
        if type(data) is not dict:
            return None
        kind = data.get("type")
        if type(kind) is not str or kind not in _LIGHT_KINDS:
            return None
        version = data.get("schema_version")
        if type(version) is not int or version != SCHEMA_VERSION:
            return None
        if too_deep(raw, data):
            return None
        event = listed(data)
        if event is None:
            return None
        if kind == LLM_RESPONSE:
            try:
                check_response(data["response"])
            except ValueError:
                return None
        elif (
            kind == TOOL_RESULT
            and type(data["content"]) is not str
            and check_event(event) is not None
        ):
            return None
    if event is None:
        return None
    step = data.get("step")
    if type(step) is int and step < 0:
        return None
    return event


def _light_lines(lines: list[bytes], seq: int, path: Path, lineno: int) -> list[Any] | None:
    """The events of ``lines`` (lines ``lineno + 1`` on, events ``seq`` on; none of them a
    file's last) as :func:`parse_file` reads them one at a time for a listing (by
    :func:`_light`, else by :func:`parse_line`); ``None`` when any of them is refused (or
    out of order): they are then read one at a time, which says what is wrong and where as
    the reference says it.

    The common case, in fewer steps: the lines of the kinds a trace holds most of, and the
    requests' heads (as :func:`_light` finds them), are decoded into typed records
    (:func:`~regista.trace.listing.records`: their fields checked as they are decoded, in
    C), their nested values then checked as :func:`check_event` checks them; a line the
    records do not take is read by :func:`_light`, and a compaction (the longest lines by
    far, decoded once), a session's start or end, or any other line, by :func:`parse_line`.
    ``tests/trace/test_listing_light.py`` keeps this equal to the reading one line at a
    time, on clean, changed and half-written lines.
    """
    n = len(lines)
    # A line's kind, from the first "type" key in its head: a request or a compaction
    # (another line, or one laid out otherwise, is found by its decoded type instead).
    # Told apart by the 7th letter of the type's value ("llm.request", "context.compaction"):
    # a line taken for another (an odd one, cut short) is read whole as its kind says, or
    # (a request's head that is none) makes the piece read a line at a time.
    try:
        letters: list[int] = list(
            map(getitem, lines, map(add, map(bytes.find, lines, _B_TYPE, _ZERO, _HEAD), _SEVENTH))
        )
    except IndexError:  # a line shorter than its type: read a line at a time
        return None
    # (the records' decoder, made once, pays from a few hundred lines on)
    record = records() if n >= _RECORDS_FROM else _no_record
    events: list[Any] = []
    append = events.append
    for i, raw in enumerate(lines):
        letter = letters[i]
        if letter == _T:
            event = None  # a compaction: read by parse_line (decoded once)
        else:
            try:
                if letter == _Q:  # a request, from its head
                    head = _request_head(raw)
                    if head is None:
                        return None
                    event = record(head)
                    if event.type != LLM_REQUEST:
                        return None
                else:
                    event = record(raw)
                    # its nested values, as check_event checks them
                    kind = event.type
                    if kind == LLM_RESPONSE:
                        check_response(event.response)  # (a ValueError: read the usual way)
                    elif (
                        kind == TOOL_RESULT
                        and type(event.content) is not str
                        and check_event(event) is not None
                    ):
                        return None
            except ValueError:  # no typed record (msgspec's errors are ValueErrors)
                event = _light(raw)
        if event is None:  # a session's start or end, a compaction, an odd line
            try:
                event = parse_line(raw, path, lineno + 1 + i, None, messages=False, light=True)
            except RegistaError:
                return None
        append(event)
    if list(map(_seq, events)) != list(range(seq, seq + n)):
        return None
    return events


#: How many lines a piece has at least for :func:`_light_lines` to read typed records.
_RECORDS_FROM = 200


def _no_record(raw: bytes) -> Any:
    raise ValueError("read the usual way")


_ZERO, _HEAD, _B_TYPE = repeat(0), repeat(256), repeat(b'"type":"')
#: Where the 7th letter of a type's value is from where its key begins, and that letter in
#: "llm.request" and in "context.compaction" (no other kind has either there).
_SEVENTH, _Q, _T = repeat(len('"type":"') + 6), ord("q"), ord("t")
_seq: Callable[[Any], Any] = operator.attrgetter("seq")


#: The kinds :func:`_light` reads whole (their nested values are checked there as
#: :func:`check_event` checks them).
_LIGHT_KINDS = frozenset((LLM_RESPONSE, TOOL_CALL, PERMISSION_DECISION, TOOL_RESULT, ERROR))
#: What a request's head never holds when laid out as the writer lays it.
_LEFT_OUT_OF_HEAD = frozenset(("messages", "system", "tools", "result_refs", "messages_prefix"))


#: How much of a trace file is read at a time. The lines of one piece are freed before the
#: next is read, so the same memory serves every piece: reading the file whole and
#: splitting it costs a second copy of it and the page faults of both.
CHUNK = 1 << 20


class _LineParser:
    """Parses the lines of one trace in order into ``events``."""

    def __init__(self, path: Path, messages: bool, light: bool = False, depth: int = 4) -> None:
        self.path = path
        #: How many frames up a warning names the reader's caller (``Trace.load`` and
        #: the like): a file read in pieces is one further (:func:`read_events`).
        self.depth = depth
        self.messages = messages
        self.light = light
        self.events: list[Any] = []
        self.decoder = RequestDecoder()
        self.truncated = False

    def feed(self, raw: bytes, lineno: int, last: bool, unterminated: bool) -> None:
        """Parse line ``lineno``; ``last``: no line follows it; ``unterminated``: nor does
        a newline (only such a line can be half-written: the writer ends each event with
        its newline in the same write). A whole line that is corrupt is an error."""
        events = self.events
        if not raw.strip():
            if last:
                return
            raise TraceFormatError(self.path, lineno, "empty line")
        try:
            if unterminated and not self.messages:
                # A listing reads a request from its head: a half-written one is whole JSON
                # only when it was written whole.
                _whole_json(raw, self.path, lineno)
            event = parse_line(
                raw, self.path, lineno, self.decoder, messages=self.messages, light=self.light
            )
        except TraceFormatError:
            if last and unterminated and not events:
                raise torn_only_line(self.path) from None
            if last and events and unterminated:
                warnings.warn(
                    f"{self.path}:{lineno}: dropped a half-written last line "
                    "(the writing process probably died mid-write)",
                    TraceWarning,
                    stacklevel=self.depth,
                )
                self.truncated = True
                return
            raise
        if event.seq != len(events):
            raise TraceFormatError(
                self.path, lineno, f"seq {event.seq} out of order (expected {len(events)})"
            )
        events.append(event)


def _whole_json(raw: bytes, path: Path, lineno: int) -> None:
    """Raise :class:`TraceFormatError` unless ``raw`` is JSON, whole."""
    try:
        orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise TraceFormatError(path, lineno, f"not valid JSON ({exc})") from None


def parse_lines(
    lines: list[bytes], path: Path, unterminated: bool, messages: bool = True
) -> tuple[list[Any], bool]:
    """The events of ``lines``, and whether a half-written last line was dropped."""
    parser = _LineParser(path, messages)
    last = len(lines)
    for lineno, raw in enumerate(lines, start=1):
        parser.feed(raw, lineno, lineno == last, lineno == last and unterminated)
    return parser.events, parser.truncated


def parse_file(
    file: Any,
    head: bytes,
    path: Path,
    messages: bool,
    light: bool = False,
    sessions: set[Any] | None = None,
) -> tuple[list[Any], bool]:
    """The events of a trace file read a piece at a time (``head``: its first piece,
    already read), and whether a half-written last line was dropped (``messages``,
    ``light``: see :func:`parse_line`; ``sessions``, with ``messages`` and not
    ``light``: given the session ids of the events, for :func:`checked_events`).

    Every line but the last is parsed here, in line: only the last (which may be blank,
    or half-written) goes through :meth:`_LineParser.feed`'s rules.
    """
    parser = _LineParser(path, messages, light, depth=5)
    events = parser.events
    append = events.append
    decoder = parser.decoder if messages else None  # a listing rebuilds no request
    fast = _light if light and not messages else None
    # Each piece's lines read together (_light_lines for a listing; a few at a time,
    # _modelled_piece, for a full decode), until two pieces of other lines (another
    # writer's, an older schema's) were not: the rest is read a line at a time.
    misses = 0 if fast is not None or (decoder is not None and not light) else 2
    lineno = 0
    rest = b""  # the start of a line the next piece ends
    chunk = head or file.read(CHUNK)
    held: bytes | None = None  # the last whole line so far: the file's last, if nothing follows
    with paused_gc():  # the events make no garbage; collecting while they pile up is waste
        while chunk:
            lines = chunk.split(b"\n")
            if rest:
                lines[0] = rest + lines[0]
            rest = lines.pop()
            if lines:
                if held is not None:
                    lines[0:0] = (held,)
                held = lines.pop()
                if misses < 2 and fast is None:  # read a few lines at a time
                    read = _modelled_piece(
                        lines, path, lineno, cast(RequestDecoder, decoder), sessions
                    )
                    events += read
                    lineno += len(read)
                    lines = lines[len(read) :]
                    misses += bool(lines)
                elif misses < 2:
                    got = _light_lines(lines, lineno, path, lineno)
                    if got is not None:
                        events += got
                        lineno += len(lines)
                        lines = []  # read
                    else:  # after two pieces read a line at a time, so is the rest
                        misses += 1
                for raw in lines:  # none of them is the file's last line
                    lineno += 1
                    event = None if fast is None else fast(raw)
                    if event is None:
                        try:
                            event = parse_line(
                                raw, path, lineno, decoder, messages=messages, light=light
                            )
                        except TraceFormatError:
                            if not raw.strip():
                                raise TraceFormatError(path, lineno, "empty line") from None
                            raise
                    if event.seq != lineno - 1:
                        raise TraceFormatError(
                            path, lineno, f"seq {event.seq} out of order (expected {lineno - 1})"
                        )
                    append(event)
                    if sessions is not None:
                        sessions.add(event.session_id)
            chunk = file.read(CHUNK)
        fed = len(events)
        if held is not None:
            lineno += 1
            parser.feed(held, lineno, not rest, False)
        if rest:
            lineno += 1
            parser.feed(rest, lineno, True, True)
        if sessions is not None:
            sessions.update(map(_session_id, events[fed:]))
    return events, parser.truncated


def not_a_trace_file(folder: Path) -> str:
    """What to say when a folder is given for a trace: and which trace in it is newest."""
    try:
        traces = [p for p in folder.glob("*.jsonl") if p.is_file()]
        newest = max(traces, key=lambda p: p.stat().st_mtime) if traces else None
    except OSError:
        newest = None
    hint = f" (its newest trace is {newest})" if newest is not None else ""
    return f"{folder}: is a directory, not a trace file{hint}"


def read_events(
    path: str | Path, *, messages: bool = True, light: bool = False
) -> tuple[list[Any], bool]:
    """The events of a trace file, and whether a half-written last line was dropped
    (``messages``, ``light``: see :func:`~regista.trace.lines.parse_line`; another tool's
    session is converted in memory, and its events are models).

    Raises:
        TraceError: The file is missing or empty.
        TraceFormatError: A line (other than a half-written last one) is corrupt.
        UnsupportedSchemaVersion: The trace is newer than this regista.
    """
    path = Path(path)
    try:
        with open(path, "rb", buffering=0) as file:
            if (device := device_error(path, file.fileno())) is not None:
                raise TraceError(device)
            head = file.read(CHUNK)
            if (compressed := compressed_error(path, head)) is not None:
                raise TraceError(compressed)
            if not is_regista_trace(head[:HEAD_BYTES]):
                data = head + file.read()
            elif messages and not light:
                sessions: set[Any] = set()
                events, truncated = parse_file(file, head, path, messages, light, sessions)
                return checked_events(events, path, sessions), truncated
            else:
                events, truncated = parse_file(file, head, path, messages, light)
                return checked_events(events, path), truncated
    except FileNotFoundError:
        raise NoSuchPathError(f"{path}: no such trace file") from None
    except IsADirectoryError:
        raise TraceError(not_a_trace_file(path)) from None
    except OSError as exc:
        raise TraceError(f"{path}: cannot read ({exc.strerror})") from None
    # Another tool's session (a format registered with regista.trace.formats): converted
    # in memory. What no format claims is read as a trace, whose errors say what is wrong.
    from regista.trace.reader import Trace

    fmt = claiming(data)
    if fmt is not None and fmt.convert is not None:
        data = fmt.convert(path, data)
    trace = Trace.from_bytes(data, path, messages=messages)
    return trace.events, trace.truncated


def checked_events(events: list[Any], path: Path, sessions: set[Any] | None = None) -> list[Any]:
    """``events``, once they are known to be one whole session (``sessions``: their
    session ids, when the reader gathered them as it read)."""
    if not events:
        raise TraceError(f"{path}: empty trace (no events)")
    if events[0].type != SESSION_START:
        raise TraceFormatError(path, 1, "a trace must begin with a session.start event")
    sid = events[0].session_id
    if sessions is None:
        sessions = set(map(_session_id, events))
    if len(sessions) > 1:
        for i, ev in enumerate(events):
            if ev.session_id != sid:
                raise TraceFormatError(path, i + 1, "a trace holds exactly one session")
    return events


_session_id = operator.attrgetter("session_id")
