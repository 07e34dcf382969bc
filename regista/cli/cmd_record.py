"""``regista record [--trace-dir DIR] -- CMD [ARGS…]``: record any agent's model calls."""

from __future__ import annotations

import argparse
import sys

from regista.errors import UserError

DEFAULT_TRACE_DIR = ".regista/traces"


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "record",
        help="run a command with its Anthropic/OpenAI SDK calls recorded as traces",
        description="Run CMD with ANTHROPIC_BASE_URL and OPENAI_BASE_URL pointing at a "
        "recording proxy on 127.0.0.1. Every call goes on to the upstream those variables "
        "named before (default: the public APIs) with the command's own API keys (never "
        "written), streams back untouched, and each agent session becomes one trace. "
        "The Codex CLI reads no base URL from the environment: a codex command gets -c "
        "overrides after the codex word instead, and its calls go on to the provider its "
        "config.toml selects (docs/clients.md). "
        "Prints the traces and exits with the command's exit code.",
        usage="regista record [--trace-dir DIR] -- CMD [ARGS...]",
    )
    p.add_argument(
        "--trace-dir", default=DEFAULT_TRACE_DIR, help=f"where traces go ({DEFAULT_TRACE_DIR})"
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from regista.cli.sdk_child import record

    if not args.child_command:
        raise UserError(
            "give the command to record after --, e.g. regista record -- python agent.py"
        )
    code, paths = record(args.child_command, args.trace_dir)
    if not paths:
        print("regista: no model calls were recorded", file=sys.stderr)
    for path in paths:
        print(f"trace: {path}")
    return code
