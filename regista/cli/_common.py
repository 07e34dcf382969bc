"""Helpers shared by CLI commands: reading ``@file`` arguments, printing results."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from regista.errors import UserError
from regista.vocab import cost_amount

__all__ = [
    "add_source_options",
    "check_source_options",
    "literal_arg",
    "out",
    "read_arg",
    "read_text_file",
    "result_lines",
]


def add_source_options(p: argparse.ArgumentParser) -> None:
    """``--claude DIR`` and ``--codex DIR``: where the tools keep their sessions (default:
    their own homes); check them with :func:`check_source_options`."""
    p.add_argument("--claude", type=Path, metavar="DIR", help="Claude Code's projects folder")
    p.add_argument("--codex", type=Path, metavar="DIR", help="Codex's sessions folder")


def check_source_options(args: argparse.Namespace) -> None:
    """Raises :class:`UserError` for a ``--claude`` or ``--codex`` that is not a folder."""
    for flag, given in (("--claude", args.claude), ("--codex", args.codex)):
        if given is not None and not given.is_dir():
            what = "is a file" if given.exists() else "no such folder"
            raise UserError(f"{flag} {given}: {what}")


def read_arg(value: str) -> str:
    """``TEXT`` as is, or the contents of ``@file``; ``@@TEXT`` is ``@TEXT`` as is (a text
    that begins with ``@``: see :func:`literal_arg`)."""
    if value.startswith("@@"):
        return value[1:]
    if value.startswith("@"):
        return read_text_file(value[1:])
    return value


def read_text_file(name: str) -> str:
    """The UTF-8 text of the file ``name``, or one clear error."""
    path = Path(name)
    try:
        return path.read_text(encoding="utf-8")
    except OSError as exc:
        raise UserError(f"cannot read {path}: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        raise UserError(
            f"cannot read {path}: it is not UTF-8 text (byte {exc.object[exc.start]:#04x} "
            f"at offset {exc.start})"
        ) from None


def literal_arg(text: str) -> str:
    """``text`` as an argument that :func:`read_arg` gives back as it is."""
    return "@" + text if text.startswith("@") else text


def result_lines(result: Any, what: str) -> list[str]:
    """A few lines describing a RunResult (or a ForkResult)."""
    loose = getattr(result, "loose_steps", 0)
    sources = f"{result.recorded_steps - loose} recorded, {result.edited_steps} edited, "
    if loose:
        sources += f"{loose} played loosely from the recording, "
    lines = [
        f"{what}: {result.stop_reason} after {result.steps} "
        f"step{'' if result.steps == 1 else 's'} "
        f"({sources}{result.live_steps} live), cost {cost_amount(result.cost_usd)}",
        f"trace: {result.trace_path}",
    ]
    matched = getattr(result, "matched", None)
    if loose:
        same = sum(1 for m in (matched or {}).values() if m)
        lines.append(
            f"loose playback: {same} of {len(matched or {})} model requests after the first "
            "edit still matched the recording"
        )
    parent = getattr(result, "parent_session_id", None)
    if parent:
        lines.append(
            f"parent {parent}: {result.parent_stop_reason or 'unfinished'}, "
            f"cost {cost_amount(result.parent_cost_usd)}"
        )
    savings = getattr(result, "savings", None)
    if savings is not None:
        lines.append(savings.describe())
    error = getattr(result, "error", None)
    if error:
        lines.append(f"error: {error}")
    if result.output:
        text = result.output.strip().replace("\n", " ")
        lines.append(f"output: {text[:200]}{'…' if len(text) > 200 else ''}")
    return lines


def out(lines: list[str]) -> None:
    sys.stdout.write("\n".join(lines) + "\n")
