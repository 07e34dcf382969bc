"""``regista diff A B``: compare two runs step by step."""

from __future__ import annotations

import argparse
from typing import Any


def register(subparsers: Any) -> None:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "diff", help="compare two runs step by step"
    )
    parser.add_argument("a", metavar="A", help="the first trace")
    parser.add_argument("b", metavar="B", help="the second trace")
    parser.add_argument("--json", action="store_true", help="print the diff as JSON")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    raise NotImplementedError
