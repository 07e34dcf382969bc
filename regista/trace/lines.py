"""Decoding the lines of a trace: one line (:func:`parse_line`), a list of them
(:func:`parse_lines`) or a file read a piece at a time (:func:`parse_file`).

Each line is decoded, version-checked, migrated, completed (compact requests) and
validated; a corrupt line is a :class:`TraceFormatError` naming file and line, except a
half-written last one, which is dropped with a :class:`TraceWarning`.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import orjson
from pydantic import ValidationError

from regista._gc import paused_gc
from regista.errors import TraceFormatError, TraceWarning, UnsupportedSchemaVersion
from regista.trace.compact import RESOLVED, RequestDecoder, Resolver, TraceRefError
from regista.trace.events import CONTEXT_COMPACTION, LLM_REQUEST, SCHEMA_VERSION, EventAdapter
from regista.trace.migrations import migrate
from regista.trace.validate import MAX_DEPTH, NOTHING_NESTED, check_event, too_deep

__all__ = ["CHUNK", "parse_file", "parse_line", "parse_lines"]


def parse_line(
    raw: bytes,
    path: Path,
    lineno: int,
    decoder: Resolver | None = None,
    *,
    messages: bool = True,
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
    """
    if not messages and raw.find(_B_REQUEST_TYPE, 0, 256) >= 0:
        event = _listed_request(raw, path, lineno)
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
    kind = data.get("type")
    if not messages and kind in _MESSAGES_OF_NAMES:
        return _without_messages(data, path, lineno)
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
    try:
        event = _validate(data)
    except ValidationError as exc:
        raise _invalid(exc, data, path, lineno) from None
    except RecursionError:
        raise TraceFormatError(path, lineno, "an event nested too deeply") from None
    if tools is not None:
        event.__dict__["tools"] = tools
        event.__pydantic_fields_set__.add("tools")
    if kind not in NOTHING_NESTED:
        problem = check_event(event, tools=tools is None)
        if problem is not None:
            raise TraceFormatError(path, lineno, f"invalid {event.type!r} event: {problem}")
        if tools is None and kind == LLM_REQUEST and isinstance(decoder, RequestDecoder):
            decoder.checked(data["tools"], event.tools)
    return event


def _invalid(exc: ValidationError, data: dict[str, Any], path: Path, lineno: int) -> Exception:
    """What the first of ``exc``'s errors says about line ``lineno`` (event ``data``)."""
    first = exc.errors()[0]
    loc = ".".join(str(p) for p in first["loc"])
    kind = data.get("type", "?")
    return TraceFormatError(path, lineno, f"invalid {kind!r} event: {loc}: {first['msg']}")


#: ``EventAdapter.validate_python`` without the adapter's own per-call work.
_validate = EventAdapter.validator.validate_python

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


def _listed_request(raw: bytes, path: Path, lineno: int) -> Any:
    """The event of a request line read from its head alone, or ``None``: read it whole."""
    head = _request_head(raw)
    if head is None:
        return None
    try:
        data = orjson.loads(head)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(data, dict) or data.get("type") != LLM_REQUEST:
        return None
    try:
        return _without_messages(data, path, lineno)
    except TraceFormatError:
        return None  # the whole line says what is wrong


def _without_messages(data: dict[str, Any], path: Path, lineno: int) -> Any:
    """An ``llm.request`` or ``context.compaction`` line read for a listing of steps."""
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
    try:
        event = _validate(data)
    except ValidationError as exc:
        raise _invalid(exc, data, path, lineno) from None
    problem = check_event(event, messages=False)
    if problem is not None:
        raise TraceFormatError(path, lineno, f"invalid {event.type!r} event: {problem}")
    return event


#: How much of a trace file is read at a time. The lines of one piece are freed before the
#: next is read, so the same memory serves every piece: reading the file whole and
#: splitting it costs a second copy of it and the page faults of both.
CHUNK = 1 << 20


class _LineParser:
    """Parses the lines of one trace in order into ``events``."""

    def __init__(self, path: Path, messages: bool) -> None:
        self.path = path
        self.messages = messages
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
            event = parse_line(raw, self.path, lineno, self.decoder, messages=self.messages)
        except TraceFormatError:
            if last and events and unterminated:
                warnings.warn(
                    f"{self.path}:{lineno}: dropped a half-written last line "
                    "(the writing process probably died mid-write)",
                    TraceWarning,
                    stacklevel=4,
                )
                self.truncated = True
                return
            raise
        if event.seq != len(events):
            raise TraceFormatError(
                self.path, lineno, f"seq {event.seq} out of order (expected {len(events)})"
            )
        events.append(event)


def parse_lines(
    lines: list[bytes], path: Path, unterminated: bool, messages: bool = True
) -> tuple[list[Any], bool]:
    """The events of ``lines``, and whether a half-written last line was dropped."""
    parser = _LineParser(path, messages)
    last = len(lines)
    for lineno, raw in enumerate(lines, start=1):
        parser.feed(raw, lineno, lineno == last, lineno == last and unterminated)
    return parser.events, parser.truncated


def parse_file(file: Any, head: bytes, path: Path, messages: bool) -> tuple[list[Any], bool]:
    """The events of a trace file read a piece at a time (``head``: its first piece,
    already read), and whether a half-written last line was dropped.

    Every line but the last is parsed here, in line: only the last (which may be blank,
    or half-written) goes through :meth:`_LineParser.feed`'s rules.
    """
    parser = _LineParser(path, messages)
    events = parser.events
    append = events.append
    decoder = parser.decoder if messages else None  # a listing rebuilds no request
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
                for raw in lines:  # none of them is the file's last line
                    lineno += 1
                    try:
                        event = parse_line(raw, path, lineno, decoder, messages=messages)
                    except TraceFormatError:
                        if not raw.strip():
                            raise TraceFormatError(path, lineno, "empty line") from None
                        raise
                    if event.seq != lineno - 1:
                        raise TraceFormatError(
                            path, lineno, f"seq {event.seq} out of order (expected {lineno - 1})"
                        )
                    append(event)
            chunk = file.read(CHUNK)
        if held is not None:
            lineno += 1
            parser.feed(held, lineno, not rest, False)
        if rest:
            lineno += 1
            parser.feed(rest, lineno, True, True)
    return events, parser.truncated
