"""``regista``: the command-line entry point.

Each subcommand lives in its own module under ``regista.cli`` and exposes
``register(subparsers)``, which adds its parser and sets ``func`` (``args -> int``).
Errors from regista print one line on stderr and exit non-zero; never a traceback.
"""

from __future__ import annotations

import argparse
import asyncio
import atexit
import importlib
import os
import sys
import warnings
from collections.abc import Sequence

from regista._version import __version__
from regista.errors import RegistaError, UserError

COMMANDS = [
    "show",
    "replay",
    "resume",
    "fork",
    "diff",
    "test",
    "export",
    "runs",
    "serve",
    "recall",
    "record",
    "import",
    "share",
]

EXIT_ERROR = 1
EXIT_USAGE = 2


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="regista",
        description="Inspect, replay, resume, fork and diff agent traces.",
    )
    parser.add_argument("--version", action="version", version=f"regista {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        module = importlib.import_module(f"regista.cli.cmd_{name}")
        module.register(sub)
    return parser


def _format_warning(
    message: Warning | str, category: type[Warning], *_: object, **__: object
) -> str:
    return f"warning: {message}\n"


def main(argv: Sequence[str] | None = None, *, standalone: bool = False) -> int:
    """Run the CLI; returns the exit code (also used by ``python -m regista``).

    ``standalone``: the process ends when the command does (commands may then skip work
    that only a longer-lived process needs, such as collecting garbage).
    """
    warnings.formatwarning = _format_warning  # type: ignore[assignment]
    parser = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    child: list[str] | None = None
    if "--" in argv:  # `regista record|replay|fork|rewind … -- CMD ARGS…`
        cut = argv.index("--")
        argv, child = argv[:cut], argv[cut + 1 :]
    args = parser.parse_args(argv)
    args.standalone = standalone
    global _exit_fast
    _exit_fast = standalone and bool(getattr(args, "exit_fast", False))
    args.child_command = child
    if not getattr(args, "func", None):
        parser.print_help()
        return EXIT_USAGE
    try:
        result = args.func(args)
        if asyncio.iscoroutine(result):
            result = asyncio.run(result)
        return int(result or 0)
    except UserError as exc:
        print(f"regista: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except RegistaError as exc:
        print(f"regista: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        print("regista: interrupted", file=sys.stderr)
        return 130


_exit_fast = False


def run() -> None:
    code = main(standalone=True)
    if _exit_fast:
        # A command that read a whole big trace (it says so with ``exit_fast``) holds
        # millions of objects: freeing them one by one at exit costs half as much as
        # reading them. Its output is out and it wrote no file: run the exit handlers,
        # flush, and leave the freeing to the OS.
        atexit._run_exitfuncs()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    sys.exit(code)


if __name__ == "__main__":
    run()
