"""``regista fork`` and ``regista rewind``: change one step and let the agent carry on."""

from __future__ import annotations

import argparse
import sys

from regista.cli._common import out, read_arg, result_lines
from regista.errors import ReplayDivergence, UserError
from regista.fork import ModelAnswerEdit, ToolResultEdit, fork, rewind


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "fork",
        help="replace one step's tool result or model answer and continue",
        description="Replay steps before N from the trace, answer step N with the edit, then "
        "go live after --live-after (or play the recording on loosely without it).",
    )
    p.add_argument("trace", help="the parent trace (never modified)")
    p.add_argument("--at", type=int, required=True, metavar="N", help="the step to edit")
    what = p.add_mutually_exclusive_group(required=True)
    what.add_argument("--tool-result", metavar="TEXT|@file", help="new result for a tool step")
    what.add_argument(
        "--answer",
        metavar="TEXT|@file",
        help="new answer for a model step: text, or JSON content blocks (text / tool_use)",
    )
    p.add_argument("--error", action="store_true", help="mark the new tool result as an error")
    p.add_argument("--live-after", type=int, metavar="N", help="go live after step N")
    p.add_argument("--agent", help="module:attr of the agent (default: the trace's agent_ref)")
    p.add_argument("--trace-dir", help="where the fork's trace goes")
    p.set_defaults(func=run_fork)

    r = sub.add_parser(
        "rewind",
        help="replay the first N steps for free and continue live from step N",
    )
    r.add_argument("trace", help="the parent trace (never modified)")
    r.add_argument("--at", type=int, required=True, metavar="N", help="first live step")
    r.add_argument("--agent", help="module:attr of the agent (default: the trace's agent_ref)")
    r.add_argument("--trace-dir", help="where the new trace goes")
    r.set_defaults(func=run_rewind)


async def run_fork(args: argparse.Namespace) -> int:
    edit: ToolResultEdit | ModelAnswerEdit
    if args.error and args.tool_result is None:
        raise UserError("--error marks a new tool result (--tool-result); an answer has none")
    if args.tool_result is not None:
        edit = ToolResultEdit(read_arg(args.tool_result), is_error=args.error)
    else:
        edit = ModelAnswerEdit.parse(read_arg(args.answer))
    try:
        result = await fork(
            args.trace, args.at, edit, args.live_after, args.agent, trace_dir=args.trace_dir
        )
    except ReplayDivergence as exc:
        print(f"regista: {exc}", file=sys.stderr)
        return 1
    out(result_lines(result, f"fork at step {args.at}"))
    return 0


async def run_rewind(args: argparse.Namespace) -> int:
    try:
        result = await rewind(args.trace, args.at, args.agent, trace_dir=args.trace_dir)
    except ReplayDivergence as exc:
        print(f"regista: {exc}", file=sys.stderr)
        return 1
    out(result_lines(result, f"rewind to step {args.at}"))
    return 0
