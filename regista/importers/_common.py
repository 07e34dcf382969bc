"""What every importer shares: reading JSON lines and the result of a conversion."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

import orjson

from regista.errors import NoSuchPathError, TraceError
from regista.importers._builder import ImportReport, events_bytes
from regista.trace.formats import device_error
from regista.trace.validate import MAX_DEPTH, deeper

__all__ = [
    "TOO_DEEP",
    "Conversion",
    "ImportedRun",
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
        events: The trace's events as dicts, in ``seq`` order.
        parent: ``{"session_id", "step", "tool_use_id"}`` of the step that started it.
    """

    session_id: str
    events: list[dict[str, Any]]
    parent: dict[str, Any] | None = None

    @property
    def steps(self) -> int:
        """Its steps (model calls, tool calls, compactions), as its ``session.end`` (the
        builder's :meth:`~regista.importers._builder.RunBuilder.finish`) counts them."""
        return int(self.events[-1]["steps"])

    def to_bytes(self) -> bytes:
        return events_bytes(self.events)

    def write_to(self, f: BinaryIO, chunk: int = 256) -> int:
        """Write the trace to ``f`` a few events at a time (a 1 GB trace is never one
        bytes object in memory); the bytes written, the same as :meth:`to_bytes`'s."""
        from regista.importers._builder import RunEncoder

        if not self.events:
            return 0
        enc = RunEncoder(str(self.events[0]["session_id"]))
        n = 0
        for i in range(0, len(self.events), chunk):
            data = enc.encode(self.events[i : i + chunk])
            f.write(data)
            n += len(data)
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


def read_source(path: Path) -> bytes:
    """The bytes of a transcript, with one clear error when it cannot be read."""
    from regista.trace.formats import read_whole

    return read_whole(path, "no such file", "is a directory, not a transcript file")


#: What a skipped line that nests too deep is reported as.
TOO_DEEP = f"a value nested more than {MAX_DEPTH} levels deep"


_BLOCK = 64 << 20


def read_json_file(path: Path, report: ImportReport) -> list[tuple[int, dict[str, Any]]]:
    """:func:`read_json_lines` of the file ``path``, read a block at a time: the file's
    bytes and the objects made of them are never in memory together (a 1 GB transcript
    would need its gigabyte on top of its objects)."""
    out: list[tuple[int, dict[str, Any]]] = []
    lineno = 0
    try:
        with open(path, "rb") as f:
            if (device := device_error(path, f.fileno())) is not None:
                raise TraceError(device)
            rest = b""
            while True:
                block = f.read(_BLOCK)
                if not block:
                    if rest:
                        out += read_json_lines(rest, path, report, lineno)
                    return out
                buf = rest + block if rest else block
                cut = buf.rfind(b"\n") + 1
                if cut == 0:
                    rest = buf
                    continue
                piece, rest = buf[:cut], buf[cut:]
                del buf
                out += read_json_lines(piece, path, report, lineno)
                lineno += piece.count(b"\n")
    except FileNotFoundError:
        raise NoSuchPathError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise TraceError(f"{path}: is a directory, not a transcript file") from None
    except OSError as exc:
        raise TraceError(f"{path}: cannot read ({exc.strerror})") from None


def read_json_lines(
    data: bytes, path: Path, report: ImportReport, first: int = 0
) -> list[tuple[int, dict[str, Any]]]:
    """The JSON objects of a JSON-lines file with their (1-based) line numbers.

    A line that is not a JSON object, or that nests values more than
    :data:`~regista.trace.validate.MAX_DEPTH` levels deep, is reported with its number and
    skipped; the rest still imports.

    Args:
        first: Lines before ``data`` (it is a later part of the file).
    """
    out: list[tuple[int, dict[str, Any]]] = []
    loads = orjson.loads
    find = data.find
    view = memoryview(data)  # lines are parsed in place, not copied out first
    size = len(data)
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
        # the brackets counted in place (no copy of the line); only a line with many is walked
        if data.count(b"[", line_start, end) + data.count(
            b"{", line_start, end
        ) > MAX_DEPTH and deeper(obj, MAX_DEPTH):
            report.bad_lines.append((str(path), lineno, TOO_DEEP))
            continue
        out.append((lineno, obj))
    return out


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
