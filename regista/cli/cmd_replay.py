"""``regista replay TRACE [--mode strict|warn|hybrid]``: re-run a session for $0."""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path
from typing import Any

from regista.cli._common import out, result_lines
from regista.cli.cmd_masks import add_mask_options, masks_from_args
from regista.defaults import DEFAULT_TRACE_DIR
from regista.diff.masks import verdict_counts
from regista.errors import ReplayDivergence, ReplayDivergenceWarning, UserError
from regista.loading import load_agent
from regista.providers.replay import ReplayMode
from regista.replay import replay
from regista.trace.reader import Trace
from regista.trace.verify import is_imported


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "replay",
        help="re-run a recorded session from its trace ($0, no network)",
        description="Re-run a recorded session through the same loop, serving every model "
        "call and tool result from the trace. A divergence prints the step and the diff "
        "and exits 1. With -- CMD, any agent is the replayed one: CMD runs with "
        "ANTHROPIC_BASE_URL and OPENAI_BASE_URL serving the trace, no call reaches a "
        "provider, and regista exits with CMD's code.",
        usage="regista replay TRACE [--mode MODE] [--agent M:A] [--trace-dir DIR] "
        "[-- CMD [ARGS...]]",
    )
    p.add_argument("trace", help="the trace (.jsonl) to replay")
    p.add_argument(
        "--mode",
        choices=[*(m.value for m in ReplayMode), "loose"],
        help="strict: stop at the first divergence (default; with -- CMD, an imported "
        "session replays loose); loose (alias warn): report it "
        "and go on; hybrid: continue live with the agent's provider from there",
    )
    p.add_argument("--agent", help="module:attr of the agent (hybrid mode's live half)")
    p.add_argument(
        "--trace-dir", default=str(DEFAULT_TRACE_DIR), help="where the replay's trace goes"
    )
    add_mask_options(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> Any:
    if getattr(args, "child_command", None) is not None:
        return run_child(args)
    return run_harness(args)


def run_child(args: argparse.Namespace) -> int:
    """``regista replay TRACE -- CMD``: serve the trace to any SDK agent."""
    from regista.cli.sdk_child import replay_child

    if args.agent:
        raise UserError(
            "--agent is for replaying a regista Agent; with -- CMD the command is the agent"
        )
    if args.mode == "hybrid":
        raise UserError(f"--mode {args.mode} cannot replay a command: use strict or loose")
    mode = "loose" if args.mode == "warn" else args.mode  # None: the run decides
    masks = masks_from_args(args, Path(args.trace).parent)
    code, replay, _ = replay_child(args.trace, args.child_command, mode=mode, masks=masks)
    out([replay_line(replay)])
    return code


def replay_line(replay: Any) -> str:
    """Steps served, matched, requests rejected (answered 409: a client that retries
    anyway sends each again), and the first divergence, in one line."""
    line = (
        f"replayed: {replay.served} of {len(replay.tape)} model calls served, "
        f"{replay.matched} matched"
    )
    masks = getattr(replay, "masks", None)
    verdicts = getattr(replay, "verdicts", None)
    if replay.masked_matches:
        used = ", ".join(sorted(replay.masks_used))
        line += f" ({replay.masked_matches} through masks: {used})"
    rejected = replay.rejected
    if rejected:
        line += f", {rejected} request{'s' if rejected != 1 else ''} rejected"
    if masks is not None:
        line += f"; masks: {len(masks)} ({' + '.join(masks.sources) or 'none'})"
    if verdicts:
        line += f"; steps: {verdict_counts(verdicts)}"
    div = replay.divergence
    if div is not None:
        first = div["diff"][0] if div["diff"] else "the request differs"
        line += f"; first divergence at step {div['step']}: {first}"
    return line


#: An imported run's source, as a person names it, and the command that replays it.
_IMPORTED = {
    "claude-code": ("Claude Code", "claude -p 'TASK'"),
    "codex": ("Codex", "codex exec 'TASK'"),
    "otlp": ("OpenTelemetry", "python agent.py"),
}


def imported_needs_a_command(trace: Trace, path: str) -> str:
    """What a replay of an imported run needs: its requests were made by another program,
    so regista's own loop cannot make them again; the program itself can."""
    meta = trace.start.metadata or {}
    source = meta.get("imported_from") if isinstance(meta, dict) else None
    fmt = source.get("format") if isinstance(source, dict) else None
    who, example = _IMPORTED.get(str(fmt), ("another tool's", "python agent.py"))
    return (
        f"{path}: a {who} session is replayed to the program that made it, not to regista's "
        f"own loop: regista replay {path} -- CMD (for example -- {example}), or serve it to "
        "any client with regista serve"
    )


async def run_harness(args: argparse.Namespace) -> int:
    if args.mode is None:
        args.mode = "strict"
    if args.mode == "loose":
        args.mode = "warn"
    if args.agent and args.mode != "hybrid":
        raise UserError(
            f"--agent is for --mode hybrid (the agent that carries on live); a {args.mode} "
            "replay takes everything from the trace (to test your current agent against it, "
            "use regista test)"
        )
    trace = Trace.load(args.trace)
    if is_imported(trace):
        raise UserError(imported_needs_a_command(trace, str(args.trace)))
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
            result = await replay(
                trace,
                args.mode,
                fallback,
                trace_dir=args.trace_dir,
                tools=tools,
                masks=masks_from_args(args, Path(args.trace).parent),
            )
        except ReplayDivergence as exc:
            print(f"regista: {exc}", file=sys.stderr)
            return 1
    for w in caught:
        if issubclass(w.category, ReplayDivergenceWarning):
            print(f"warning: {w.message}", file=sys.stderr)
    lines = result_lines(result, "replayed")
    if result.verdicts:
        lines.append(f"steps: {verdict_counts(result.verdicts)}")
    out(lines)
    return 0
