"""Defaults that more than one part of regista agrees on."""

from __future__ import annotations

from pathlib import Path

__all__ = ["DEFAULT_SWEEP_DIR", "DEFAULT_TRACE_DIR", "trace_path"]

#: Where sessions write their traces unless told otherwise (relative to the working folder).
DEFAULT_TRACE_DIR = Path(".regista/traces")
#: Where sweeps go unless ``--out`` says otherwise: ``<dir>/<sweep id>/fork-K/`` holds the
#: trace of fork K.
DEFAULT_SWEEP_DIR = Path(".regista/sweeps")


def trace_path(trace_dir: str | Path, session_id: str) -> Path:
    """The trace file of session ``session_id`` in ``trace_dir``: ``<dir>/<session_id>.jsonl``."""
    return Path(trace_dir) / f"{session_id}.jsonl"
