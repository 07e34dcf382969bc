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
wants one. Only a line holding an object or a list can nest too deeply, and only one with
more brackets than the limit is walked; a line is searched for secrets in one pass
(``regista.redact``). ``llm.request`` lines are written in their compact form
(``regista.trace.compact``).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from types import UnionType
from typing import Any, BinaryIO, Literal, NoReturn, Union, get_args, get_origin

import orjson

from regista.errors import TraceExistsError, TraceWriteError, UserError
from regista.redact import default as redact_default
from regista.redact import redact_bytes, secret_finder
from regista.trace.compact import RequestEncoder
from regista.trace.events import EventBase, LlmRequestEvent, ToolResult, now_ts
from regista.trace.validate import MAX_DEPTH, too_deep

__all__ = ["TraceWriter", "too_deep_error"]


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
        self._requests = RequestEncoder()
        if file is not None:
            self._file: BinaryIO = file
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

    def write(self, event_cls: type[EventBase], **fields: Any) -> Any:
        """Create an event of ``event_cls`` with the next ``seq`` and append it.

        Returns:
            The event that was written.
        """
        return _event(event_cls, self.append(event_cls, fields))

    def append(self, event_cls: type[EventBase], fields: dict[str, Any]) -> dict[str, Any]:
        """:meth:`write` without making the event: the line's dict is returned (what the
        recorder uses; an event is made only for listeners). ``fields`` is not changed."""
        shape = _SHAPES.get(event_cls) or _shape(event_cls)
        # The line's dict: every field in the model's order (defaults filled in), then extras.
        # The engine's own callers pass fields of the right types, and the reader validates
        # every line it loads; a missing required field leaves a placeholder that orjson
        # refuses, and pydantic then says what is wrong.
        data = {**shape.template, **fields, "session_id": self.session_id, "seq": self._seq}
        if "ts" not in fields:
            data["ts"] = now_ts() if self.clock is None else self.clock()
        for name, factory in shape.factories:
            if name not in fields:
                data[name] = factory()  # type: ignore[call-arg]
        try:
            if event_cls is LlmRequestEvent:
                line = orjson.dumps(self._requests.encode(data), option=_NEWLINE)
            else:
                line = orjson.dumps(data, option=_NEWLINE)
        except TypeError:  # a value orjson does not know (a Path, …), or nested too deep
            data, line = self._serialisable(event_cls, fields, data["ts"])
        else:
            # Only objects and lists nest: a line without any is not looked at; one with
            # fewer brackets than the limit cannot be too deep either.
            nests = len(data) != shape.width
            for name in shape.nestable:
                kind = type(data[name])
                if kind is dict or kind is list:
                    nests = True
                    break
            if nests and line.count(b"[") + line.count(b"{") > MAX_DEPTH and too_deep(line, data):
                raise too_deep_error(str(data.get("type")), self.path)
        if self._secrets is not None and self._secrets(line):
            line = redact_bytes(line)
        try:
            written = self._file.write(line)
            if written != len(line) or self.fsync:
                self._finish(line, written)
        except OSError as exc:
            self._failed(exc)
        self._size += len(line)
        self._seq += 1
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
            if event_cls is LlmRequestEvent:
                line = orjson.dumps(self._requests.encode(data), option=_NEWLINE)
            else:
                line = orjson.dumps(data, option=_NEWLINE)
        except (TypeError, ValueError, RecursionError):  # past orjson's / pydantic's depth
            raise too_deep_error(str(event.type), self.path) from None  # type: ignore[attr-defined]
        if too_deep(line, data):
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
        #: The fields whose values may be objects or lists (the others cannot nest).
        self.nestable = tuple(name for name, f in fields.items() if _nests(f.annotation))


def _nests(annotation: Any) -> bool:
    """Whether a value of this type may be a JSON object or list."""
    if annotation in _SCALARS or get_origin(annotation) is Literal:
        return False
    if get_origin(annotation) in (Union, UnionType):
        return any(_nests(a) for a in get_args(annotation))
    return True


_SCALARS = (str, int, float, bool, type(None), None)
_SHAPES: dict[type[EventBase], _Shape] = {}
_NEWLINE = orjson.OPT_APPEND_NEWLINE


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
