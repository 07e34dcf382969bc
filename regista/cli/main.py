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
import shlex
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
    "watch",
    "doctor",
    "sweep",
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
    "sweep": ("sweep", "fork one step K ways at once and compare the forks in one table"),
    "masks": (
        "masks",
        "list the masks a strict replay applies (volatile parts of a client's requests)",
    ),
    "watch": ("watch", "keep Claude Code and Codex sessions imported into a library folder"),
    "doctor": (
        "doctor",
        "report the tools' retention settings and what the library keeps that they deleted",
    ),
}

#: Exit codes (README, "The command line"): 0 done; 1 done, and the answer is no (a replay
#: diverged, a tape failed, two runs differ, a collector refused the spans); 2 not done as
#: asked (an unknown option, a bad value, a path that names no file); 130 interrupted.
#: ``record`` and ``replay|fork|rewind … -- CMD`` exit with CMD's code.
EXIT_ERROR = 1
EXIT_USAGE = 2

#: The commands that run a command given after ``--``.
TAKES_COMMAND = ("record", "replay", "fork", "rewind", "test", "sweep")


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


def _reject_extras(
    parser: argparse.ArgumentParser,
    args: argparse.Namespace,
    argv: list[str],
    extras: list[str],
) -> None:
    """Exit with the usage of the command that was given arguments it does not take.

    argparse hands a subcommand's unknown arguments up to the top-level parser, whose
    usage would then be printed; the command's own usage is the one that helps. Where a
    command that runs ``-- CMD`` got words it does not take, the line says where they go.
    """
    command = _command_of(argv)
    subparsers = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    at = argv.index(command) if command is not None else len(argv)
    if command is None or command not in subparsers.choices or extras[0] in argv[:at]:
        parser.error(f"unrecognized arguments: {' '.join(extras)}")
    message = f"unrecognized arguments: {' '.join(extras)}"
    if command in TAKES_COMMAND and not extras[0].startswith("-"):
        # the words argparse did not take, in order, go after `--`; the rest stays before
        taken, left = [], list(extras)
        for word in argv[at + 1 :]:
            if left and word == left[0]:
                left.pop(0)
            else:
                taken.append(word)
        child = list(extras)
        trace = getattr(args, "trace", None)
        if trace is not None and trace in taken and not os.path.exists(trace):
            # `regista replay python agent.py`: the command's first word was taken for TRACE
            taken[taken.index(trace)] = "TRACE"
            child.insert(0, trace)
        fixed = shlex.join(["regista", *argv[: at + 1], *taken, "--", *child])
        message += f"; the command to run goes after --: {fixed}"
    subparsers.choices[command].error(message)


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
    args, extras = parser.parse_known_args(argv)
    if extras:
        _reject_extras(parser, args, argv, extras)
    args.standalone = standalone
    if args.no_redact:
        from regista.redact import set_default

        set_default(False)
    global _exit_fast
    _exit_fast = standalone and bool(getattr(args, "exit_fast", False))
    args.child_command = child
    if child is not None and args.command not in TAKES_COMMAND:
        parser.error(f"{args.command or 'regista'} takes no command after --")
    if not getattr(args, "func", None):
        parser.print_help()
        return EXIT_USAGE
    import regista.importers  # noqa: F401 - every command opens the other tools' formats

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
