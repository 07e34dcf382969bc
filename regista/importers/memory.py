"""Converted runs kept in memory, readable as files by the lazy index.

``regista-tui SESSION.jsonl`` converts a transcript without writing anything beside it:
each run's trace bytes live in an anonymous in-memory file (``memfd`` on Linux; elsewhere
a temporary file, removed at exit) that :class:`~regista.trace.index.TraceIndex` reads
like any trace. The runs of one conversion (a session and its subagents) stay findable by
session id, so a viewer can open a subagent's run from the step that started it.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import tempfile
import threading
from pathlib import Path

from regista.importers._common import Conversion

__all__ = ["RUNS", "InMemoryRuns"]


class InMemoryRuns:
    """Session id → in-memory trace file of every run converted in this process."""

    def __init__(self) -> None:
        self._files: dict[str, Path] = {}
        self._sources: dict[str, Path] = {}
        self._fds: list[int] = []
        self._lock = threading.Lock()

    def add(self, conv: Conversion) -> Path:
        """Keep every run of ``conv``; returns the main run's readable path."""
        with self._lock:
            for run in conv.runs:
                if run.session_id not in self._files:
                    self._files[run.session_id] = self._materialize(run.session_id, run.to_bytes())
                    self._sources[run.session_id] = conv.source
            return self._files[conv.main.session_id]

    def path_of(self, session_id: str) -> Path | None:
        """The readable path of a converted run, if this process converted it."""
        return self._files.get(session_id)

    def source_of(self, session_id: str) -> Path | None:
        """The transcript a converted run came from."""
        return self._sources.get(session_id)

    def _materialize(self, name: str, data: bytes) -> Path:
        memfd = getattr(os, "memfd_create", None)
        if memfd is not None and os.path.isdir("/proc/self/fd"):
            fd = memfd(f"regista-{name}", 0)
            self._fds.append(fd)
            _write_all(fd, data)
            return Path(f"/proc/{os.getpid()}/fd/{fd}")
        fd, tmp = tempfile.mkstemp(prefix=f"regista-{name}-", suffix=".jsonl")
        _write_all(fd, data)
        os.close(fd)
        atexit.register(_unlink, tmp)
        return Path(tmp)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _unlink(path: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(path)


#: The process-wide store (the viewer is one process).
RUNS = InMemoryRuns()
