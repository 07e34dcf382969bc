"""Converted runs kept in memory, readable as files by the lazy index.

``regista-tui SESSION.jsonl`` converts a transcript without writing anything beside it:
each run's trace bytes live in an anonymous in-memory file
(:func:`~regista.trace.formats.memory_file`) that :class:`~regista.trace.index.TraceIndex` reads
like any trace. The runs of one conversion (a session and its subagents) stay findable by
session id, so a viewer can open a subagent's run from the step that started it.

A Claude Code transcript or a Codex rollout is streamed (:meth:`InMemoryRuns.stream`): its
main run's trace
is written out as the conversion makes it, and :class:`StreamedIndex` converts more
each time it is asked to scan, so a viewer draws the first steps while the rest converts, as it
follows a trace that is still being written. The subagents' runs are kept once the whole
transcript is converted (asking for one finishes the conversion first).

A transcript written less than :data:`LIVE_S` ago is a session still going on
(:func:`follow`): its run is written without a ``session.end``, and each time the
index scans a transcript that grew, the lines appended since (and only those) are
converted and their events appended, so a viewer follows it as it follows a trace being
written. A model answer still being written (its lines have no stop reason yet) is held
back until its last line comes (a Codex answer, until its token count); a run's
``session.start`` is that of its first conversion. A Claude Code subagent that starts while
the session is followed is linked to the step that started it, and its run is converted
and followed as it grows, in an in-memory file of its own (see
:mod:`regista.importers._cc_follow`); a viewer opens it with :func:`followed_index`.
"""

from __future__ import annotations

import os
import threading
import time
import warnings
from pathlib import Path
from typing import TYPE_CHECKING

from regista.errors import TraceError, TranscriptWarning
from regista.importers._builder import RunEncoder
from regista.importers._common import Conversion

if TYPE_CHECKING:
    from regista.importers._common import PieceJob
from regista.trace.formats import memory_file, write_all
from regista.trace.index import TraceIndex
from regista.trace.names import SESSION_END

__all__ = [
    "LIVE_S",
    "RUNS",
    "InMemoryRuns",
    "StreamedIndex",
    "Streaming",
    "follow",
    "followed_index",
]

#: Transcript lines converted between two writes of the trace.
_LINES = 256
#: A transcript written this recently when it is opened is a session still going on: it is
#: followed as it grows (the same span after which a trace with no end is called stale).
LIVE_S = 60.0


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
        self._digests: dict[_Key, int] = {}
        #: The conversion that writes each run converted as its transcript grows.
        self._followers: dict[Path, Streaming] = {}
        self._lock = threading.Lock()

    def add(self, conv: Conversion) -> Path:
        """Keep every run of ``conv``; returns the main run's readable path."""
        with self._lock:
            for run in conv.runs:
                self._keep((conv.source, run.session_id), run.to_bytes())
            return self._files[(conv.source, conv.main.session_id)]

    def stream(self, job: PieceJob, *, live: bool = False) -> StreamedIndex:
        """An index of ``job``'s main run, converted as the index scans.

        Nothing is converted yet: the index's first :meth:`~StreamedIndex.scan` starts.
        An index of the same transcript still open shares its conversion. ``live``: the
        transcript is still being written, and is followed (see the module's docstring).
        """
        key = (job.source, job.main_sid)
        with self._lock:
            streaming = self._streams.get(key)
            if streaming is None or streaming.stamp != _stamp(job.source) or streaming.live != live:
                path = memory_file(job.main_sid, b"")
                streaming = self._streams[key] = Streaming(job, path, self, live=live)
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

    def _finished(self, conv: Conversion, followed: frozenset[str] = frozenset()) -> None:
        """A streamed conversion is done (or a followed one converted again): keep its
        subagents' runs (a run that did not change keeps its file; one followed as it grows
        is written by the conversion, see :meth:`Streaming._write_followed`)."""
        with self._lock:
            for run in conv.runs[1:]:
                if run.session_id in followed:
                    continue
                key = (conv.source, run.session_id)
                self._pending.pop(key, None)
                data = run.to_bytes()
                digest = hash(data)
                if self._digests.get(key) != digest:
                    self._digests[key] = digest
                    self._keep(key, data)

    def _follows(self, key: _Key, path: Path, streaming: Streaming) -> None:
        """The run ``key`` is written into ``path`` by ``streaming`` as it grows."""
        with self._lock:
            self._files[key] = path
            self._source_of_path[path] = key[0]
            self._followers[path] = streaming

    def follower(self, path: Path) -> Streaming | None:
        """The followed conversion that writes the run at ``path``, if one does."""
        return self._followers.get(path)

    def _keep(self, key: _Key, data: bytes) -> None:
        path = memory_file(key[1], data)
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


class Streaming:
    """A transcript converted into an in-memory trace file a piece at a time.

    Args:
        job: The conversion (a :class:`~regista.importers._common.PieceJob`).
        path: The in-memory file its main run is written to.
        runs: Told when the whole conversion is done.
        live: The transcript is still being written: no ``session.end``, and
            :meth:`regrow` converts what it grew by.
    """

    def __init__(
        self,
        job: PieceJob,
        path: Path,
        runs: InMemoryRuns,
        *,
        live: bool = False,
    ) -> None:
        self.job = job
        self.live = live
        self.path = path
        #: The transcript's size and time when the conversion began: one that changed
        #: since is converted again when it is opened again.
        self.stamp = _stamp(job.source)
        self._runs = runs
        self._fd = os.open(path, os.O_WRONLY | os.O_APPEND)
        self._written = 0  # main-run events written out
        self._encoder = RunEncoder(job.main_sid)
        #: Each followed run's in-memory file (its descriptor: -1 once it ended).
        self._followed: dict[str, tuple[int, RunEncoder]] = {}
        self._watch = self.watch_stamp()
        self._lock = threading.Lock()
        self.done = False
        #: Indexes reading it; the last one closed before the end gives the conversion up.
        self.users = 0

    def release(self) -> None:
        """An index reading it was closed."""
        with self._lock:
            self.users -= 1
            if self.users > 0:
                return
            if self.done:
                if self.live and self._fd >= 0:  # nothing follows it any more
                    os.close(self._fd)
                    self._fd = -1
                    self._close_followed()
                return
            self.done = True  # nothing converts it any more
            os.close(self._fd)
            self._fd = -1
            self._close_followed()
        self._runs._forget(self)

    def pump(self, min_bytes: int) -> bool:
        """Convert until at least ``min_bytes`` more of the trace are written (or the
        conversion is done); returns whether it is done."""
        with self._lock:
            produced = 0
            while not self.done and produced < min_bytes:
                finished = self.job.advance(_LINES)
                produced += self._write_new(finished)
                if finished:
                    self.done = True
                    if not self.live:
                        os.close(self._fd)
                        self._fd = -1
                    followed = frozenset(run.session_id for run in self.job.followed)
                    self._runs._finished(self.job.conv, followed)
            return self.done

    def regrow(self) -> bool:
        """Convert a followed transcript again if it grew, and append what is new;
        returns whether anything was appended."""
        with self._lock:
            stamp = _stamp(self.job.source)
            watch = self.watch_stamp()
            if not self.live or not self.done or self._fd < 0 or watch == self._watch:
                return False
            self.stamp, self._watch = stamp, watch
            self.job.grow()  # converts only what was appended
            return self._write_new(True) > 0

    def watch_stamp(self) -> tuple[tuple[int, int] | None, ...]:
        """The size and time of the transcript and of the other files its growth converts
        (a followed subagent's): one that changed means :meth:`regrow` has work."""
        return (_stamp(self.job.source), *(_stamp(p) for p in self.job.watched()))

    def finish(self) -> None:
        """Convert everything that is left."""
        self.pump(1 << 62)

    def _write_new(self, finished: bool = False) -> int:
        runs = self.job.conv.runs
        if not runs:
            return 0
        builder = runs[0].builder
        assert builder is not None  # made a piece at a time: hands out what is new
        events = builder.events
        upto = len(events)
        if self.live and upto and events[-1].get("type") == SESSION_END:
            upto -= 1  # the session goes on (an answer still being written is held back)
        new = builder.take(upto)
        self._written += len(new)
        written = self._write_followed()
        if not new:
            return written
        data = self._encoder.encode(new)
        write_all(self._fd, data)
        return len(data) + written

    def _close_followed(self) -> None:
        for sid, (fd, encoder) in list(self._followed.items()):
            if fd >= 0:
                os.close(fd)
                self._followed[sid] = (-1, encoder)

    def _write_followed(self) -> int:
        """Append the new events of the runs started as the transcript grew."""
        n = 0
        for run in self.job.followed:
            out = self._followed.get(run.session_id)
            if out is None:
                path = memory_file(run.session_id, b"")
                out = (os.open(path, os.O_WRONLY | os.O_APPEND), RunEncoder(run.session_id))
                self._followed[run.session_id] = out
                self._runs._follows((self.job.source, run.session_id), path, self)
            fd, encoder = out
            if fd < 0 or run.builder is None:
                continue
            new = run.builder.take()
            if new:
                data = encoder.encode(new)
                write_all(fd, data)
                n += len(data)
                if new[-1].get("type") == SESSION_END:
                    os.close(fd)
                    self._followed[run.session_id] = (-1, encoder)
        return n


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

    @property
    def follows(self) -> bool:
        """The transcript is a session still going on: followed, with no end written."""
        return self.streaming.live

    def watch_stamp(self) -> tuple[tuple[int, int] | None, ...]:
        """What a viewer checks to know the run may have grown (see
        :meth:`Streaming.watch_stamp`)."""
        return self.streaming.watch_stamp()

    def close(self) -> None:
        super().close()
        if not self._released:
            self._released = True
            self.streaming.release()

    def scan(self, max_bytes: int | None = None) -> bool:
        budget = max_bytes if max_bytes is not None else 1 << 62
        streaming = self.streaming
        if streaming.done and streaming.live:
            try:
                streaming.regrow()
            except (OSError, TraceError) as exc:  # gone, or cut short while it was read
                raise TraceError(f"{streaming.job.source}: could not follow it ({exc})") from None
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


class FollowedRunIndex(TraceIndex):
    """A :class:`TraceIndex` of a run started while its transcript was followed (a
    subagent's): each scan first converts what its transcripts grew by."""

    def __init__(self, streaming: Streaming, path: Path) -> None:
        super().__init__(path)
        self.streaming = streaming

    @property
    def follows(self) -> bool:
        return True

    def watch_stamp(self) -> tuple[tuple[int, int] | None, ...]:
        return (_stamp(self.path), *self.streaming.watch_stamp())

    def scan(self, max_bytes: int | None = None) -> bool:
        try:
            self.streaming.regrow()
        except (OSError, TraceError) as exc:  # gone, or cut short while it was read
            raise TraceError(f"{self.streaming.job.source}: could not follow it ({exc})") from None
        return super().scan(max_bytes)


def followed_index(path: Path) -> FollowedRunIndex | None:
    """An index of the run at ``path`` that follows it, if it is a run converted as its
    transcript grows (else ``None``: open it as any trace)."""
    streaming = RUNS.follower(Path(path))
    return None if streaming is None else FollowedRunIndex(streaming, Path(path))


def follow(path: Path, data: bytes | None, fmt: str | None) -> StreamedIndex | None:
    """An index that follows the transcript ``path`` (its bytes ``data``, format
    ``fmt``) if it was written less than :data:`LIVE_S` ago; else ``None``."""
    if fmt not in ("claude-code", "codex"):
        return None
    try:
        age = time.time() - os.stat(path).st_mtime
    except OSError:
        return None
    if age >= LIVE_S:
        return None
    from regista.importers import piece_job

    job: PieceJob = piece_job(fmt)(Path(path), data, live=True)
    for file, lineno, msg in job.conv.report.bad_lines:  # as a finished one says them
        warnings.warn(f"{file}:{lineno}: skipped: {msg}", TranscriptWarning, stacklevel=2)
    return RUNS.stream(job, live=True)


def _stamp(path: Path) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_size, st.st_mtime_ns


#: The process-wide store (the viewer is one process).
RUNS = InMemoryRuns()
