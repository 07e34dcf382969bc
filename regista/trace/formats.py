"""Which reader opens a file: formats told apart by their content.

A regista trace, and the session files of other tools that regista can read, are each a
:class:`TraceFormat`: a name, a test on the file's bytes, and for another tool's format a
conversion to a regista trace. :func:`open_run` is the one way to open a file: it detects
the format once and answers with an :class:`OpenedRun`, which reads it as a whole
:class:`~regista.trace.reader.Trace` or as a lazy
:class:`~regista.trace.index.TraceIndex`. A file that no format claims goes to regista's
own reader, whose errors say what is wrong with it.

The importers (Claude Code, Codex, OTLP JSON) join with :func:`register_format` when
:mod:`regista.importers` is imported; this layer never imports them. ``regista.open_run``,
the command line, the server and the debugger import them first, so every entry point
opens every format.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import stat
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import orjson

from regista.errors import NoSuchPathError, TraceError

if TYPE_CHECKING:
    from regista.trace.index import TraceIndex
    from regista.trace.reader import Trace

__all__ = [
    "HEAD_BYTES",
    "REGISTA",
    "OpenedRun",
    "TraceFormat",
    "claiming",
    "compressed_error",
    "device_error",
    "formats",
    "is_pipe",
    "is_regista_event",
    "is_regista_trace",
    "memory_file",
    "open_run",
    "read_head",
    "register_format",
]

#: How many leading bytes tell a regista trace (the rest of it is not read to tell it).
HEAD_BYTES = 64 * 1024


#: A format's conversion: the file's path and bytes to the trace bytes of its main run.
Convert = Callable[[Path, bytes], bytes]
#: A format's lazy index of the file's main run, from its path and bytes (``None``: not
#: read, the file is read as the index needs it).
OpenIndex = Callable[[Path, bytes | None], "TraceIndex"]


@dataclass(frozen=True)
class TraceFormat:
    """One kind of file that regista reads as a trace."""

    #: Short name people see (``regista``, ``claude-code``, …).
    name: str
    #: Whether a file with these bytes is of this format (all of its bytes; a regista
    #: trace is told by its first :data:`HEAD_BYTES`).
    handles_bytes: Callable[[bytes], bool]
    #: The file's bytes made the trace of its main run; ``None`` for regista's own format.
    convert: Convert | None = None
    #: A lazy index of the main run (a viewer draws the first steps while the rest
    #: converts); ``None``: the index of :attr:`convert`'s bytes.
    open_index: OpenIndex | None = None


def is_regista_event(obj: dict[str, object]) -> bool:
    """Whether a decoded line carries the envelope of a regista event."""
    return {"schema_version", "session_id", "seq"} <= obj.keys()


def is_regista_trace(head: bytes) -> bool:
    """Whether ``head`` starts a regista trace: a first line that is a JSON object with the
    envelope (``schema_version``, ``session_id``, ``seq``)."""
    head = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    if head.startswith(b'{"schema_version":'):
        return True
    line, newline, _ = head.partition(b"\n")
    if not newline and len(head) >= HEAD_BYTES:  # a first line longer than the head
        return b'"schema_version"' in line and b'"session_id"' in line
    try:
        first = orjson.loads(line)
    except orjson.JSONDecodeError:
        return False
    return isinstance(first, dict) and is_regista_event(first)


#: regista's own trace format.
REGISTA = TraceFormat("regista", is_regista_trace)

_formats: list[TraceFormat] = [REGISTA]


def register_format(fmt: TraceFormat) -> None:
    """Add a format (or replace the one of the same name). regista's own is asked first."""
    for i, known in enumerate(_formats):
        if known.name == fmt.name:
            _formats[i] = fmt
            return
    _formats.append(fmt)


def formats() -> tuple[TraceFormat, ...]:
    """The registered formats, in the order they are asked."""
    return tuple(_formats)


def read_head(path: str | Path, size: int = HEAD_BYTES) -> bytes:
    """The first ``size`` bytes of ``path`` (empty when it cannot be read, and for a pipe,
    which can be read only once: its reader reads it whole)."""
    if is_pipe(path):
        return b""
    try:
        with open(path, "rb") as f:
            return f.read(size)
    except OSError:
        return b""


def is_pipe(path: str | Path) -> bool:
    """Whether ``path`` is a pipe (``<(zcat trace.jsonl.gz)``): bytes that can be read once,
    from the start, and not looked at first."""
    try:
        return stat.S_ISFIFO(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


#: Leading bytes of compressed files, and the command that prints what they hold.
_COMPRESSED = (
    (b"\x1f\x8b", "gzip", "zcat"),
    (b"\x28\xb5\x2f\xfd", "zstd", "zstdcat"),
    (b"\xfd7zXZ\x00", "xz", "xzcat"),
    (b"BZh", "bzip2", "bzcat"),
    (b"PK\x03\x04", "zip", "unzip -p"),
)


def compressed_error(path: str | Path, head: bytes) -> str | None:
    """What to say of a file whose first bytes ``head`` are a compressed file's (it is read
    through a pipe: ``<(zcat run.jsonl.gz)``); ``None`` for anything else."""
    for magic, kind, command in _COMPRESSED:
        if head.startswith(magic):
            return f"{path}: is {kind}-compressed; give it through a pipe: <({command} {path})"
    return None


def device_error(path: str | Path, fd: int) -> str | None:
    """What to say of the open file ``fd`` when it is a device, not a file (``/dev/zero``
    never ends; a disk is not a trace); ``None`` for a file or a pipe."""
    mode = os.fstat(fd).st_mode
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return f"{path}: is a device, not a trace file"
    return None


def claiming(data: bytes) -> TraceFormat | None:
    """The registered format that claims ``data`` (regista's own is asked first), if any."""
    for fmt in _formats:
        if fmt.handles_bytes(data):
            return fmt
    return None


@dataclass(frozen=True)
class OpenedRun:
    """A file opened as a run: its format, and the bytes already read when it is not a
    regista trace read in place (a pipe's, which can be read only once; another tool's
    session whose first lines did not tell its format)."""

    path: Path
    format: TraceFormat
    #: The file's bytes, when they had to be read whole to tell its format.
    data: bytes | None = field(default=None, repr=False)

    @property
    def in_place(self) -> bool:
        """Whether it is a regista trace that readers open by its path (a file, not a pipe)."""
        return self.data is None and self.format is REGISTA

    def trace_bytes(self) -> bytes:
        """The trace of the main run (another tool's session converted in memory)."""
        data = self.data if self.data is not None else _read_whole(self.path)
        convert = self.format.convert
        return data if convert is None else convert(self.path, data)

    def trace(self, *, messages: bool = True) -> Trace:
        """The run read whole (``messages``: see :meth:`~regista.trace.reader.Trace.load`).

        Raises:
            TraceError: It is not a readable trace (the message says why).
        """
        from regista.trace.reader import Trace

        if self.in_place:
            return Trace.load(self.path, messages=messages)
        return Trace.from_bytes(self.trace_bytes(), self.path, messages=messages)

    def index(self) -> TraceIndex:
        """A lazy index of the run (nothing decoded yet; see
        :class:`~regista.trace.index.TraceIndex`)."""
        from regista.trace.index import TraceIndex

        if self.in_place:
            return TraceIndex(self.path)
        if self.format.open_index is not None:
            return self.format.open_index(self.path, self.data)
        return TraceIndex(memory_file(self.path.name, self.trace_bytes()))


def open_run(path: str | Path) -> OpenedRun:
    """Open ``path`` as a run: a regista trace, a pipe (``<(zcat run.jsonl.gz)``), or a
    session of another tool whose format is registered (Claude Code, Codex, OTLP JSON once
    :mod:`regista.importers` is imported; ``regista.open_run`` imports them).

    The format is told once, from the content, never the name: a regista trace on disk by
    its first line (nothing else is read); another tool's session by its first lines
    when they tell (its conversion reads the rest, as it needs: a transcript of
    gigabytes is never in memory whole); anything else is read whole and each format is
    asked, in order. A file that no format claims, or that
    cannot be read, opens as a regista trace, whose reader says what is wrong with it.

    Raises:
        TraceError: A pipe, or a file that had to be read whole, cannot be read (a device;
            a pipe of compressed bytes).
    """
    path = Path(path)
    piped = is_pipe(path)
    if piped:
        data = _read_whole(path)
        if (compressed := compressed_error(path, data[:8])) is not None:
            raise TraceError(compressed)
    else:
        head = read_head(path)
        if not head or is_regista_trace(head) or compressed_error(path, head) is not None:
            return OpenedRun(path, REGISTA)
        if len(head) >= HEAD_BYTES:
            fmt = claiming(head)
            if fmt is not None and fmt.convert is not None and fmt.open_index is not None:
                return OpenedRun(path, fmt)
        data = head if len(head) < HEAD_BYTES else _read_whole(path)
    fmt = claiming(data)
    if fmt is None or fmt.convert is None:
        fmt = REGISTA
        if not piped:
            return OpenedRun(path, fmt)
    return OpenedRun(path, fmt, data)


def _read_whole(path: Path) -> bytes:
    return read_whole(path, "no such trace file", "is a folder, not a trace file")


def read_whole(path: Path, missing: str, folder: str, size: int = -1) -> bytes:
    """The bytes of a file (``size``: its first ones), with one clear error when it cannot
    be read: ``missing`` and ``folder`` say what it was meant to be (a trace, a transcript)."""
    with reading(path, missing, folder), open(path, "rb") as f:
        if (device := device_error(path, f.fileno())) is not None:
            raise TraceError(device)
        return f.read(size)


@contextlib.contextmanager
def reading(path: Path, missing: str, folder: str) -> Iterator[None]:
    """Reading ``path`` in the block: an error that stops it is one clear
    :class:`TraceError` (:class:`NoSuchPathError` when it does not exist); ``missing``
    and ``folder`` say what it was meant to be (a trace, a transcript)."""
    try:
        yield
    except FileNotFoundError:
        raise NoSuchPathError(f"{path}: {missing}") from None
    except IsADirectoryError:
        raise TraceError(f"{path}: {folder}") from None
    except OSError as exc:
        raise TraceError(f"{path}: cannot read ({exc.strerror})") from None


def memory_file(name: str, data: bytes) -> Path:
    """``data`` in an anonymous in-memory file, readable by its path while this process
    lives (``memfd`` on Linux; elsewhere a temporary file, removed at exit): a pipe's bytes
    or a converted run, for a reader that opens a trace by its path, again and again."""
    memfd = getattr(os, "memfd_create", None)
    if memfd is not None and os.path.isdir("/proc/self/fd"):
        fd = memfd(f"regista-{name}", 0)
        write_all(fd, data)
        return Path(f"/proc/{os.getpid()}/fd/{fd}")
    fd, tmp = tempfile.mkstemp(prefix=f"regista-{name}-", suffix=".jsonl")
    write_all(fd, data)
    os.close(fd)
    atexit.register(_unlink, tmp)
    return Path(tmp)


def write_all(fd: int, data: bytes) -> None:
    """Write all of ``data`` to ``fd`` (``os.write`` may write less)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _unlink(path: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(path)
