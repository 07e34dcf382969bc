"""``regista show TRACE``: a readable summary of a session and a table of its steps."""

from __future__ import annotations

import argparse
import gc
import re
import warnings
from itertools import compress, repeat
from operator import add, not_, sub
from typing import TYPE_CHECKING, Any, cast

from regista._gc import paused_gc
from regista.breakdown import run_ms
from regista.cli.show_pass import Glance, StepsPass
from regista.errors import TraceWarning
from regista.trace.listing import Listing
from regista.vocab import cost_amount

if TYPE_CHECKING:
    from regista.trace.reader import Trace

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
    p.add_argument(
        "--json",
        action="store_true",
        help="print the run's facts (outcome, counts, tokens, cost with its basis) as JSON",
    )
    p.add_argument(
        "--by",
        choices=["tool", "model", "turn", "subagent"],
        help="where the time and the money went: tokens (cache split), cost and time per "
        "tool, model, turn or subagent, with their share of the run",
    )
    p.set_defaults(func=run, exit_fast=True)


def run(args: argparse.Namespace) -> int:
    if getattr(args, "by", None):
        from regista.cli.show_by import run_by

        return run_by(args)
    # The whole trace stays in memory until the process ends and makes no reference
    # cycles: the cyclic collector would walk it again and again for nothing (and once
    # more right after a pause: a process that ends with the command never resumes it).
    # What it read is freed by the OS then, not an object at a time (as main.run's exit_fast).
    held: list[Any] = _HELD if getattr(args, "standalone", False) else []
    if held is _HELD:
        gc.disable()
    with paused_gc():
        with warnings.catch_warnings():
            # A dropped half-written last line is shown in the header instead.
            warnings.simplefilter("ignore", TraceWarning)
            # Read without the event models where they have nothing to do (see
            # regista.trace.listing): a small trace shows before pydantic would load.
            trace = Listing.load(args.trace)
        held.append(trace)

        if getattr(args, "json", False):
            import json

            steps = StepsPass(trace, 0)
            held.append(steps)
            data = facts(steps.glance, trace)
            data["repeats"] = repeats_of(steps)
            print(json.dumps(data, indent=2))
            return 0
        from rich.console import Console

        console = Console(highlight=False)
        width = None if args.full else console.width
        steps = StepsPass(trace, _limit(width))
        held.append(steps)
        console.print(header(trace, None if args.full else GIST_WIDTH, steps.glance))
        print_steps(console, trace, width, steps)
        print_repeats(console, repeats_of(steps, each=False), width)
    return 0


#: What a command that ends its process read (see regista.cli.main.run's exit_fast).
_HELD: list[Any] = []


def repeats_of(steps: StepsPass, *, each: bool = True) -> dict[str, Any] | None:
    """The run's repeats and what they took (:func:`regista.loops.waste`; ``each``: every
    repeat too, else only their groups)."""
    from regista.breakdown import tokens_and_cost
    from regista.loops import RepeatFinder, waste
    from regista.tokens import tokens_of

    finder = RepeatFinder()
    by_index = {}
    for row in steps.rows:
        finder.add(row)  # a Row reads as a Step reads
        by_index[row.index] = row

    nothing = (tokens_of(None), 0.0)  # what tokens_and_cost gives of no event

    def took(n: int) -> Any:
        row = by_index[n]
        if row.response is None and row.compaction is None:  # a tool step's
            return nothing
        return tokens_and_cost(ev for ev in (row.response, row.compaction) if ev is not None)

    return waste(finder.repeats, took, each=each)


def print_repeats(console: Any, found: dict[str, Any] | None, width: int | None) -> None:
    """The steps that repeat earlier ones, under the table (nothing when there is none):
    one line per group of repeats (:func:`regista.loops.group_repeats`), the most wasteful
    first, at most :data:`~regista.loops.GROUPS_SHOWN` of them: a run that loops ten
    thousand times prints a few lines, not ten thousand (``--json`` has every repeat)."""
    if not found:
        return
    from rich.markup import escape

    from regista.loops import GROUPS_SHOWN, describe_group, group_repeats
    from regista.tokens import Tokens

    tokens = Tokens(**{k: v for k, v in found["tokens"].items() if k != "total"})
    n = found["count"]
    console.print(
        f"[bold]Repeats[/]   {n} step{'s' if n != 1 else ''} repeat earlier ones: "
        f"{tokens.total:,} tokens · {cost_amount(found['cost_usd'])}"
    )
    groups = found.get("groups")
    if groups is None:  # a view's own dict, without the groups: made here
        from regista.loops import Repeat

        empty = (Tokens(), 0.0)
        groups = group_repeats([Repeat(**r) for r in found["repeats"]], lambda _: empty)
    for group in groups[:GROUPS_SHOWN]:
        head = f"{group['steps'][0]:>4} ↻ "
        room = None if width is None else max(10, width - len(head))
        text = _short(describe_group(group), room)
        console.print(head + escape(text), style="yellow", soft_wrap=width is None)
    left = len(groups) - GROUPS_SHOWN
    if left > 0:
        console.print(
            f"[dim]… and {left:,} more group{'s' if left != 1 else ''} (show --json for all)[/]"
        )


def facts(s: Glance, trace: Trace | Listing) -> dict[str, Any]:
    """``show --json``: the run's facts, as every view gives them."""
    from regista.breakdown import run_facts

    return run_facts(trace, s)


def _limit(width: int | None) -> int | None:
    """How much of each gist to make for a table ``width`` wide: the gist column is
    narrower, and a gist cut from this start is the same (one that turns out shorter is
    made again whole)."""
    return None if width is None else 2 * width + 16


# -- the header --------------------------------------------------------------------------


def _cost(s: Glance) -> str:
    """``$0.0320 (recorded)`` or ``unknown (no price for MODEL)``: a cost with its basis."""
    basis = s.cost_basis
    if s.cost_usd is None:
        return f"unknown ({basis.removeprefix('unknown: ')})"
    return f"{cost_amount(s.cost_usd)} ({basis})"


_WORD = re.compile(r"\S+")
# C0 and C1 control characters (but the newlines between rows): a trace's text must not
# move the cursor, ring the bell or start an escape sequence in the terminal.
_CONTROL = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f]")


def _short(text: str, width: int | None) -> str:
    """``text`` on one line (runs of white space made one space), cut to ``width``."""
    return _cut(text, width)[0]


def _cut(text: str, width: int | None) -> tuple[str, bool]:
    """:func:`_short` and whether it cut the text (then any longer text that begins with
    ``text`` is cut to the same line)."""
    if width is None:
        return " ".join(text.split()), False
    # Collapsing a prefix gives a prefix of the collapsed text: when it is already longer
    # than the width, the cut is known without reading on (the common case, in C).
    head = " ".join(text[: 2 * width + 16].split())
    if len(head) > width:
        return head[: width - 1] + "…", True
    words: list[str] = []
    length = -1
    for match in _WORD.finditer(text):  # a long text is read only as far as it shows
        words.append(match.group())
        length += 1 + len(words[-1])
        if length > width:
            break
    joined = " ".join(words)
    if len(joined) <= width:
        return joined, False
    return joined[: width - 1] + "…", True


def _cut_long(text: str, width: int) -> str | None:
    """:func:`_short` of ``text`` when its first words are longer than ``width`` (else
    ``None``: measure it whole). Its start taken as it is when collapsing white space would
    not change it (only single spaces, not first: the usual gist), as :func:`_cut` cuts it."""
    head = text[: width + 1]
    if len(head) > width and head.isprintable() and "  " not in head and head[0] != " ":
        return head[: width - 1] + "…"  # (isprintable: no white space but the space)
    head = " ".join(text[: 2 * width + 16].split())
    return head[: width - 1] + "…" if len(head) > width else None


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _outcome(s: Glance) -> str:
    from rich.markup import escape

    from regista.vocab import OUTCOME_COLOURS, outcome_text

    if s.status == "in_progress":
        parts = ["[yellow]unfinished[/] (no session.end)"]
    else:
        colour = OUTCOME_COLOURS[s.status]
        parts = [f"[{colour}]{escape(outcome_text(s.stop_reason, s.status))}[/]"]
    parts += [_count(s.turns, "turn"), _count(s.steps, "step"), _count(s.tool_calls, "tool call")]
    if s.errors:
        parts.append(f"[red]{s.errors} error{'s' if s.errors > 1 else ''}[/]")
    if s.denials:
        parts.append(f"[yellow]{s.denials} denied[/]")
    if s.compactions:
        parts.append(f"[cyan]{s.compactions} compaction{'s' if s.compactions > 1 else ''}[/]")
    return " · ".join(parts)


def header(
    trace: Trace | Listing, width: int | None = GIST_WIDTH, glance: Glance | None = None
) -> Any:
    """The session at a glance, as a rich renderable (``glance``: its summary, if known)."""
    from rich.markup import escape
    from rich.table import Table

    s = glance or StepsPass(trace, None).glance
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
    row("Tokens", s.tokens.text())
    row("Cost", _cost(s))
    took = run_ms(trace)
    if took:
        row("Duration", f"{took / 1000:.2f} s")
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
        from regista.savings import Savings

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


# Text made only of characters one cell wide (Latin, Greek, Cyrillic, punctuation, arrows,
# box drawing) is as wide as it is long; anything else is measured by rich.
_NARROW = re.compile(
    "[\x20-\x7e\xa0-\u02ff\u0370-\u0482\u2010-\u2027\u2190-\u21ff\u2500-\u25ff]*"
).fullmatch


def steps_lines(
    trace: Trace | Listing, width: int | None = None, steps: StepsPass | None = None
) -> tuple[list[str], list[str]]:
    """The table of steps as lines of text under a header line, in aligned columns, and
    each step's markers (rich markup, drawn after its line).

    Lines are laid out here rather than by a rich ``Table``, which measures and renders
    every cell and takes seconds for a trace of thousands of steps; each column is padded
    as a whole (``map`` over the rows, not a Python loop).

    Args:
        width: The width of the whole table; ``None`` shows every gist in full.
        steps: The trace's steps read for this width (read here if not given).
    """
    from rich.cells import cell_len as wide_len
    from rich.text import Text

    def cell_len(text: str) -> int:
        return len(text) if text.isascii() or _NARROW(text) else wide_len(text)

    def cells_of(texts: list[str]) -> list[int]:
        if _NARROW("".join(texts)):  # all one cell wide: each is as wide as it is long
            return list(map(len, texts))
        return list(map(cell_len, texts))

    start = trace.start
    mixed = bool(start.replay_of or start.forked_from)
    if steps is None:
        steps = StepsPass(trace, _limit(width))
    limit = steps.limit
    read = steps.rows
    rows = [row.columns(mixed, limit) for row in read]
    numbers = [str(row.index) for row in read]
    kinds: list[str] = [row.kind for row in read]
    titles, tokens, mss, marks, gists = map(list, zip(*rows, strict=True)) if rows else [[]] * 5
    # The few distinct names, each shortened, measured and cleaned of control characters once.
    names: dict[str, tuple[str, int]] = {}
    for title in set(titles):
        short = _short(title, 18)
        names[title] = (_CONTROL.sub("", short), cell_len(short))
    heads = ["#", "kind", "name", "what happened", "tokens", "ms"]
    # Every column but the gist keeps its natural width; the gist gets what is left. All
    # but the name and the gist are ASCII: their width is their length.
    w0 = max([len(heads[0]), *map(len, numbers)])
    w1 = max([len(heads[1]), *map(len, kinds)])
    w2 = max([cell_len(heads[2]), *(n[1] for n in names.values())])
    w4 = max([len(heads[4]), *map(len, tokens)])
    w5 = max([len(heads[5]), *map(len, mss)])
    if width is None:
        gists = [" ".join(g.split()) for g in gists]  # one line each
    else:
        mark_width = max([0, *(Text.from_markup(m).cell_len for m in set(marks))])
        gist_width = max(20, width - (w0 + w1 + w2 + w4 + w5) - mark_width - 2 * len(heads))
        # What _short does: a gist whose first words are already longer than the width is
        # cut there; the others are measured one by one below.
        cuts = list(map(_cut_long, gists, repeat(gist_width)))
        for i in compress(range(len(cuts)), map(not_, cuts)):  # the others, one by one
            gist, cut = _cut(gists[i], gist_width)
            if not cut and limit is not None and len(gists[i]) >= limit:
                gist = _short(read[i].whole_gist(), gist_width)  # made whole
            cuts[i] = gist
        gists = cast(list[str], cuts)
    gist_cells = cells_of(gists)
    w3 = max([cell_len(heads[3]), *gist_cells])
    head = (
        f"{heads[0]:>{w0}}  {heads[1]:<{w1}}  {heads[2]}{' ' * (w2 - cell_len(heads[2]))}  "
        f"{heads[3]}{' ' * (w3 - cell_len(heads[3]))}  {heads[4]:>{w4}}  {heads[5]:>{w5}}"
    )
    # Control characters are taken out after the columns are measured (as they were
    # counted); only a name or a gist can hold one.
    if _CONTROL.search("\n".join(gists)):
        gists = [_CONTROL.sub("", g) for g in gists]
    padded_names = {t: clean + " " * (w2 - cells) for t, (clean, cells) in names.items()}
    columns = [
        map(str.rjust, numbers, repeat(w0)),
        map(str.ljust, kinds, repeat(w1)),
        map(padded_names.__getitem__, titles),
        map(add, gists, map(" ".__mul__, map(sub, repeat(w3), gist_cells))),
        map(str.rjust, tokens, repeat(w4)),
        map(add, map(str.rjust, mss, repeat(w5)), repeat("  ")),
    ]
    return [head, *map("  ".join, zip(*columns, strict=True))], marks


def print_steps(
    console: Any, trace: Trace | Listing, width: int | None = None, steps: StepsPass | None = None
) -> None:
    """Print the table of steps on ``console`` (see :func:`steps_lines`).

    The lines go out as plain text in one write; only the header and the markers are
    styled, each distinct one rendered once.
    """
    from rich.text import Text

    lines, marks = steps_lines(trace, width, steps)
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
