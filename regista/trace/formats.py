"""Which reader opens a file: formats told apart by their first bytes.

A regista trace, and the session files of other tools that regista can read, are each a
:class:`TraceFormat`: a name, a test on the file's first bytes and a loader. :func:`detect_format`
asks the registered formats in order and answers with the first that claims the file; a file
that none claims goes to regista's own reader, whose errors say what is wrong with it. Readers
of other formats join with :func:`register_format`.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import orjson

if TYPE_CHECKING:
    from regista.trace.reader import Trace

__all__ = [
    "HEAD_BYTES",
    "REGISTA",
    "TraceFormat",
    "compressed_error",
    "detect_format",
    "device_error",
    "formats",
    "is_pipe",
    "is_regista_trace",
    "load_any",
    "read_head",
    "register_format",
]

#: How many leading bytes a format's test sees.
HEAD_BYTES = 64 * 1024


@dataclass(frozen=True)
class TraceFormat:
    """One kind of file that regista reads as a trace."""

    #: Short name people see (``regista``, ``claude-code``, …).
    name: str
    #: Whether a file starting with these bytes (at most :data:`HEAD_BYTES`) is of this format.
    handles_bytes: Callable[[bytes], bool]
    #: Reads the file as a :class:`~regista.trace.reader.Trace`.
    load: Callable[[Path], Trace]


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
    return isinstance(first, dict) and {"schema_version", "session_id", "seq"} <= first.keys()


def _load_regista(path: Path) -> Trace:
    from regista.trace.reader import Trace

    return Trace.load(path)


#: regista's own trace format.
REGISTA = TraceFormat("regista", is_regista_trace, _load_regista)

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


def detect_format(path: str | Path) -> TraceFormat:
    """The format whose reader opens ``path``.

    A file that no format claims (missing, empty, a folder, or unknown bytes) gets
    regista's own reader, so that its error names the problem.
    """
    head = read_head(path)
    if head:
        for fmt in _formats:
            if fmt.handles_bytes(head):
                return fmt
    return REGISTA


def load_any(path: str | Path) -> Trace:
    """Read ``path`` with the reader of its format (see :func:`detect_format`)."""
    path = Path(path)
    return detect_format(path).load(path)
