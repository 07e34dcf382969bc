"""``regista sweep TRACE --at N``: fork one step K ways at once and compare the forks."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from regista.cli._common import out, read_arg, read_text_file
from regista.errors import UserError

#: Exit code of a sweep cut short by Ctrl+C (as a shell says of SIGINT).
EXIT_INTERRUPTED = 130


def _tagged(flag: str) -> Callable[[str], tuple[str, str]]:
    """The ``type`` of ``--tool-result`` / ``--answer`` / ``--model``: each value with its
    flag, appended to one list (``args.variant_flags``) in the order given."""
    return lambda value: (flag, value)


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "sweep",
        help="fork one step K ways at once and compare the forks in one table",
        usage="regista sweep TRACE --at N (--tool-result TEXT|@file | --answer TEXT|@file | "
        "--model NAME)... [--variants FILE] [-j N] [--verify CMD] [--agent M:A] "
        "[--out DIR] [--json] [--junit FILE] [-- CMD [ARGS...]]",
        description="Fork step N of a trace once per variant, each as regista fork does "
        "(recorded prefix, the edit, then live), J forks at once. Each repeated "
        "--tool-result / --answer / --model is one variant, or give them as a JSON list "
        "with --variants. --verify runs a shell command once per fork after it ends, in "
        "the fork's own copy of the working folder (exit 0: pass). The result is one "
        "table, and a sweep file (sweep.json) that links the parent and every fork: open "
        "it with regista-tui SWEEP. Ctrl+C stops the sweep; finished forks are kept.",
    )
    p.add_argument("trace", help="the parent trace (never modified)")
    p.add_argument("--at", type=int, metavar="N", help="the step every variant edits")
    for flag, what in (
        ("--tool-result", "a new result for tool step N (one variant; repeat for more)"),
        ("--answer", "a new answer for model step N: text, or JSON content blocks"),
        ("--model", "another model from step N on (with -- CMD: each live call asks for it)"),
    ):
        p.add_argument(
            flag,
            action="append",
            dest="variant_flags",
            type=_tagged(flag[2:].replace("-", "_")),
            metavar="NAME" if flag == "--model" else "TEXT|@file",
            help=what,
        )
    p.add_argument(
        "--variants",
        metavar="FILE",
        help='variants as JSON: [{"kind": "tool_result", "content": "...", "label": "..."}, '
        '{"kind": "model_answer", "content": ...}, {"kind": "model", "model": "NAME"}, …]',
    )
    p.add_argument("-j", "--jobs", type=int, metavar="N", help="forks at once (default: the cores)")
    p.add_argument("--verify", metavar="CMD", help="a shell command run after each fork")
    p.add_argument(
        "--workdir",
        metavar="DIR",
        default=".",
        help="the working folder each fork gets a copy of when --verify is given (default: .)",
    )
    p.add_argument("--agent", help="module:attr of the agent (default: the trace's agent_ref)")
    p.add_argument("--out", metavar="DIR", help="the sweep's folder (default: .regista/sweeps/ID)")
    p.add_argument("--json", action="store_true", help="print the table as JSON")
    p.add_argument("--junit", metavar="FILE", help="write the table as a JUnit report")
    p.set_defaults(func=run)


def _variants(args: argparse.Namespace) -> list[Any]:
    from regista.sweep import parse_variants_file, variant_of_flag

    flags: list[tuple[str, str]] = getattr(args, "variant_flags", None) or []
    out: list[Any] = []
    if args.variants:
        out += parse_variants_file(read_text_file(args.variants), args.variants, args.at)
    if flags and args.at is None:
        raise UserError("give the step the variants edit: --at N")
    for flag, value in flags:
        out.append(variant_of_flag(flag, value if flag == "model" else read_arg(value), args.at))
    return out


def run(args: argparse.Namespace) -> int:
    from regista.sweep import (
        SweepRunner,
        plan_sweep,
        sweep_rows,
        table_json,
        table_text,
        write_junit,
    )

    if args.jobs is not None and args.jobs < 1:
        raise UserError("-j: give at least 1")
    command = getattr(args, "child_command", None)
    if command is not None and not command:
        raise UserError("give the command to run after --, e.g. -- python agent.py")
    if command is not None and args.agent:
        raise UserError("--agent is for a regista Agent; with -- CMD the command is the agent")
    if args.verify is not None and not args.verify.strip():
        raise UserError("--verify: give the command that checks a fork, e.g. --verify 'pytest -q'")
    if args.verify and not Path(args.workdir).is_dir():
        raise UserError(f"--workdir {args.workdir}: no such folder")
    sweep = plan_sweep(
        args.trace,
        _variants(args),
        out=args.out,
        agent=args.agent,
        command=command,
        verify=args.verify,
    )
    total = len(sweep.forks)
    print(f"sweep: {total} forks of step {sweep.at_step}, into {sweep.folder}", file=sys.stderr)
    reported: set[int] = set()

    def progress(s: Any) -> None:
        for fork in s.forks:
            if fork.status in ("done", "failed") and fork.n not in reported:
                reported.add(fork.n)
                print(
                    f"  fork {fork.n}/{total} {fork.status}: {fork.variant.label}",
                    file=sys.stderr,
                )

    interrupted = False
    runner = SweepRunner(sweep, jobs=args.jobs, workdir=args.workdir, on_change=progress)
    try:
        runner.run()
    except KeyboardInterrupt:
        interrupted = True
    rows = sweep_rows(sweep)
    if args.junit:
        write_junit(sweep, rows, args.junit)
    if args.json:
        import orjson

        sys.stdout.write(
            orjson.dumps(table_json(sweep, rows), option=orjson.OPT_INDENT_2).decode() + "\n"
        )
    else:
        lines = [table_text(rows), "", f"sweep file: {sweep.path}"]
        cut = [r.name for r in rows if r.status == "cut_short"]
        if cut:
            lines.append(f"cut short: {', '.join(cut)} (the sweep was cancelled)")
        lines.append(f"view: regista-tui {sweep.path}")
        out(lines)
    if interrupted:
        print("regista: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    bad = [r for r in rows[1:] if r.status != "done" or r.verify.startswith("fail")]
    return 1 if bad else 0
