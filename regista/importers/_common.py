"""What every importer shares: reading JSON lines and the result of a conversion."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Generator, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

import orjson

from regista.errors import TraceError
from regista.importers._builder import ImportReport, events_bytes
from regista.trace.formats import device_error, reading
from regista.trace.validate import MAX_DEPTH, deeper

if TYPE_CHECKING:
    from regista.importers._builder import RunBuilder, RunEncoder

__all__ = [
    "TOO_DEEP",
    "Conversion",
    "ImportedRun",
    "JsonLinesFile",
    "PieceJob",
    "iter_json_file",
    "iter_json_lines",
    "read_json_file",
    "read_json_lines",
    "read_source",
    "record_report",
    "report_of",
]


@dataclass
class ImportedRun:
    """One run made from a transcript (a session, or one of its subagents).

    Attributes:
        session_id: The derived (stable) regista session id.
        events: The trace's events as dicts, in ``seq`` order (those not written out yet,
            for a run written as it is converted).
        parent: ``{"session_id", "step", "tool_use_id"}`` of the step that started it.
        builder: The builder that makes it, when it is made a piece at a time.
        spooled: The file its trace was written to as it was converted (see
            :meth:`spool`); ``None``: its events are all in ``events``.
    """

    session_id: str
    events: list[dict[str, Any]]
    parent: dict[str, Any] | None = None
    builder: RunBuilder | None = field(default=None, repr=False)
    spooled: Path | None = None
    _out: tuple[BinaryIO, RunEncoder] | None = field(default=None, repr=False)
    _start: dict[str, Any] | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if self.events:
            self._start = self.events[0]

    @property
    def start(self) -> dict[str, Any]:
        """Its ``session.start`` event (kept when the others were written out)."""
        return self._start if self._start is not None else self.events[0]

    @property
    def steps(self) -> int:
        """Its steps (model calls, tool calls, compactions), as its ``session.end`` (the
        builder's :meth:`~regista.importers._builder.RunBuilder.finish`) counts them."""
        if self.builder is not None:
            return self.builder.step
        return int(self.events[-1]["steps"])

    def to_bytes(self) -> bytes:
        if self.spooled is not None:
            return self.spooled.read_bytes()
        return events_bytes(self.events)

    def write_to(self, f: BinaryIO, chunk: int = 256) -> int:
        """Write the trace to ``f`` a few events at a time (a 1 GB trace is never one
        bytes object in memory); the bytes written, the same as :meth:`to_bytes`'s."""
        from regista.importers._builder import RunEncoder

        if self.spooled is not None:
            with open(self.spooled, "rb") as src:
                return _copy(src, f)
        if not self.events:
            return 0
        enc = RunEncoder(str(self.events[0]["session_id"]))
        n = 0
        for i in range(0, len(self.events), chunk):
            data = enc.encode(self.events[i : i + chunk])
            f.write(data)
            n += len(data)
        return n

    def spool(self, folder: Path, n: int) -> None:
        """Write the trace into a temporary file of ``folder`` from now on, as
        :meth:`write_out` is called: the events written are no longer kept."""
        from regista.importers._builder import RunEncoder

        self.spooled = folder / f".{self.session_id}.jsonl.{os.getpid()}.{n}.tmp"
        self._out = (open(self.spooled, "wb"), RunEncoder(self.session_id))  # noqa: SIM115

    def write_out(self, *, final: bool = False) -> None:
        """Write the events made since the last call to the spooled file (``final``: the
        run is complete, the file is closed)."""
        if self._out is None:
            return
        f, encoder = self._out
        events = self.builder.take() if self.builder is not None else self.events
        if events:
            f.write(encoder.encode(events))
        if self.builder is None:
            self.events = []
        if final:
            f.close()
            self._out = None

    def unspool(self) -> None:
        """Remove the spooled file (a conversion given up)."""
        if self._out is not None:
            self._out[0].close()
            self._out = None
        if self.spooled is not None:
            with contextlib.suppress(OSError):
                os.unlink(self.spooled)


class PieceJob:
    """A transcript's conversion done a piece at a time, run after run, each run's events
    handed out as they are made (and written out, with ``into``): what the Claude Code
    and Codex conversions share.

    A format reads the transcript first (:meth:`_start`: it makes :attr:`conv` and
    :attr:`todo`, one ``(key, session id, …)`` per run, the main run first, parents before
    children) and says how to start a run (:meth:`_open`: it adds the run to
    ``conv.runs`` and returns its steps, one per transcript line converted).

    Args:
        path: The transcript.
        data: Its bytes, when already read (a pipe's).
        subagents: Also convert its subagents' transcripts.
        into: Write each run's trace into this folder as it is made (a temporary file per
            run, :attr:`ImportedRun.spooled`), keeping none of its events.
        live: The transcript is being written: the main run is left open (no
            ``session.end``), and :meth:`grow` converts the lines appended since.

    Attributes:
        conv: The conversion; ``conv.runs[0]`` (the main run) grows as the job advances.
        done: Every run is converted.
    """

    conv: Conversion
    todo: list[Any]

    def __init__(
        self,
        path: Path,
        data: bytes | None = None,
        *,
        subagents: bool = True,
        into: Path | None = None,
        live: bool = False,
    ) -> None:
        if live and data is not None:  # a last line still being written is read later
            data = data[: data.rfind(b"\n") + 1]
        self.into = into
        self.live = live
        self.done = False
        #: Runs started after the first conversion (a subagent that began while the
        #: transcript was followed), converted as their transcripts grow; each is complete
        #: once its ``session.end`` is made.
        self.followed: list[ImportedRun] = []
        self._next = 0
        self._main_done = 0  # lines of the main run converted
        self._current: Iterator[None] | None = None
        self._start(Path(path), data, subagents)

    def _start(self, path: Path, data: bytes | None, subagents: bool) -> None:
        """Read the transcript: make :attr:`conv` and :attr:`todo`."""
        raise NotImplementedError

    @property
    def source(self) -> Path:
        return self.conv.source

    @property
    def main_sid(self) -> str:
        return str(self.todo[0][1])

    @property
    def main_progress(self) -> float:
        """How much of the main run is converted, from 0 to 1."""
        if self._next > 0:
            return 1.0
        return min(self._main_done / max(self._main_lines(), 1), 1.0)

    def _main_lines(self) -> int:
        """How many lines the main run's conversion reads."""
        raise NotImplementedError

    def _open(self, n: int) -> Iterator[None]:
        """Start the run ``todo[n]`` (added to ``conv.runs``); its steps."""
        raise NotImplementedError

    def _closed(self, n: int) -> None:
        """The run ``todo[n]`` is converted."""

    def _ended(self) -> None:
        """Every run is converted."""

    def grow(self) -> None:
        """Convert what a transcript being written was appended since it was last read."""
        raise NotImplementedError

    def watched(self) -> list[Path]:
        """Other files whose growth :meth:`grow` converts (a followed subagent's)."""
        return []

    def _spoolable(self, run: ImportedRun) -> bool:
        """Whether ``run`` may be written out as it is made (its start is final)."""
        return True

    def advance(self, lines: int) -> bool:
        """Convert about ``lines`` more transcript lines; returns :attr:`done`."""
        while lines > 0 and not self.done:
            if self._current is None:
                self._current = self._open(self._next)
                run = self.conv.runs[-1]
                if self.into is not None and self._spoolable(run):
                    run.spool(self.into, len(self.conv.runs) - 1)
            for _ in self._current:
                lines -= 1
                if self._next == 0:
                    self._main_done += 1
                if lines <= 0:
                    break
            else:
                self._closed(self._next)
                self._current = None
                self._next += 1
                if self._next == len(self.todo):
                    self._ended()
                    self.done = True
        if self.into is not None:
            last = len(self.conv.runs) - 1
            for n, run in enumerate(self.conv.runs):
                if self.done and run.spooled is None:
                    run.spool(self.into, n)
                run.write_out(final=n < last or self._current is None)
        return self.done

    def finish(self) -> Conversion:
        """Convert what is left; the whole conversion."""
        while not self.done:
            self.advance(1 << 30 if self.into is None else _WRITE_EVERY)
        return self.conv

    def discard(self) -> None:
        """Remove what was written into ``into`` (a conversion given up)."""
        for run in self.conv.runs:
            run.unspool()


#: Transcript lines converted between two writes of the runs (the events between two
#: writes are a conversion's largest piece of memory).
_WRITE_EVERY = 256


def _copy(src: BinaryIO, dst: BinaryIO) -> int:
    n = 0
    while block := src.read(1 << 20):
        dst.write(block)
        n += len(block)
    return n


@dataclass
class Conversion:
    """A transcript converted: the main run first, then its subagents' runs."""

    format: str
    source: Path
    runs: list[ImportedRun] = field(default_factory=list)
    report: ImportReport = field(default_factory=ImportReport)

    @property
    def main(self) -> ImportedRun:
        return self.runs[0]

    def run(self, session_id: str) -> ImportedRun | None:
        for r in self.runs:
            if r.session_id == session_id:
                return r
        return None


def read_source(path: Path, size: int = -1) -> bytes:
    """The bytes of a transcript (``size``: its first ones), with one clear error when it
    cannot be read."""
    from regista.trace.formats import read_whole

    return read_whole(path, "no such file", "is a directory, not a transcript file", size)


def session_files(paths: Iterable[Path], in_folder: Callable[[Path], list[Path]]) -> list[Path]:
    """The transcripts of ``paths``: a file (or a pipe) as given, those of a folder as
    ``in_folder`` finds them.

    Raises:
        FileNotFoundError: A path that does not exist.
    """
    out: list[Path] = []
    for p in paths:
        p = Path(p)
        if p.is_file() or (p.exists() and not p.is_dir()):  # a pipe too; a device is refused
            out.append(p)
        elif p.is_dir():
            out.extend(in_folder(p))
        else:
            raise FileNotFoundError(p)
    return out


#: What a skipped line that nests too deep is reported as.
TOO_DEEP = f"a value nested more than {MAX_DEPTH} levels deep"


_BLOCK = 8 << 20


def read_json_file(path: Path, report: ImportReport) -> list[tuple[int, dict[str, Any]]]:
    """:func:`read_json_lines` of the file ``path`` (see :func:`iter_json_file`)."""
    return list(iter_json_file(path, report))


def iter_json_file(
    path: Path, report: ImportReport, wanted: bytearray | None = None
) -> Iterator[tuple[int, dict[str, Any]]]:
    """:func:`iter_json_lines` of the file ``path``, read a block at a time: only the
    block being read is in memory, never the whole file (a transcript may be gigabytes)."""
    return JsonLinesFile(path, report, wanted).read()


class JsonLinesFile:
    """A JSON-lines file read a block at a time, from where the last :meth:`read` ended
    (a file being written is read again as it grows)."""

    def __init__(self, path: Path, report: ImportReport, wanted: bytearray | None = None) -> None:
        self.path = path
        self.report = report
        self.wanted = wanted
        #: Where the next read starts: the bytes and lines read so far.
        self.offset = 0
        self.lineno = 0

    def read(self, *, last: bool = True) -> Iterator[tuple[int, dict[str, Any]]]:
        """:func:`iter_json_lines` of what follows; ``last=False``: a last line with no
        newline is left for the next read (it is still being written)."""
        path = self.path
        missing, folder = "no such file", "is a directory, not a transcript file"
        with reading(path, missing, folder), open(path, "rb") as f:
            if (device := device_error(path, f.fileno())) is not None:
                raise TraceError(device)
            f.seek(self.offset)
            rest = b""
            while True:
                block = f.read(_BLOCK)
                if not block:
                    if rest and last:
                        yield from iter_json_lines(
                            rest, path, self.report, self.lineno, self.wanted
                        )
                        self.offset += len(rest)
                    return
                buf = rest + block if rest else block
                cut = buf.rfind(b"\n") + 1
                if cut == 0:
                    rest = buf
                    continue
                rest = buf[cut:]
                # the lines counted as they are read (``bytes.count`` is no faster than that);
                # the block's whole lines read in place (not copied out first)
                self.lineno = yield from iter_json_lines(
                    buf, path, self.report, self.lineno, self.wanted, stop=cut
                )
                del buf
                self.offset += cut


def read_json_lines(
    data: bytes, path: Path, report: ImportReport, first: int = 0
) -> list[tuple[int, dict[str, Any]]]:
    """The JSON objects of a JSON-lines file (see :func:`iter_json_lines`)."""
    return list(iter_json_lines(data, path, report, first))


def iter_json_lines(
    data: bytes,
    path: Path,
    report: ImportReport,
    first: int = 0,
    wanted: bytearray | None = None,
    stop: int | None = None,
) -> Generator[tuple[int, dict[str, Any]], None, int]:
    """The JSON objects of a JSON-lines file with their (1-based) line numbers; returns
    the number of the last line (``first`` and the lines of ``data``).

    A line that is not a JSON object, or that nests values more than
    :data:`~regista.trace.validate.MAX_DEPTH` levels deep, is reported with its number and
    skipped; the rest still imports.

    Args:
        first: Lines before ``data`` (it is a later part of the file).
        wanted: The lines to read, when an earlier reading chose them (``wanted[n]`` for
            line ``n``): the others are skipped unread, and these are not checked again.
        stop: Where the lines end in ``data`` (default: its end).
    """
    loads = orjson.loads
    find = data.find
    view = memoryview(data)  # lines are parsed in place, not copied out first
    size = len(data) if stop is None else stop
    start = 0
    lineno = first
    while start < size:
        end = find(b"\n", start)
        if end < 0:
            end = size
        lineno += 1
        line_start, start = start, end + 1
        if end == line_start:
            continue
        if wanted is not None:
            if lineno >= len(wanted) or not wanted[lineno]:
                continue
            try:
                obj = loads(view[line_start:end])
            except orjson.JSONDecodeError:  # the file changed since (it is being written)
                continue
            if type(obj) is dict:
                yield lineno, obj
            continue
        try:
            obj = loads(view[line_start:end])
        except orjson.JSONDecodeError as exc:
            if not data[line_start:end].strip():  # a line of white space
                continue
            report.bad_lines.append((str(path), lineno, f"not valid JSON ({exc})"))
            continue
        if not isinstance(obj, dict):
            report.bad_lines.append((str(path), lineno, "not a JSON object"))
            continue
        # the brackets found in place (no copy of the line); only a line with many is walked
        if _brackets_over(find, line_start, end) and deeper(obj, MAX_DEPTH):
            report.bad_lines.append((str(path), lineno, TOO_DEEP))
            continue
        yield lineno, obj
    return lineno


def _brackets_over(find: Any, start: int, end: int) -> bool:
    """Whether the bytes ``start:end`` (``find`` is their ``bytes.find``) hold more than
    :data:`~regista.trace.validate.MAX_DEPTH` opening brackets: only such a line may nest
    too deep. Found one at a time, stopping past the limit: most lines hold a few, and
    ``bytes.count`` reads every byte where ``find`` skips to the next."""
    n = 0
    for bracket in (b"{", b"["):
        i = find(bracket, start, end)
        while i >= 0:
            n += 1
            if n > MAX_DEPTH:
                return True
            i = find(bracket, i + 1, end)
    return False


def report_of(report: ImportReport, limit: int = 50) -> dict[str, Any]:
    """What a conversion skipped, as kept in the main run's ``session.start`` metadata."""
    return {
        "skipped": dict(sorted(report.skipped.items())),
        "bad_lines": [[p, n, m] for p, n, m in report.bad_lines[:limit]],
        "notes": report.notes[:limit],
    }


def record_report(conv: Conversion, limit: int = 50) -> None:
    """Keep what the conversion skipped in the main run's ``session.start`` metadata."""
    conv.main.events[0]["metadata"]["import_report"] = report_of(conv.report, limit)
