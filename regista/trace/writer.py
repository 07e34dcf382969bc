"""Append-only trace writer: one line per event, flushed per event, never rewritten.

The file is created exclusively (``O_EXCL``: a second writer on the same path gets
:class:`TraceExistsError` and the first trace is untouched) and written unbuffered, so each
event reaches the OS in a single ``write``: a crash (even ``kill -9``) loses at most the
event being written. ``fsync=True`` also survives a power cut, at the cost of a disk flush
per event.

A write that fails (a full disk, a file-size limit, an I/O error) raises
:class:`TraceWriteError` after cutting the file back to its last whole event, so the
trace stays readable and later, smaller events (the session's end) may still fit; an
event that cannot be serialised (nested deeper than ``MAX_DEPTH``) is refused the same
way. A trace whose first event could not be written is removed: no empty file is left.

Writing is on every step's path, so a line is made straight from the fields (in the
model's field order, defaults filled in) without validating a pydantic model first, and
:meth:`TraceWriter.append` (what the recorder uses) makes no event at all unless a listener
wants one. When the fields are the model's fields after the envelope, in order (what the
recorder passes), the line is the envelope's bytes followed by the fields serialised: the
same bytes, without a dict made for them. Only a line holding an object or a list can nest
too deeply, and only one longer than twice the limit and with more brackets than the limit
(counted at the speed of ``memchr``) is walked; a line is searched for secrets in one
pass (``regista.redact``). ``llm.request`` lines are written in their compact form
(``regista.trace.compact``).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from time import time_ns
from types import UnionType
from typing import Any, BinaryIO, Literal, NamedTuple, NoReturn, Union, get_args, get_origin

import orjson

from regista.errors import TraceExistsError, TraceWriteError, UserError
from regista.redact import default as redact_default
from regista.redact import redact_bytes, secret_finder
from regista.trace.compact import RequestEncoder
from regista.trace.events import EventBase, LlmRequestEvent, ToolResult, ms_ts, now_ts
from regista.trace.names import LLM_REQUEST
from regista.trace.validate import (
    MAX_DEPTH,
    NOTHING_NESTED,
    check_fields,
    deeper,
    more_brackets,
    too_deep,
)

__all__ = ["TraceWriter", "too_deep_error"]

_UNSET: Any = object()
_REQUEST: Any = "request"
_RESULT: Any = "result"


class _LineParts(NamedTuple):
    """What :meth:`TraceWriter.append` needs to make the lines of one event class without a
    dict: the fixed parts of its lines (see ``_Shape``), for one writer."""

    #: The fields after the envelope, in the model's order.
    rest: tuple[str, ...]
    #: The model's field names.
    names: frozenset[str]
    #: The line up to its ``seq`` value: ``{"schema_version":N,"session_id":…,"seq":``.
    lead: bytes
    #: ``,"type":"…",``: what follows the time stamp, before the fields.
    kind: bytes
    #: The fields whose values may be objects or lists.
    nestable: tuple[str, ...]
    #: ``_REQUEST`` or ``_RESULT`` when the request encoder is told of its lines, else ``None``.
    role: Any


def too_deep_error(kind: str, path: Path) -> TraceWriteError:
    """The error for an event that cannot be recorded because it nests too deeply."""
    return TraceWriteError(
        f"cannot record a {kind} event in {path}: a value in it is nested more than "
        f"{MAX_DEPTH} levels deep"
    )


class TraceWriter:
    """Writes the events of one session to ``path``.

    Args:
        path: The trace file, created (with its folder); it must not exist yet.
        session_id: Stamped on every event.
        fsync: ``os.fsync`` after every event.
        clock: Makes each event's ``ts`` (default: the current UTC time); a fixed clock
            makes byte-identical traces (the sample traces use one).
        redact: Replace secret shapes (API keys, tokens, passwords in URLs, private keys)
            by ``[REDACTED:<kind>]`` as each line is written (see ``regista.redact``);
            ``None``: the process default (on, unless ``regista --no-redact``).
        file: Write to this open binary file instead (e.g. an ``io.BytesIO``: a trace
            made in memory); ``path`` then only names it in messages.
        referred_kept: How many tool results already referred to by a request stay in
            memory, older ones known by a digest; what is written does not depend on it
            (see :class:`~regista.trace.compact.RequestEncoder`).
    """

    def __init__(
        self,
        path: str | Path,
        session_id: str,
        *,
        fsync: bool = False,
        clock: Callable[[], str] | None = None,
        redact: bool | None = None,
        file: BinaryIO | None = None,
        referred_kept: int | None = None,
    ) -> None:
        self.path = Path(path)
        self.redact = redact_default() if redact is None else redact
        #: Says whether a line may hold a secret (``None``: no redaction).
        self._secrets = secret_finder() if self.redact else None
        self.clock = clock
        self.session_id = session_id
        self.fsync = fsync
        self._seq = 0
        self._size = 0
        self._listeners: list[Any] = []
        self._requests = RequestEncoder(referred_kept)
        #: The millisecond (or the clock's ``ts``) of the last line, and its ``,"ts":…`` (the
        #: default clock's is :func:`~regista.trace.events.now_ts`'s text).
        self._ms = -1
        self._ts: Any = _UNSET
        self._ts_json = b""
        self._fast: dict[type[EventBase], _LineParts] = {}
        #: The tool schemas of the last request written (checked then).
        self._tools: Any = None
        if file is not None:
            self._file = file
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except (FileExistsError, NotADirectoryError) as exc:
            raise UserError(
                f"cannot write traces in {self.path.parent}: "
                f"{exc.filename or self.path.parent} is a file, not a folder"
            ) from None
        except OSError as exc:  # e.g. a read-only folder
            raise UserError(f"cannot write the trace {self.path}: {exc.strerror or exc}") from None
        try:
            self._file = open(self.path, "xb", buffering=0)  # noqa: SIM115 - lives with the writer
        except FileExistsError:
            raise TraceExistsError(
                f"a trace already exists at {self.path}: session {session_id} was already "
                "written; a new session needs a new session_id (it was left untouched)"
            ) from None
        except NotADirectoryError:
            raise UserError(
                f"cannot write traces in {self.path.parent}: it is a file, not a folder"
            ) from None
        except OSError as exc:  # e.g. a read-only folder
            raise UserError(f"cannot write the trace {self.path}: {exc.strerror or exc}") from None

    @property
    def next_seq(self) -> int:
        return self._seq

    @property
    def closed(self) -> bool:
        return self._file.closed

    def add_listener(self, callback: Any) -> None:
        """Call ``callback(event)`` after each event is on disk (the TUI streams forks so)."""
        self._listeners.append(callback)
        self._fast.clear()  # every line is now made as a dict, to make its event

    def write(self, event_cls: type[EventBase], **fields: Any) -> Any:
        """Create an event of ``event_cls`` with the next ``seq`` and append it.

        Returns:
            The event that was written.
        """
        return _event(event_cls, self._append(event_cls, fields))

    def _check(self, event_cls: type[EventBase], fields: dict[str, Any]) -> None:
        """Refuse an event whose nested payloads the reader would refuse (the reader's own
        check, :func:`~regista.trace.validate.check_fields`): nothing is written, and the
        error says what is wrong and where. A request's tool schemas that are the very
        list of the request before are not looked at again."""
        shape = _SHAPES.get(event_cls) or _shape(event_cls)
        if not shape.checked:
            return
        tools = fields.get("tools")
        fresh = tools is None or tools is not self._tools
        problem = check_fields(shape.type, fields, shape.defaults, tools=fresh)
        if problem is not None:
            raise TraceWriteError(
                f"cannot record a {shape.type} event in {self.path}: {problem} (it would "
                "not read back)"
            )
        if shape.type == LLM_REQUEST:
            self._tools = tools

    def append(self, event_cls: type[EventBase], fields: dict[str, Any]) -> None:
        """:meth:`write` without making the event (what the recorder uses; an event is made
        only for listeners). ``fields`` is not changed."""
        try:
            rest, names, lead, kind, nestable, role = self._fast[event_cls]
        except KeyError:
            fast = self._fast_for(event_cls)
            if fast is None:
                self._append(event_cls, fields)
                return
            rest, names, lead, kind, nestable, role = fast
        keys = tuple(fields)
        if keys != rest and not _extras_after(keys, rest, names):
            self._append(event_cls, fields)
            return
        # The fast path: ``fields`` are the line's fields after the envelope, in the model's
        # order (perhaps with extras after them), so the line is the envelope's bytes and
        # then ``fields`` serialised: the very bytes ``_append`` makes, without a dict.
        if self.clock is None:
            ms = time_ns() // 1_000_000
            if ms != self._ms:  # lines of one millisecond share their time stamp
                self._ms = ms
                self._ts_json = b',"ts":"' + ms_ts(ms).encode() + b'"'
        else:
            ts = self.clock()
            if ts is not self._ts:
                self._ms = -1
                try:
                    self._ts_json = b',"ts":' + orjson.dumps(ts)
                except TypeError:  # not a JSON value: pydantic says what is wrong
                    self._append(event_cls, fields, ts)
                    return
                self._ts = ts
        self._check(event_cls, fields)
        try:
            data = self._requests.encode(fields) if role is _REQUEST else fields
            body = _dumps(data, option=_NEWLINE)
        except TypeError:  # a value orjson does not know (a Path, …), or nested too deep
            self._append(event_cls, fields)
            return
        # Only a line holding an object or a list, longer than twice the limit, may nest
        # too deeply; only one with more brackets than the limit is walked (``more_brackets``,
        # in line: this runs for most requests and answers).
        if len(body) > _SHORT and (
            role is _REQUEST or len(keys) != len(rest) or _may_nest(data, nestable)
        ):
            unsquared = body.replace(b"[", b"", _OVER)
            found = len(body) - len(unsquared)
            if (
                found > MAX_DEPTH
                or found + len(unsquared) - len(unsquared.replace(b"{", b"", _OVER - found))
                > MAX_DEPTH
            ) and _walked_too_deep(body, data):
                raise too_deep_error(str(_SHAPES[event_cls].template["type"]), self.path)
        line = b"".join((lead, b"%d" % self._seq, self._ts_json, kind, body[1:]))
        self._put(line)
        if role is not None:
            if role is _REQUEST:
                self._requests.commit()
            else:
                self._requests.note_result(fields["tool_use_id"], fields["content"])

    @property
    def _file(self) -> BinaryIO:
        return self._open

    @_file.setter
    def _file(self, file: BinaryIO) -> None:
        self._open = file
        #: The file's ``write``, looked up once.
        self._write: Callable[[bytes], int | None] = file.write

    def _put(self, line: bytes) -> None:
        """Write ``line`` (an event and its newline, its secrets redacted) as the next one."""
        if self._secrets is not None and (beginnings := self._secrets(line)):
            line = redact_bytes(line, first=beginnings)
        try:
            written = self._write(line)
            if written != len(line) or self.fsync:
                self._finish(line, written)
        except OSError as exc:
            self._failed(exc)
        self._size += len(line)
        self._seq += 1

    def _fast_for(self, event_cls: type[EventBase]) -> _LineParts | None:
        """What :meth:`append` needs to make the lines of ``event_cls`` without a dict;
        ``None`` when they are made as dicts (a class whose envelope is not the usual one,
        or a writer with listeners, which are given events)."""
        shape = _SHAPES.get(event_cls) or _shape(event_cls)
        if not shape.lead or self._listeners:
            return None
        role = (
            _REQUEST
            if event_cls is LlmRequestEvent
            else _RESULT
            if event_cls is ToolResult
            else None
        )
        lead = shape.lead + orjson.dumps(self.session_id) + b',"seq":'
        fast = _LineParts(shape.rest, shape.names, lead, shape.kind, shape.nestable, role)
        self._fast[event_cls] = fast
        return fast

    def _append(
        self, event_cls: type[EventBase], fields: dict[str, Any], ts: Any = _UNSET
    ) -> dict[str, Any]:
        """Append the event of ``fields`` made as a dict first; return the dict."""
        self._check(event_cls, fields)
        shape = _SHAPES.get(event_cls) or _shape(event_cls)
        # The line's dict: every field in the model's order (defaults filled in), then extras.
        # The engine's own callers pass fields of the right types, and the reader validates
        # every line it loads; a missing required field leaves a placeholder that orjson
        # refuses, and pydantic then says what is wrong.
        data = {**shape.template, **fields, "session_id": self.session_id, "seq": self._seq}
        if "ts" not in fields:
            if ts is _UNSET:
                ts = now_ts() if self.clock is None else self.clock()
            data["ts"] = ts
        for name, factory in shape.factories:
            if name not in fields:
                data[name] = factory()  # type: ignore[call-arg]
        try:
            out = self._requests.encode(data) if event_cls is LlmRequestEvent else data
            line = orjson.dumps(out, option=_NEWLINE)
        except TypeError:  # a value orjson does not know (a Path, …), or nested too deep
            data, line = self._serialisable(event_cls, fields, data["ts"])
        else:
            # Only objects and lists nest: a line without any is not looked at; one with
            # fewer brackets than the limit cannot be too deep either.
            if (
                len(line) > _SHORT
                and (len(data) != shape.width or _may_nest(data, shape.nestable))
                and _nests_too_deep(line, out)
            ):
                raise too_deep_error(str(data.get("type")), self.path)
        self._put(line)
        if event_cls is LlmRequestEvent:
            self._requests.commit()
        elif event_cls is ToolResult:
            self._requests.note_result(data["tool_use_id"], data["content"])
        if self._listeners:
            event = _event(event_cls, data)
            for listener in self._listeners:
                listener(event)
        return data

    def _serialisable(
        self, event_cls: type[EventBase], fields: dict[str, Any], ts: str
    ) -> tuple[dict[str, Any], bytes]:
        """The line of an event orjson refused: pydantic says what is wrong (a field missing
        or of the wrong kind), or makes the values plain JSON."""
        event = event_cls(**{"ts": ts, **fields, "session_id": self.session_id, "seq": self._seq})
        try:
            data = event.model_dump(mode="json")
            out = self._requests.encode(data) if event_cls is LlmRequestEvent else data
            line = orjson.dumps(out, option=_NEWLINE)
        except (TypeError, ValueError, RecursionError):  # past orjson's / pydantic's depth
            raise too_deep_error(str(event.type), self.path) from None  # type: ignore[attr-defined]
        if _nests_too_deep(line, out):
            raise too_deep_error(str(data.get("type")), self.path)
        return data, line

    def _finish(self, line: bytes, written: int | None) -> None:
        """The rest of a partial write (a raw write may be partial for very large lines),
        then the flush to disk when asked."""
        view = memoryview(line)[written or 0 :]
        while view:
            view = view[self._file.write(view) or 0 :]
        if self.fsync:
            os.fsync(self._file.fileno())

    def _failed(self, exc: OSError) -> NoReturn:
        self._cut_back()
        why = exc.strerror or str(exc)
        raise TraceWriteError(
            f"cannot write the trace {self.path}: {why}; it holds the session up to "
            "the last event that fit"
        ) from None

    def _cut_back(self) -> None:
        """Drop a partly written event, so the file ends with a whole one."""
        try:
            os.ftruncate(self._file.fileno(), self._size)
            self._file.seek(self._size)
        except OSError:
            pass  # the reader drops a half-written last line anyway
        if self._seq == 0:  # not even session.start fit: leave no empty trace behind
            self._file.close()
            self.path.unlink(missing_ok=True)

    def close(self) -> None:
        if not self._file.closed:
            self._file.close()

    def __enter__(self) -> TraceWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _Shape:
    """What the writer needs to know of an event class to make its lines fast."""

    def __init__(self, event_cls: type[EventBase]) -> None:
        fields = event_cls.model_fields
        #: Every field in order, with its default (required ones: a placeholder).
        self.template = {name: f.default for name, f in fields.items()}
        self.factories = [
            (name, f.default_factory)
            for name, f in fields.items()
            if f.default_factory is not None and name != "ts"
        ]
        self.names = frozenset(fields)
        self.width = len(fields)
        #: The event's ``type``, and whether it has nested payloads to check.
        self.type = str(self.template.get("type"))
        self.checked = self.type not in NOTHING_NESTED
        #: The value of each field that has a default (what an event not given it holds).
        self.defaults = {
            name: f.default if f.default_factory is None else f.default_factory()  # type: ignore[call-arg]
            for name, f in fields.items()
            if not f.is_required()
        }
        #: The fields whose values may be objects or lists (the others cannot nest).
        self.nestable = tuple(name for name, f in fields.items() if _nests(f.annotation))
        #: The fields after the envelope, in order.
        self.rest = tuple(name for name in fields if name not in _ENVELOPE)
        #: ``{"schema_version":N,"session_id":`` and ``,"type":"…",``: the constant bytes
        #: of the envelope, when its fields come first in the usual order with constant
        #: values (else empty: lines are made as dicts).
        self.lead = self.kind = b""
        version, kind = self.template.get("schema_version"), self.template.get("type")
        if (
            tuple(fields)[:5] == _ENVELOPE
            and self.rest
            and type(version) is int
            and type(kind) is str
        ):
            self.lead = b'{"schema_version":' + orjson.dumps(version) + b',"session_id":'
            self.kind = b',"type":' + orjson.dumps(kind) + b","


def _extras_after(keys: tuple[str, ...], rest: tuple[str, ...], names: frozenset[str]) -> bool:
    """Whether ``keys`` are ``rest`` followed by extras (``names``: the class's fields)."""
    n = len(rest)
    return keys[:n] == rest and names.isdisjoint(keys[n:])


def _may_nest(data: dict[str, Any], nestable: tuple[str, ...]) -> bool:
    """Whether a value of ``data`` (which has every field of ``nestable``) is an object or a
    list, or of a type orjson may serialise as one (a subclass)."""
    for name in nestable:  # noqa: SIM110 - a loop: no generator made on every line's path
        if type(data[name]) not in _PLAIN:
            return True
    return False


def _nests_too_deep(line: bytes, data: dict[str, Any]) -> bool:
    """Whether ``line`` (``data`` serialised) nests more than ``MAX_DEPTH`` levels.

    A line with no more brackets than the limit cannot (see
    :func:`~regista.trace.validate.more_brackets`); only a line with more is walked.
    """
    return more_brackets(line, MAX_DEPTH) and _walked_too_deep(line, data)


def _walked_too_deep(line: bytes, data: dict[str, Any]) -> bool:
    """:func:`_nests_too_deep` for a line with more brackets than the limit."""
    found = deeper(data, MAX_DEPTH)
    return too_deep(line, orjson.loads(line)) if found is None else found


def _nests(annotation: Any) -> bool:
    """Whether a value of this type may be a JSON object or list."""
    if annotation in _SCALARS or get_origin(annotation) is Literal:
        return False
    if get_origin(annotation) in (Union, UnionType):
        return any(_nests(a) for a in get_args(annotation))
    return True


_SCALARS = (str, int, float, bool, type(None), None)
_ENVELOPE = ("schema_version", "session_id", "seq", "ts", "type")
#: The types of values that are not objects or lists in JSON.
_PLAIN = frozenset((str, int, float, bool, type(None)))
_SHAPES: dict[type[EventBase], _Shape] = {}
_NEWLINE = orjson.OPT_APPEND_NEWLINE
#: A time stamp's seconds, and its milliseconds with its end, by their number.
_dumps = orjson.dumps
#: No line this long or shorter can nest too deeply: each level takes two brackets.
_SHORT = 2 * (MAX_DEPTH + 1)
#: Brackets past the limit: counting them stops there.
_OVER = MAX_DEPTH + 1


def _shape(event_cls: type[EventBase]) -> _Shape:
    return _SHAPES.setdefault(event_cls, _Shape(event_cls))


def _event(event_cls: type[EventBase], data: dict[str, Any]) -> Any:
    """The event of a line dict, built as ``model_construct`` builds it, without its cost."""
    shape = _SHAPES.get(event_cls) or _shape(event_cls)
    if len(data) == shape.width:
        values, extra = data, {}
    else:
        values = {k: v for k, v in data.items() if k in shape.names}
        extra = {k: v for k, v in data.items() if k not in shape.names}
    event = event_cls.__new__(event_cls)
    object.__setattr__(event, "__dict__", values)
    object.__setattr__(event, "__pydantic_fields_set__", set(data))
    object.__setattr__(event, "__pydantic_extra__", extra)
    object.__setattr__(event, "__pydantic_private__", None)
    return event
