"""``regista fork`` and ``regista rewind``: change steps and let the agent carry on."""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from regista.cli._common import out, read_arg, read_text_file, result_lines
from regista.cli._edits import EditsAction, parse_edits_file
from regista.cli.fork_cli import add_resume_in, fork_back
from regista.errors import ReplayDivergence, UserError

if TYPE_CHECKING:
    from regista.trace.reader import Trace


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "fork",
        help="replace steps' tool results or model answers and continue live",
        usage="regista fork TRACE --at N (--tool-result TEXT|@file | --answer TEXT|@file) "
        "[--error] [--edits FILE] [--live-after N | --loose] [--agent M:A] [--trace-dir DIR] "
        "[-- CMD [ARGS...]]\n       regista fork SESSION --at N (--tool-result TEXT|@file | "
        "--answer TEXT|@file) --resume-in claude|codex [--cwd DIR]",
        description="Replay the steps before the first edit from the trace, answer each "
        "edited step with its edit, then go live right after the last edit (or after "
        "--live-after N). Repeat --at with --tool-result/--answer for several edits, or "
        "give them in a JSON file with --edits. --loose never goes live: the recording "
        "plays on loosely after the edits. With -- CMD, any agent program is the forked one: "
        "CMD runs with ANTHROPIC_BASE_URL and OPENAI_BASE_URL serving the recorded prefix, "
        "the edit, then forwarding to the real provider (the model sees the edited tool "
        "result even though the program ran its real tool).",
    )
    p.add_argument("trace", help="the parent trace (never modified)")
    p.add_argument(
        "--at",
        action=EditsAction,
        metavar="N",
        help="the step to edit (repeat for several edits, each followed by its edit)",
    )
    p.add_argument(
        "--tool-result",
        action=EditsAction,
        metavar="TEXT|@file",
        help="new result for the tool step given by the last --at (@@TEXT: a text that "
        "begins with @)",
    )
    p.add_argument(
        "--answer",
        action=EditsAction,
        metavar="TEXT|@file",
        help="new answer for the model step given by the last --at: text, or JSON content "
        "blocks (text / tool_use)",
    )
    p.add_argument(
        "--error",
        action=EditsAction,
        nargs=0,
        help="mark the tool result given before it as an error",
    )
    p.add_argument(
        "--edits",
        metavar="FILE",
        help='edits as JSON: [{"at_step": N, "kind": "tool_result", "content": ..., '
        '"is_error": false} | {"at_step": N, "kind": "model_answer", "content": ...}, …]',
    )
    live = p.add_mutually_exclusive_group()
    live.add_argument("--live-after", type=int, metavar="N", help="go live after step N")
    live.add_argument(
        "--loose",
        action="store_true",
        help="never go live: play the recording on loosely after the edits (no agent needed)",
    )
    p.add_argument("--agent", help="module:attr of the agent (default: the trace's agent_ref)")
    p.add_argument("--trace-dir", help="where the fork's trace goes")
    add_resume_in(p)
    p.set_defaults(func=run_fork)

    r = sub.add_parser(
        "rewind",
        help="replay the first N steps for free and continue live from step N",
        usage="regista rewind TRACE --at N [--model NAME] [--agent M:A] [--trace-dir DIR] "
        "[-- CMD [ARGS...]]"
        "\n       regista rewind SESSION --at N --resume-in claude|codex [--cwd DIR]",
        description="Replay steps 0..N-1 from the trace for $0 (nothing re-executed) and let "
        "the agent carry on live from step N. A fork with no edit; the parent trace is only "
        "read. With -- CMD, any agent program is the one rewound (its calls before step N "
        "come from the tape, the rest go to the real provider; with --model NAME, asking "
        "for NAME whatever model the program names).",
    )
    r.add_argument("trace", help="the parent trace (never modified)")
    r.add_argument("--at", type=int, required=True, metavar="N", help="first live step")
    r.add_argument("--agent", help="module:attr of the agent (default: the trace's agent_ref)")
    r.add_argument(
        "--model",
        metavar="NAME",
        help="carry on with this model instead of the agent's: a regista Agent's live calls "
        "use it; with -- CMD, regista sends each live call of the program with its model "
        "field set to NAME (the steps before N are served as recorded)",
    )
    r.add_argument("--trace-dir", help="where the new trace goes")
    add_resume_in(r)
    r.set_defaults(func=run_rewind)


def _edits_of(args: argparse.Namespace) -> list[tuple[int, Any]]:
    from regista.fork import ModelAnswerEdit, ToolResultEdit

    plan: list[list[Any]] = getattr(args, "plan", None) or []
    if plan and args.edits:
        raise UserError("give the edits with --at or with --edits, not both")
    if args.edits:
        return parse_edits_file(read_text_file(args.edits), args.edits)
    if not plan:
        raise UserError("give an edit: --at N with --tool-result TEXT or --answer TEXT")
    edits: list[tuple[int, Any]] = []
    for step, kind, value, is_error in plan:
        if kind is None:
            raise UserError(f"--at {step} has no edit: follow it with --tool-result or --answer")
        if is_error and kind != "tool_result":
            raise UserError("--error marks a new tool result (--tool-result); an answer has none")
        if kind == "tool_result":
            edits.append((step, ToolResultEdit(read_arg(value), is_error=is_error)))
        else:
            edits.append((step, ModelAnswerEdit.parse(read_arg(value))))
    return edits


def run_fork(args: argparse.Namespace) -> Any:
    if getattr(args, "resume_in", None):
        return fork_back(args, _edits_of(args))
    if getattr(args, "child_command", None) is not None:
        return _fork_child(args, _edits_of(args), args.live_after, bool(args.loose))
    return _run_fork(args)


def run_rewind(args: argparse.Namespace) -> Any:
    if getattr(args, "resume_in", None):
        return fork_back(args, [(args.at, None)])
    if getattr(args, "child_command", None) is not None:
        from regista.trace.reader import Trace

        steps = Trace.load(args.trace).summary().steps
        if not 0 <= args.at < steps:
            raise UserError(
                f"step {args.at} does not exist: the trace has steps 0..{steps - 1}"
                if steps
                else "the trace has no steps to rewind to"
            )
        return _fork_child(args, [], args.at - 1, False, model=args.model)
    return _run_rewind(args)


def _fork_child(
    args: argparse.Namespace,
    edits: list[tuple[int, Any]],
    live_after: int | None,
    loose: bool,
    *,
    model: str | None = None,
) -> int:
    """``regista fork|rewind TRACE … -- CMD``: the prefix from the tape, then live (each
    live call with ``model`` in place of the program's, when given)."""
    from regista.cli.sdk_child import fork_child
    from regista.trace.reader import Trace

    if args.agent:
        raise UserError("--agent is for a regista Agent; with -- CMD the command is the agent")
    code, replay, paths = fork_child(
        args.trace,
        args.child_command,
        edits,
        live_after,
        loose=loose,
        trace_dir=args.trace_dir or ".regista/traces",
        model=model,
    )
    from regista.cli.cmd_replay import replay_line

    lines = [replay_line(replay).replace("replayed:", "recorded prefix:", 1)]
    if not paths:
        lines.append("fork: no model call was made, so no fork was written")
    for i, path in enumerate(paths):
        fork = Trace.load(path)
        what = _fork_what(edits, live_after) if i == 0 else "another conversation of the fork"
        what += f" with {model}" if model and i == 0 else ""
        lines += result_lines(_ForkOutcome.of(fork, path, replay, parent=i == 0), what)
    lines += [f"compare: regista-tui {args.trace} {path}" for path in paths[:1]]
    out(lines)
    return code


def _fork_what(edits: list[tuple[int, Any]], live_after: int | None) -> str:
    """What the summary calls the fork: ``fork at step 1`` (or ``rewind to step N``)."""
    if not edits:
        return f"rewind to step {(-1 if live_after is None else live_after) + 1}"
    at = sorted(n for n, _ in edits)
    return f"fork at step{'s' if len(at) > 1 else ''} {', '.join(map(str, at))}"


@dataclass
class _ForkOutcome:
    """A fork written by the server, as :func:`result_lines` reads a harness fork's result."""

    trace_path: Path
    stop_reason: str | None
    steps: int
    cost_usd: float | None
    output: str | None
    recorded_steps: int = 0
    edited_steps: int = 0
    live_steps: int = 0
    loose_steps: int = 0
    matched: dict[int, bool] = field(default_factory=dict)
    parent_session_id: str = ""
    parent_stop_reason: str | None = None
    parent_cost_usd: float | None = None

    @classmethod
    def of(cls, fork: Trace, path: Path, replay: Any, *, parent: bool) -> _ForkOutcome:
        s = fork.summary()
        sources = Counter(step.source for step in fork.steps())
        first = replay.first_edit
        loose = sum(
            1
            for step in fork.steps()
            if first is not None and step.index > first and step.source == "recorded"
        )
        outcome = cls(
            trace_path=path,
            stop_reason=s.stop_reason or "unfinished",
            steps=s.steps,
            cost_usd=s.cost_usd,
            output=None,  # the program printed its own
            recorded_steps=sources["recorded"],
            edited_steps=sources["edit"],
            live_steps=sources["live"],
            loose_steps=loose,
            matched=dict(replay.loose),
        )
        if parent:
            p = replay.trace.summary()
            outcome.parent_session_id = p.session_id
            outcome.parent_stop_reason = p.stop_reason
            outcome.parent_cost_usd = p.cost_usd
        return outcome


async def _run_fork(args: argparse.Namespace) -> int:
    from regista.fork import fork

    edits = _edits_of(args)
    try:
        result = await fork(
            args.trace,
            edits=edits,
            live_after=args.live_after,
            loose=args.loose,
            agent=args.agent,
            trace_dir=args.trace_dir,
        )
    except ReplayDivergence as exc:
        print(f"regista: {exc}", file=sys.stderr)
        return 1
    at = ", ".join(str(n) for n in result.edited_at)
    out(result_lines(result, f"fork at step{'s' if len(result.edited_at) > 1 else ''} {at}"))
    return 0


async def _run_rewind(args: argparse.Namespace) -> int:
    from regista.fork import rewind

    try:
        result = await rewind(
            args.trace, args.at, args.agent, trace_dir=args.trace_dir, model=args.model
        )
    except ReplayDivergence as exc:
        print(f"regista: {exc}", file=sys.stderr)
        return 1
    what = f"rewind to step {args.at}" + (f" with {args.model}" if args.model else "")
    out(result_lines(result, what))
    return 0
