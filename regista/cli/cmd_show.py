"""``regista show TRACE``: a readable summary of a session and a table of its steps."""

from __future__ import annotations

import argparse
import gc
import re
import warnings
from collections.abc import Callable
from typing import Any

from regista._gc import paused_gc
from regista.errors import TraceWarning
from regista.savings import Savings
from regista.trace.events import (
    ContextCompaction,
    ErrorEvent,
    LlmResponseEvent,
    PermissionDecision,
    ToolResult,
)
from regista.trace.reader import Trace, TraceSummary
from regista.trace.steps import Step
from regista.vocab import cost_amount
from regista.vocab import step_gist as gist

__all__ = ["register", "run"]

GIST_WIDTH = 90


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``show`` subcommand."""
    p = sub.add_parser(
        "show",
        help="print a trace's summary and its steps",
        description="Print who ran what and how it ended, then one line per step "
        "(model calls, tool calls, compactions) with tokens, durations and markers for "
        "errors, denials and compactions.",
    )
    p.add_argument("trace", metavar="TRACE", help="the trace file (.jsonl)")
    p.add_argument(
        "--full", action="store_true", help="do not shorten the task, output and step gists"
    )
    p.set_defaults(func=run, exit_fast=True)


def run(args: argparse.Namespace) -> int:
    # The whole trace stays in memory until the process ends and makes no reference
    # cycles: the cyclic collector would walk it again and again for nothing (and once
    # more right after a pause: a process that ends with the command never resumes it).
    if getattr(args, "standalone", False):
        gc.disable()
    with paused_gc():
        with warnings.catch_warnings():
            # A dropped half-written last line is shown in the header instead.
            warnings.simplefilter("ignore", TraceWarning)
            trace = Trace.load(args.trace, messages=False)

        from rich.console import Console

        console = Console(highlight=False)
        console.print(header(trace, None if args.full else GIST_WIDTH))
        print_steps(console, trace, None if args.full else console.width)
    return 0


# -- the header --------------------------------------------------------------------------


def _cost(value: float | None) -> str:
    known = value is not None
    return cost_amount(value) + ("" if known else " (a model without a known price)")


_WORD = re.compile(r"\S+")
# C0 and C1 control characters (but the newlines between rows): a trace's text must not
# move the cursor, ring the bell or start an escape sequence in the terminal.
_CONTROL = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f]")


def _short(text: str, width: int | None) -> str:
    """``text`` on one line (runs of white space made one space), cut to ``width``."""
    if width is None:
        return " ".join(text.split())
    # Collapsing a prefix gives a prefix of the collapsed text: when it is already longer
    # than the width, the cut is known without reading on (the common case, in C).
    head = " ".join(text[: 2 * width + 16].split())
    if len(head) > width:
        return head[: width - 1] + "…"
    words: list[str] = []
    length = -1
    for match in _WORD.finditer(text):  # a long text is read only as far as it shows
        words.append(match.group())
        length += 1 + len(words[-1])
        if length > width:
            break
    joined = " ".join(words)
    return joined if len(joined) <= width else joined[: width - 1] + "…"


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _outcome(s: TraceSummary) -> str:
    parts = [s.stop_reason or "[yellow]unfinished[/] (no session.end)"]
    if s.stop_reason in ("error", "cancelled", "max_turns", "diverged"):
        parts[0] = f"[red]{parts[0]}[/]"
    elif s.stop_reason:
        parts[0] = f"[green]{parts[0]}[/]"
    parts += [_count(s.turns, "turn"), _count(s.steps, "step"), _count(s.tool_calls, "tool call")]
    if s.errors:
        parts.append(f"[red]{s.errors} error{'s' if s.errors > 1 else ''}[/]")
    if s.denials:
        parts.append(f"[yellow]{s.denials} denied[/]")
    if s.compactions:
        parts.append(f"[cyan]{s.compactions} compaction{'s' if s.compactions > 1 else ''}[/]")
    return " · ".join(parts)


def header(trace: Trace, width: int | None = GIST_WIDTH) -> Any:
    """The session at a glance, as a rich renderable."""
    from rich.markup import escape
    from rich.table import Table

    s = trace.summary()
    start, end = trace.start, trace.end
    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="bold")
    grid.add_column()

    def row(label: str, value: str, *, markup: bool = False) -> None:
        grid.add_row(label, value if markup else escape(_CONTROL.sub("", value)))

    name = trace.path.name if trace.path is not None else ""
    row("Session", f"{s.session_id}  {name}".rstrip())
    if start.metadata.get("synthetic"):
        grid.add_row("", "[dim]synthetic (a sample made with an offline model)[/]")
    row("Task", _short(s.task, width))
    row("Model", f"{s.model} · provider {s.provider}")
    row("Outcome", _outcome(s), markup=True)
    usage = s.usage
    row("Tokens", f"in {usage.input_tokens:,} · out {usage.output_tokens:,}")
    row("Cost", _cost(s.cost_usd))
    if end is not None and end.duration_ms:
        row("Duration", f"{end.duration_ms / 1000:.2f} s")
    if s.output:
        row("Output", _short(s.output, width))
    if end is not None and end.error:
        grid.add_row("Error", f"[red]{escape(_CONTROL.sub('', _short(end.error, width)))}[/]")
    if start.agent_ref:
        row("Agent", start.agent_ref)
    if s.replay_of:
        row("Replay of", s.replay_of)
    if s.forked_from:
        f = s.forked_from
        row("Forked from", f"{f.get('session_id', '?')} at step {f.get('at_step', '?')}")
    if end is not None and end.replay:
        r = end.replay
        row(
            "Steps from",
            f"{r.get('recorded', 0)} recorded · {r.get('edit', 0)} edited · "
            f"{r.get('live', 0)} live",
        )
        saved = Savings.from_dict(r.get("saved"))
        if saved is not None and saved.calls:
            row("Savings", saved.describe())
    if trace.truncated:
        grid.add_row(
            "Note",
            "[yellow]the last line was half-written (the process died while writing it) "
            "and was left out[/]",
        )
    elif end is None:
        grid.add_row("Note", "[yellow]the session has no end: it was interrupted[/]")
    return grid


# -- the steps ---------------------------------------------------------------------------


def _counts(usage: dict[str, Any] | None) -> str:
    if not usage:
        return ""
    return f"{usage.get('input_tokens', 0):,}/{usage.get('output_tokens', 0):,}"


def _columns(step: Step, mixed: bool) -> tuple[str, str, str]:
    """A step's tokens, milliseconds and markers (rich markup), from one look at its events.

    ``mixed``: the run mixes recorded and live steps (a replay, resume or fork), so the
    live ones are tagged too.
    """
    roles = step.roles()
    response: LlmResponseEvent | None = roles.get(LlmResponseEvent)
    result: ToolResult | None = roles.get(ToolResult)
    compaction: ContextCompaction | None = roles.get(ContextCompaction)
    decision: PermissionDecision | None = roles.get(PermissionDecision)
    tokens = ""
    if step.kind == "model" and response is not None:
        tokens = _counts(response.response.get("usage"))
    elif step.kind == "compaction" and compaction is not None:
        tokens = _counts(compaction.usage)
    denied = decision is not None and not decision.allowed
    ms = ""
    if not denied:  # a denied tool never ran
        ev: Any = response or result or compaction
        value = getattr(ev, "duration_ms", None)
        ms = "" if value is None else f"{value:,.0f}"
    is_error = ErrorEvent in roles or (result is not None and result.is_error)
    marks = []
    if denied:
        marks.append("[yellow]denied[/]")
    elif is_error:
        marks.append("[red]error[/]")
    if not step.complete and not is_error:  # a failed call: its error says why
        marks.append("[yellow]unfinished[/]")
    source = step.source
    if source != "live":
        marks.append(f"[magenta]{source}[/]")
    elif mixed:
        marks.append("[green]live[/]")
    return tokens, ms, " ".join(marks)


# Text made only of characters one cell wide (Latin, Greek, Cyrillic, punctuation, arrows,
# box drawing) is as wide as it is long; anything else is measured by rich.
_NARROW = re.compile(
    "[\x20-\x7e\xa0-\u02ff\u0370-\u0482\u2010-\u2027\u2190-\u21ff\u2500-\u25ff]*"
).fullmatch


def steps_lines(trace: Trace, width: int | None = None) -> tuple[list[str], list[str]]:
    """The table of steps as lines of text under a header line, in aligned columns, and
    each step's markers (rich markup, drawn after its line).

    Lines are laid out here rather than by a rich ``Table``, which measures and renders
    every cell and takes seconds for a trace of thousands of steps.

    Args:
        width: The width of the whole table; ``None`` shows every gist in full.
    """
    from rich.cells import cell_len as wide_len
    from rich.text import Text

    def cell_len(text: str) -> int:
        return len(text) if text.isascii() or _NARROW(text) else wide_len(text)

    titles: dict[str, str] = {}  # a few distinct names, each shortened once

    def title(step: Step) -> str:
        name = step.title
        short = titles.get(name)
        if short is None:
            short = titles[name] = _short(name, 18)
        return short

    steps = trace.steps()
    start = trace.start
    mixed = bool(start.replay_of or start.forked_from)
    rows = []
    marks = []
    for step in steps:
        tokens, ms, mark = _columns(step, mixed)
        rows.append([str(step.index), step.kind, title(step), gist(step), tokens, ms])
        marks.append(mark)
    names = ["#", "kind", "name", "what happened", "tokens", "ms"]
    name_cells: dict[str, int] = {}  # the few distinct names, each measured once

    def name_len(text: str) -> int:
        n = name_cells.get(text)
        if n is None:
            n = name_cells[text] = cell_len(text)
        return n

    def natural(i: int, measure: Callable[[str], int] = len) -> int:
        # Every column but the name and the gist is ASCII: its width is its length.
        return max([cell_len(names[i]), *map(measure, (r[i] for r in rows))])

    # Every column but the gist keeps its natural width; the gist gets what is left.
    widths = [natural(0), natural(1), natural(2, name_len), 0, natural(4), natural(5)]
    gist_width = None
    if width is not None:
        mark_width = max([0, *(Text.from_markup(m).cell_len for m in set(marks))])
        gist_width = max(20, width - sum(widths) - mark_width - 2 * len(names))
    for r in rows:  # one line each, however many lines the text had
        r[3] = _short(r[3], gist_width)
    gist_cells = [cell_len(r[3]) for r in rows]
    widths[3] = max([cell_len(names[3]), *gist_cells])
    w0, w1, w2, w3, w4, w5 = widths

    def pad(cell: str, width: int) -> str:
        return cell + " " * (width - cell_len(cell))

    head = (
        f"{names[0]:>{w0}}  {names[1]:<{w1}}  {pad(names[2], w2)}  {pad(names[3], w3)}  "
        f"{names[4]:>{w4}}  {names[5]:>{w5}}"
    )
    body = [
        f"{r[0]:>{w0}}  {r[1]:<{w1}}  {r[2]}{' ' * (w2 - name_len(r[2]))}  "
        f"{r[3]}{' ' * (w3 - cells)}  {r[4]:>{w4}}  {r[5]:>{w5}}  "
        for r, cells in zip(rows, gist_cells, strict=True)
    ]
    text = "\n".join([head, *body])
    return _CONTROL.sub("", text).split("\n"), marks


def print_steps(console: Any, trace: Trace, width: int | None = None) -> None:
    """Print the table of steps on ``console`` (see :func:`steps_lines`).

    The lines go out as plain text in one write; only the header and the markers are
    styled, each distinct one rendered once.
    """
    from rich.text import Text

    lines, marks = steps_lines(trace, width)
    styled: dict[str, str] = {}

    def render(markup: str, style: str = "") -> str:
        key = style + "\0" + markup
        if key not in styled:
            with console.capture() as capture:
                console.print(Text.from_markup(markup, style=style), end="", soft_wrap=True)
            styled[key] = capture.get()
        return styled[key]

    from rich.markup import escape

    out = [render(escape(lines[0]), "bold")]
    out += [line + render(m) if m else line for line, m in zip(lines[1:], marks, strict=True)]
    console.file.write("\n".join(out) + "\n")
    console.file.flush()
