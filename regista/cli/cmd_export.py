"""``regista export TRACE``: send a trace to an OpenTelemetry backend."""

from __future__ import annotations

import argparse
from typing import Any


def register(subparsers: Any) -> None:
    """Add the ``export`` subcommand."""
    p: argparse.ArgumentParser = subparsers.add_parser(
        "export", help="export a trace as OpenTelemetry spans (OTLP or console)"
    )
    p.add_argument("trace", metavar="TRACE", help="the trace file (.jsonl)")
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    from regista.errors import UserError

    raise UserError("export is not available yet")
