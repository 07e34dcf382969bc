"""``regista resume TRACE [--agent module:attr]``: continue an interrupted session."""

from __future__ import annotations

import argparse

from regista.cli._common import out, result_lines
from regista.loading import resolve_agent
from regista.replay import resume
from regista.trace.reader import Trace


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "resume",
        help="continue an interrupted session (recorded prefix free, the rest live)",
        description="Continue a session that was cut short: recorded model calls and tool "
        "results are served from the trace (tools are never re-run), new work goes live.",
    )
    p.add_argument("trace", help="the interrupted session's trace")
    p.add_argument("--agent", help="module:attr of the agent (default: the trace's agent_ref)")
    p.add_argument("--trace-dir", help="where the resumed session's trace goes")
    p.set_defaults(func=run)


async def run(args: argparse.Namespace) -> int:
    trace = Trace.load(args.trace)
    agent = resolve_agent(
        args.agent,
        trace.start.agent_ref,
        f"{args.trace} records no agent_ref: pass --agent module:attr (an Agent, or a "
        "function that returns one)",
    )
    result = await resume(agent, trace, trace_dir=args.trace_dir)
    out(result_lines(result, "resumed"))
    return 0
