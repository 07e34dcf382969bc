"""Converted runs kept in memory, readable as files by the lazy index.

``regista-tui SESSION.jsonl`` converts a transcript without writing anything beside it:
each run's trace bytes live in an anonymous in-memory file (``memfd`` on Linux; elsewhere
a temporary file, removed at exit) that :class:`~regista.trace.index.TraceIndex` reads
like any trace. The runs of one conversion (a session and its subagents) stay findable by
session id, so a viewer can open a subagent's run from the step that started it.

A Claude Code transcript is streamed (:meth:`InMemoryRuns.stream`): its main run's trace
is written out as the conversion makes it, and :class:`StreamedIndex` converts more each
time it is asked to scan, so a viewer draws the first steps while the rest converts, as it
follows a trace that is still being written. The subagents' runs are kept once the whole
transcript is converted (asking for one finishes the conversion first).
"""

from __future__ import annotations

import atexit
import contextlib
import os
import tempfile
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from regista.errors import TraceError
from regista.importers._builder import RunEncoder
from regista.importers._common import Conversion
from regista.trace.index import TraceIndex

if TYPE_CHECKING:
    from regista.importers.claude_code import Job

__all__ = ["RUNS", "InMemoryRuns", "StreamedIndex", "Streaming"]

#: Transcript lines converted between two writes of the trace.
_LINES = 256


#: A converted run: the transcript it came from, and its session id.
_Key = tuple[Path, str]


class InMemoryRuns:
    """The in-memory trace file of every run converted in this process.

    Runs are kept by the transcript they came from and their session id: two transcripts
    can hold the same session id (a copy, a session resumed into another file), and a
    transcript converted again (it grew) replaces what an earlier conversion kept.
    """

    def __init__(self) -> None:
        self._files: dict[_Key, Path] = {}
        #: The transcript of each readable path handed out (a subagent is looked up among
        #: the runs of the same transcript as the run that started it).
        self._source_of_path: dict[Path, Path] = {}
        #: Runs of a streamed conversion that is not done yet.
        self._pending: dict[_Key, Streaming] = {}
        self._streams: dict[_Key, Streaming] = {}
        self._fds: list[int] = []
        self._lock = threading.Lock()

    def add(self, conv: Conversion) -> Path:
        """Keep every run of ``conv``; returns the main run's readable path."""
        with self._lock:
            for run in conv.runs:
                self._keep((conv.source, run.session_id), run.to_bytes())
            return self._files[(conv.source, conv.main.session_id)]

    def stream(self, job: Job) -> StreamedIndex:
        """An index of ``job``'s main run, converted as the index scans.

        Nothing is converted yet: the index's first :meth:`~StreamedIndex.scan` starts.
        An index of the same transcript still open shares its conversion.
        """
        key = (job.source, job.main_sid)
        with self._lock:
            streaming = self._streams.get(key)
            if streaming is None or streaming.stamp != _stamp(job.source):
                path = self._materialize(job.main_sid, b"")
                streaming = self._streams[key] = Streaming(job, path, self)
                self._files[key] = path
                self._source_of_path[path] = job.source
                for _, sub_sid, _, _ in job.todo[1:]:
                    self._pending[(job.source, sub_sid)] = streaming
            streaming.users += 1
        return StreamedIndex(streaming)

    def _forget(self, streaming: Streaming) -> None:
        """A conversion given up before it was done: the next open starts afresh."""
        with self._lock:
            key = (streaming.job.source, streaming.job.main_sid)
            if self._streams.get(key) is streaming:
                del self._streams[key]
                self._files.pop(key, None)
            for k in [k for k, v in self._pending.items() if v is streaming]:
                del self._pending[k]

    def _finished(self, conv: Conversion) -> None:
        """A streamed conversion is done: keep its subagents' runs."""
        with self._lock:
            for run in conv.runs[1:]:
                key = (conv.source, run.session_id)
                self._pending.pop(key, None)
                self._keep(key, run.to_bytes())

    def _keep(self, key: _Key, data: bytes) -> None:
        path = self._materialize(key[1], data)
        self._files[key] = path
        self._source_of_path[path] = key[0]

    def path_of(self, session_id: str, beside: Path) -> Path | None:
        """The readable path of the run ``session_id`` converted from the same transcript
        as the run read at ``beside`` (the transcript, or a converted run's path), if this
        process converted it (a run of a transcript still converting: once the conversion
        is done)."""
        # A viewer names a transcript's run by the transcript, a subagent's by its own path.
        key = (self._source_of_path.get(beside, beside), session_id)
        pending = self._pending.get(key)
        if pending is not None:
            pending.finish()
        return self._files.get(key)

    def keep(self, name: str, data: bytes) -> Path:
        """``data`` in an in-memory file of its own, readable by path while this process
        lives (a pipe's bytes, which can be read only once, for a viewer that reads its
        trace many times)."""
        with self._lock:
            return self._materialize(name, data)

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


class Streaming:
    """A transcript converted into an in-memory trace file a piece at a time.

    Args:
        job: The conversion (:class:`regista.importers.claude_code.Job`).
        path: The in-memory file its main run is written to.
        runs: Told when the whole conversion is done.
    """

    def __init__(self, job: Job, path: Path, runs: InMemoryRuns) -> None:
        self.job = job
        self.path = path
        #: The transcript's size and time when the conversion began: one that changed
        #: since is converted again when it is opened again.
        self.stamp = _stamp(job.source)
        self._runs = runs
        self._fd = os.open(path, os.O_WRONLY | os.O_APPEND)
        self._written = 0  # main-run events written out
        self._encoder = RunEncoder(job.main_sid)
        self._lock = threading.Lock()
        self.done = False
        #: Indexes reading it; the last one closed before the end gives the conversion up.
        self.users = 0

    def release(self) -> None:
        """An index reading it was closed."""
        with self._lock:
            self.users -= 1
            if self.users > 0 or self.done:
                return
            self.done = True  # nothing converts it any more
            os.close(self._fd)
        self._runs._forget(self)

    def pump(self, min_bytes: int) -> bool:
        """Convert until at least ``min_bytes`` more of the trace are written (or the
        conversion is done); returns whether it is done."""
        with self._lock:
            produced = 0
            while not self.done and produced < min_bytes:
                finished = self.job.advance(_LINES)
                produced += self._write_new()
                if finished:
                    self.done = True
                    os.close(self._fd)
                    self._runs._finished(self.job.conv)
            return self.done

    def finish(self) -> None:
        """Convert everything that is left."""
        self.pump(1 << 62)

    def _write_new(self) -> int:
        runs = self.job.conv.runs
        if not runs:
            return 0
        events = runs[0].events
        new = events[self._written :]
        if not new:
            return 0
        self._written = len(events)
        data = self._encoder.encode(new)
        _write_all(self._fd, data)
        return len(data)


class StreamedIndex(TraceIndex):
    """A :class:`TraceIndex` of a trace that is converted as it is scanned.

    Each :meth:`scan` first converts about as much as it is asked to index, so the scan
    that builds the first screen converts only the start of the transcript; the scan
    reports the end of the file only once the conversion is done. Until the main run is
    converted, ``size`` is an estimate of the converted trace's size (from how much of the
    transcript is converted), so ``scanned < size`` says there is more to come.
    """

    def __init__(self, streaming: Streaming) -> None:
        super().__init__(streaming.path)
        self.streaming = streaming
        self._released = False

    def close(self) -> None:
        super().close()
        if not self._released:
            self._released = True
            self.streaming.release()

    def scan(self, max_bytes: int | None = None) -> bool:
        budget = max_bytes if max_bytes is not None else 1 << 62
        streaming = self.streaming
        if not streaming.done:
            ahead = os.fstat(self._fd).st_size - self.scanned
            if ahead < budget:
                try:
                    streaming.pump(budget - ahead)
                except OSError as exc:  # the in-memory file could not be written
                    raise TraceError(
                        f"{streaming.job.source}: could not convert ({exc.strerror or exc})"
                    ) from None
        converted = streaming.done  # read before the scan: then it sees every byte
        reached_end = super().scan(max_bytes)
        progress = streaming.job.main_progress
        if progress < 1.0:
            # ``size`` is what the trace will be: a viewer shows how far it has read, and
            # keeps scanning until the conversion is done.
            self.size = max(self.size + 1, int(self.size / max(progress, 1e-3)))
        return reached_end and converted


def _stamp(path: Path) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_size, st.st_mtime_ns


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _unlink(path: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(path)


#: The process-wide store (the viewer is one process).
RUNS = InMemoryRuns()
