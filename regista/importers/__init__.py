"""Sessions other tools wrote, opened as regista runs.

- :mod:`regista.importers.claude_code`: Claude Code transcripts;
- :mod:`regista.importers.codex`: Codex CLI rollouts (wrapped, bare and single-document).

Every command that opens a trace (``regista show/diff/export/replay``, ``regista-tui``)
accepts these files directly: the format is detected from the content
(:func:`regista.importers.detect.detect`), the file is converted in memory and nothing is
written beside it. ``regista import`` writes the converted runs as trace files.
"""

from __future__ import annotations

import contextlib
import os
import warnings
from pathlib import Path
from typing import TYPE_CHECKING

from regista.errors import TranscriptWarning, UserError
from regista.importers._builder import ImportReport
from regista.importers._common import Conversion, ImportedRun, read_source
from regista.importers.detect import FORMATS, detect

if TYPE_CHECKING:
    from regista.importers.claude_code import Job
    from regista.trace.reader import Trace

__all__ = [
    "FORMATS",
    "Conversion",
    "ImportReport",
    "ImportedRun",
    "convert",
    "convert_file",
    "detect",
    "discover",
    "start_conversion",
    "write_runs",
]


def convert(fmt: str, path: Path, data: bytes | None = None) -> Conversion:
    """Convert the transcript ``path`` of format ``fmt`` (see :data:`FORMATS`)."""
    from regista._gc import paused_gc

    # a transcript's lines and the events made from them live on and make no cycles: a
    # collection while they pile up finds nothing (a tenth to a fifth of the import)
    with paused_gc():
        return _convert(fmt, path, data)


def _convert(fmt: str, path: Path, data: bytes | None) -> Conversion:
    if fmt == "claude-code":
        from regista.importers import claude_code

        conv: Conversion = claude_code.convert(path, data)
        return conv
    if fmt == "codex":
        from regista.importers import codex

        conv = codex.convert(path, data)
        return conv
    if fmt == "otlp":
        from regista.importers import otlp

        conv = otlp.convert(path, data)
        return conv
    raise UserError(f"unknown transcript format {fmt!r}; known: {', '.join(FORMATS)}")


def convert_file(path: Path, data: bytes | None = None) -> Conversion | None:
    """Convert ``path`` if it holds a format regista imports; ``None`` for anything else.

    A line that is not JSON is skipped and emitted as a
    :class:`~regista.errors.TranscriptWarning` naming its line; what else was skipped is
    counted in the main run's ``session.start`` metadata (``import_report``).
    """
    path = Path(path)
    if data is None:
        data = read_source(path)
    fmt = detect(data)
    if fmt not in ("claude-code", "codex"):
        return None
    conv = convert(fmt, path, data)
    for file, lineno, msg in conv.report.bad_lines:
        warnings.warn(f"{file}:{lineno}: skipped: {msg}", TranscriptWarning, stacklevel=2)
    return conv


def start_conversion(path: Path, data: bytes) -> Job | None:
    """A conversion of ``path`` to make piece by piece (a Claude Code transcript), else
    ``None``; lines that are not JSON are warned about as by :func:`convert_file`."""
    if detect(data) != "claude-code":
        return None
    from regista.importers.claude_code import Job

    job = Job(Path(path), data)
    for file, lineno, msg in job.conv.report.bad_lines:
        warnings.warn(f"{file}:{lineno}: skipped: {msg}", TranscriptWarning, stacklevel=2)
    return job


def discover(fmt: str, paths: list[Path]) -> list[Path]:
    """The session files of format ``fmt`` under ``paths`` (files or folders)."""
    if fmt == "claude-code":
        from regista.importers import claude_code

        found: list[Path] = claude_code.discover(paths)
    elif fmt == "codex":
        from regista.importers import codex

        found = codex.discover(paths)
    elif fmt == "otlp":
        found = []
        for p in paths:
            if not Path(p).exists():
                raise FileNotFoundError(p)
            found.extend(sorted(Path(p).rglob("*.json*")) if Path(p).is_dir() else [Path(p)])
    else:
        raise UserError(f"unknown transcript format {fmt!r}; known: {', '.join(FORMATS)}")
    return found


def write_runs(conv: Conversion, trace_dir: Path) -> list[Path]:
    """Write each run of ``conv`` to ``trace_dir/<session_id>.jsonl``.

    The same transcript always gives the same session ids and bytes; a file is replaced
    atomically, so importing again never leaves a half-written trace.
    """
    trace_dir = Path(trace_dir)
    try:
        trace_dir.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        raise UserError(f"cannot write traces in {trace_dir}: it is a file, not a folder") from None
    except OSError as exc:
        raise UserError(f"cannot write traces in {trace_dir}: {exc.strerror or exc}") from None
    out: list[Path] = []
    for run in conv.runs:
        target = trace_dir / f"{run.session_id}.jsonl"
        tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
        try:
            # written as it is encoded: a 1 GB trace never sits whole in memory
            with open(tmp, "wb") as f:
                size = run.write_to(f)
                f.flush()
                same = _same_file(target, tmp, size)
                if not same:
                    os.fsync(f.fileno())
            if same:
                os.unlink(tmp)  # unchanged: the trace keeps its time
                out.append(target)
                continue
            os.replace(tmp, target)
        except OSError as exc:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise UserError(f"cannot write {target}: {exc.strerror or exc}") from None
        out.append(target)
    return out


def _same_file(a: Path, b: Path, size: int) -> bool:
    """Whether ``a`` holds ``size`` bytes, the same as ``b``'s (read a block at a time)."""
    try:
        if not a.is_file() or a.stat().st_size != size:
            return False
        with open(a, "rb") as fa, open(b, "rb") as fb:
            while True:
                x, y = fa.read(1 << 20), fb.read(1 << 20)
                if x != y:
                    return False
                if not x:
                    return True
    except OSError:
        return False


def _register_formats() -> None:
    """Make the importers' formats known to :func:`regista.trace.formats.detect_format`."""
    from regista.trace.formats import TraceFormat, register_format

    def load(path: Path) -> Trace:
        from regista.trace.reader import Trace

        conv = convert_file(path)
        if conv is None:
            return Trace.load(path)
        return Trace.from_bytes(conv.main.to_bytes(), path)

    for name in ("claude-code", "codex"):
        register_format(
            TraceFormat(name, lambda head, name=name: detect(head) == name, load)  # type: ignore[misc]
        )


_register_formats()
