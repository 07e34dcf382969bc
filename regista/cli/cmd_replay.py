"""``regista replay TRACE [--mode strict|warn|hybrid]``: re-run a session for $0."""

from __future__ import annotations

import argparse
import sys
import warnings

from regista.cli._common import out, result_lines
from regista.defaults import DEFAULT_TRACE_DIR
from regista.errors import ReplayDivergence, ReplayDivergenceWarning, UserError
from regista.loading import load_agent
from regista.providers.replay import ReplayMode
from regista.replay import replay
from regista.trace.reader import Trace


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "replay",
        help="re-run a recorded session from its trace ($0, no network)",
        description="Re-run a recorded session through the same loop, serving every model "
        "call and tool result from the trace. A divergence prints the step and the diff "
        "and exits 1.",
    )
    p.add_argument("trace", help="the trace (.jsonl) to replay")
    p.add_argument(
        "--mode",
        default="strict",
        choices=[m.value for m in ReplayMode],
        help="strict: stop at the first divergence (default); warn: report it and go on; "
        "hybrid: continue live with the agent's provider from there",
    )
    p.add_argument("--agent", help="module:attr of the agent (hybrid mode's live half)")
    p.add_argument(
        "--trace-dir", default=str(DEFAULT_TRACE_DIR), help="where the replay's trace goes"
    )
    p.set_defaults(func=run)


async def run(args: argparse.Namespace) -> int:
    if args.agent and args.mode != "hybrid":
        raise UserError(
            f"--agent is for --mode hybrid (the agent that carries on live); a {args.mode} "
            "replay takes everything from the trace (to test your current agent against it, "
            "use regista test)"
        )
    trace = Trace.load(args.trace)
    fallback = None
    tools = None
    if args.mode == "hybrid":
        ref = args.agent or trace.start.agent_ref
        if ref:
            agent = load_agent(ref)
            fallback, tools = agent.provider, list(agent.tools)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ReplayDivergenceWarning)
        try:
            result = await replay(trace, args.mode, fallback, trace_dir=args.trace_dir, tools=tools)
        except ReplayDivergence as exc:
            print(f"regista: {exc}", file=sys.stderr)
            return 1
    for w in caught:
        if issubclass(w.category, ReplayDivergenceWarning):
            print(f"warning: {w.message}", file=sys.stderr)
    out(result_lines(result, "replayed"))
    return 0
