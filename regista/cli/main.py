"""``regista``: the command-line entry point.

Each subcommand lives in its own module under ``regista.cli`` and exposes
``register(subparsers)``, which adds its parser and sets ``func`` (``args -> int``).
Errors from regista print one line on stderr and exit non-zero; never a traceback.
"""

from __future__ import annotations

import argparse
import atexit
import importlib
import os
import sys
import warnings
from collections.abc import Sequence
from types import CoroutineType

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
    "mcp",
    "verify",
    "redact",
    "masks",
]

#: Each command's module and one-line help, so that ``regista --help`` and a command's run
#: import only what they need (a test checks this table against the modules). A module
#: missing here is imported to find its commands.
SUMMARIES: dict[str, tuple[str, str]] = {
    "show": ("show", "print a trace's summary and its steps"),
    "replay": ("replay", "re-run a recorded session from its trace ($0, no network)"),
    "resume": ("resume", "continue an interrupted session (recorded prefix free, the rest live)"),
    "fork": ("fork", "replace steps' tool results or model answers and continue live"),
    "rewind": ("fork", "replay the first N steps for free and continue live from step N"),
    "diff": ("diff", "compare two runs step by step"),
    "test": ("test", "play golden traces against the current agent (no key, $0)"),
    "export": (
        "export",
        "send a trace to an OpenTelemetry backend (OTLP/HTTP) or print its spans",
    ),
    "runs": ("runs", "list the runs of a traces folder, newest first"),
    "serve": (
        "serve",
        "serve the traces folder over HTTP (SDK replays, record proxy, runs, diff)",
    ),
    "recall": ("recall", "find earlier runs that dealt with the same words"),
    "record": ("record", "run a command with its Anthropic/OpenAI SDK calls recorded as traces"),
    "import": (
        "import",
        "write Claude Code or Codex sessions, or OTLP GenAI spans, as regista traces",
    ),
    "share": ("share", "write a run (or two, side by side) as one self-contained HTML page"),
    "mcp": ("mcp", "serve a traces folder to agents over the Model Context Protocol (stdio)"),
    "verify": ("verify", "check a trace: every line, and every rebuilt request against its hash"),
    "redact": ("redact", "copy a trace with secret shapes (API keys, tokens, passwords) replaced"),
    "masks": (
        "masks",
        "list the masks a strict replay applies (volatile parts of a client's requests)",
    ),
}

EXIT_ERROR = 1
EXIT_USAGE = 2


def build_parser(command: str | None = None, *, lazy: bool = False) -> argparse.ArgumentParser:
    """The CLI's parser.

    Args:
        command: The command about to run (with ``lazy``: only its module is imported).
        lazy: Import no command module that the run does not need; the others get a
            placeholder that only lists them in ``--help``.
    """
    parser = argparse.ArgumentParser(
        prog="regista",
        description="Inspect, replay, resume, fork and diff agent traces.",
    )
    parser.add_argument("--version", action="version", version=f"regista {__version__}")
    parser.add_argument(
        "--no-redact",
        action="store_true",
        help="write traces with secrets as they are (default: API keys, tokens, passwords "
        "and private keys are replaced by [REDACTED:<kind>])",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    known = {module for module, _ in SUMMARIES.values()}
    wanted = SUMMARIES[command][0] if command in SUMMARIES else None
    for name in COMMANDS:
        if lazy and name in known and name != wanted:
            for cmd, (module, summary) in SUMMARIES.items():
                if module == name:
                    sub.add_parser(cmd, help=summary, add_help=False)
            continue
        importlib.import_module(f"regista.cli.cmd_{name}").register(sub)
    return parser


def _command_of(argv: Sequence[str]) -> str | None:
    return next((a for a in argv if not a.startswith("-")), None)


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
    argv = list(sys.argv[1:] if argv is None else argv)
    child: list[str] | None = None
    if "--" in argv:  # `regista record|replay|fork|rewind … -- CMD ARGS…`
        cut = argv.index("--")
        argv, child = argv[:cut], argv[cut + 1 :]
    parser = build_parser(_command_of(argv), lazy=True)
    args = parser.parse_args(argv)
    args.standalone = standalone
    if args.no_redact:
        from regista.redact import set_default

        set_default(False)
    global _exit_fast
    _exit_fast = standalone and bool(getattr(args, "exit_fast", False))
    args.child_command = child
    if child is not None and args.command not in ("record", "replay", "fork", "rewind"):
        parser.error(f"{args.command or 'regista'} takes no command after --")
    if not getattr(args, "func", None):
        parser.print_help()
        return EXIT_USAGE
    try:
        result = args.func(args)
        if isinstance(result, CoroutineType):
            import asyncio  # only for the commands that need it: --help stays fast

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
    except BrokenPipeError:  # whoever read the output left (`regista show T | head`)
        if standalone:  # the interpreter's last flush would fail too: write nowhere
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        return EXIT_ERROR
    finally:
        if args.no_redact:  # main() may be called again in this process (tests, tools)
            from regista.redact import set_default

            set_default(True)


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
