"""Sessions other tools wrote, opened as regista runs.

- :mod:`regista.importers.claude_code`: Claude Code transcripts;
- :mod:`regista.importers.codex`: Codex CLI rollouts (wrapped, bare and single-document);
- :mod:`regista.importers.otlp`: OpenTelemetry GenAI spans (OTLP JSON).

Importing this package registers these formats with :mod:`regista.trace.formats` (the
trace layer never imports the importers): every command that opens a trace
(``regista show/diff/export/replay``, ``regista-tui``, ``regista.open_run``) accepts these
files directly: the format is detected from the content
(:func:`regista.importers.detect.detect`), the file is converted in memory and nothing is
written beside it. ``regista import`` writes the converted runs as trace files. Importing
it is cheap: the converters are imported when a file of theirs is opened.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import warnings
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from regista.errors import TranscriptWarning, UserError
from regista.importers.detect import FORMATS, detect
from regista.trace.formats import TraceFormat, register_format

if TYPE_CHECKING:
    from regista.importers._builder import ImportReport
    from regista.importers._common import Conversion, ImportedRun, PieceJob
    from regista.trace.index import TraceIndex

__all__ = [
    "FORMATS",
    "Conversion",
    "ImportReport",
    "ImportedRun",
    "convert",
    "convert_file",
    "detect",
    "discover",
    "import_runs",
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
    from regista.importers._common import read_source

    path = Path(path)
    if data is None:
        data = read_source(path)
    fmt = detect(data)
    if fmt not in ("claude-code", "codex"):
        return None
    return _warned(convert(fmt, path, data))


def _warned(conv: Conversion) -> Conversion:
    for file, lineno, msg in conv.report.bad_lines:
        warnings.warn(f"{file}:{lineno}: skipped: {msg}", TranscriptWarning, stacklevel=3)
    return conv


#: The formats converted a piece at a time, in bounded memory (:func:`piece_job`).
_PIECEWISE = ("claude-code", "codex")


def piece_job(fmt: str) -> Callable[..., PieceJob]:
    """The conversion, made a piece at a time, of a format of :data:`_PIECEWISE` (its
    ``Job``: path, bytes when read, ``into=``, ``live=``)."""
    module = importlib.import_module(f"regista.importers.{fmt.replace('-', '_')}")
    job: Callable[..., PieceJob] = module.Job
    return job


def start_conversion(
    path: Path, data: bytes | None = None, fmt: str | None = None
) -> PieceJob | None:
    """A conversion of ``path`` (its bytes ``data``, when read) to make piece by piece (a
    Claude Code transcript or a Codex rollout), else ``None``; lines that are not JSON are
    warned about as by :func:`convert_file`. Without ``data``, ``fmt`` says its format."""
    fmt = detect(data) if data is not None else fmt
    if fmt not in _PIECEWISE:
        return None
    job = piece_job(fmt)(Path(path), data)
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
        from regista.importers._common import session_files

        found = session_files(paths, lambda folder: sorted(folder.rglob("*.json*")))
    else:
        raise UserError(f"unknown transcript format {fmt!r}; known: {', '.join(FORMATS)}")
    return found


def import_runs(
    fmt: str, path: Path, trace_dir: Path, data: bytes | None = None
) -> tuple[Conversion, list[Path]]:
    """Convert the transcript ``path`` of format ``fmt`` and write its runs into
    ``trace_dir`` (see :func:`write_runs`); the conversion and the files written.

    A Claude Code transcript or a Codex rollout is read and its runs written as they
    convert: the memory it takes does not grow with the transcript (a 1 GB one imports in
    the memory of a small one). The other formats are converted whole, then written.
    """
    if fmt not in _PIECEWISE:
        conv = convert(fmt, path, data)
        return conv, write_runs(conv, trace_dir)
    from regista._gc import paused_gc

    folder = _trace_folder(trace_dir)
    job: PieceJob | None = None
    try:
        with paused_gc():
            job = piece_job(fmt)(Path(path), data, into=folder)
            conv = job.finish()
        return conv, write_runs(conv, folder)
    except OSError as exc:
        raise UserError(f"cannot write traces in {folder}: {exc.strerror or exc}") from None
    finally:
        if job is not None:
            job.discard()  # what was not moved into place (all of it, on an error)


def _trace_folder(trace_dir: Path) -> Path:
    trace_dir = Path(trace_dir)
    try:
        trace_dir.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        raise UserError(f"cannot write traces in {trace_dir}: it is a file, not a folder") from None
    except OSError as exc:
        raise UserError(f"cannot write traces in {trace_dir}: {exc.strerror or exc}") from None
    return trace_dir


def write_runs(conv: Conversion, trace_dir: Path) -> list[Path]:
    """Write each run of ``conv`` to ``trace_dir/<session_id>.jsonl``.

    The same transcript always gives the same session ids and bytes; a file is replaced
    atomically, so importing again never leaves a half-written trace. A run already
    written as it converted (:attr:`ImportedRun.spooled`) is moved into place.
    """
    trace_dir = _trace_folder(trace_dir)
    out: list[Path] = []
    for run in conv.runs:
        target = trace_dir / f"{run.session_id}.jsonl"
        tmp = run.spooled or target.with_name(f".{target.name}.{os.getpid()}.tmp")
        try:
            if run.spooled is None:
                # written as it is encoded: a 1 GB trace never sits whole in memory
                with open(tmp, "wb") as f:
                    size = run.write_to(f)
            else:
                size = tmp.stat().st_size
            same = _same_file(target, tmp, size)
            if same:
                os.unlink(tmp)  # unchanged: the trace keeps its time
                out.append(target)
                continue
            with open(tmp, "rb") as f:
                os.fsync(f.fileno())
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


#: Names imported on first use (the converters' models are not needed to register).
_LAZY = {
    "Conversion": "regista.importers._common",
    "ImportedRun": "regista.importers._common",
    "ImportReport": "regista.importers._builder",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'regista.importers' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def _claims(fmt: str, data: bytes) -> bool:
    return detect(data) == fmt


def _trace_bytes(fmt: str, path: Path, data: bytes | None) -> bytes:
    """The main run of the ``fmt`` session ``data``, as trace bytes."""
    return _warned(convert(fmt, path, data)).main.to_bytes()


def _open_index(fmt: str, path: Path, data: bytes | None) -> TraceIndex:
    """A lazy index of the main run: a Claude Code transcript or a Codex rollout is
    converted as the index scans (the first screen needs only its start), the others
    whole; a transcript written in the last minute is followed as it grows (see
    :func:`regista.importers.memory.follow`); every run of the conversion (subagents
    too) is kept in memory, findable by session id."""
    from regista.importers.memory import RUNS, follow
    from regista.trace.index import TraceIndex

    followed = follow(path, data, fmt)  # a session still going on
    if followed is not None:
        return followed
    if fmt in _PIECEWISE:
        job = start_conversion(path, data, fmt)
        if job is not None:
            return RUNS.stream(job)
    return TraceIndex(RUNS.add(_warned(convert(fmt, path, data))))


def _register_formats() -> None:
    """Make the importers' formats known to :func:`regista.trace.formats.open_run`."""
    for name in FORMATS:
        register_format(
            TraceFormat(
                name,
                partial(_claims, name),
                partial(_trace_bytes, name),
                partial(_open_index, name),
            )
        )


_register_formats()
