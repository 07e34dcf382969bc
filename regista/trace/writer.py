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
model's field order, defaults filled in) without validating a pydantic model first; the
event returned and handed to listeners is made from the same dict. ``llm.request`` lines
are written in their compact form (``regista.trace.compact``).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

from regista.errors import TraceExistsError, TraceWriteError, UserError
from regista.redact import default as redact_default
from regista.redact import redact_bytes
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
    """

    def __init__(
        self,
        path: str | Path,
        session_id: str,
        *,
        fsync: bool = False,
        clock: Callable[[], str] | None = None,
        redact: bool | None = None,
    ) -> None:
        self.path = Path(path)
        self.redact = redact_default() if redact is None else redact
        self.clock = clock
        self.session_id = session_id
        self.fsync = fsync
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
        self._seq = 0
        self._size = 0
        self._listeners: list[Any] = []
        self._requests = RequestEncoder()

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
        if self.clock is not None and "ts" not in fields:
            fields["ts"] = self.clock()
        data = _line(event_cls, self.session_id, self._seq, fields)
        try:
            line = self._encode(event_cls, data)
        except TypeError:  # a value orjson does not know (a Path, …), or nested too deep
            event = event_cls(**data)  # a field of the wrong kind is pydantic's to say
            try:
                data = event.model_dump(mode="json")
                line = self._encode(event_cls, data)
            except (TypeError, ValueError, RecursionError):  # past orjson's / pydantic's depth
                raise too_deep_error(str(data.get("type")), self.path) from None
        if self.redact:
            line = redact_bytes(line)
        if too_deep(line, data):
            raise too_deep_error(str(data.get("type")), self.path)
        self._append(line)
        self._seq += 1
        if event_cls is LlmRequestEvent:
            self._requests.commit()
        elif event_cls is ToolResult:
            self._requests.note_result(data["tool_use_id"], data["content"])
        event = _event(event_cls, data)
        for listener in self._listeners:
            listener(event)
        return event

    def _encode(self, event_cls: type[EventBase], data: dict[str, Any]) -> bytes:
        if event_cls is LlmRequestEvent:
            return orjson.dumps(self._requests.encode(data)) + b"\n"
        return orjson.dumps(data) + b"\n"

    def _append(self, line: bytes) -> None:
        view = memoryview(line)
        try:
            while view:  # a raw write may be partial for very large lines
                written = self._file.write(view)
                view = view[written or 0 :]
            if self.fsync:
                os.fsync(self._file.fileno())
        except OSError as exc:
            self._cut_back()
            why = exc.strerror or str(exc)
            raise TraceWriteError(
                f"cannot write the trace {self.path}: {why}; it holds the session up to "
                "the last event that fit"
            ) from None
        self._size += len(line)

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
        self.required = frozenset(
            name for name, f in fields.items() if f.is_required() and name not in _STAMPED
        )
        self.names = frozenset(fields)
        self.width = len(fields)


_STAMPED = ("session_id", "seq")
_SHAPES: dict[type[EventBase], _Shape] = {}


def _line(
    event_cls: type[EventBase], session_id: str, seq: int, fields: dict[str, Any]
) -> dict[str, Any]:
    """The line's dict: every field in the model's order (defaults filled in), then extras.

    The engine's own callers pass fields of the right types, and the reader validates
    every line it loads; a missing required field is left to pydantic to report.
    """
    shape = _SHAPES.get(event_cls) or _SHAPES.setdefault(event_cls, _Shape(event_cls))
    if not shape.required.issubset(fields):
        return event_cls(**fields, session_id=session_id, seq=seq).model_dump(mode="json")
    data = shape.template.copy()
    data.update(fields)  # known keys keep the model's order; extras come last
    data["session_id"] = session_id
    data["seq"] = seq
    if "ts" not in fields:
        data["ts"] = now_ts()
    for name, factory in shape.factories:
        if name not in fields:
            data[name] = factory()  # type: ignore[call-arg]
    return data


def _event(event_cls: type[EventBase], data: dict[str, Any]) -> Any:
    """The event of a line dict, built as ``model_construct`` builds it, without its cost."""
    shape = _SHAPES.get(event_cls) or _SHAPES.setdefault(event_cls, _Shape(event_cls))
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
