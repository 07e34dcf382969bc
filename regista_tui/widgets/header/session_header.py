"""The session header: task, model, outcome, counts, cost and replay / fork links."""

from __future__ import annotations

import os
import time
from typing import Any

from rich.text import Text
from textual.widgets import Static

from regista.engine import TraceIndex

__all__ = ["SessionHeader", "model_label"]


def _started(index: TraceIndex, name: str) -> Any:
    """A field of the ``session.start``: validated, or as written while a cold scan has not
    loaded the event models yet (the first screen of a big trace)."""
    if index.start is not None:
        return getattr(index.start, name)
    return (index.start_data or {}).get(name)


def model_label(index: TraceIndex) -> str:
    """How a person should see who answered: "scripted" for the scripted provider."""
    if index.start is None and index.start_data is None:
        return "?"
    provider = _started(index, "provider")
    if provider == "scripted":
        return "scripted"
    return f"{_started(index, 'model')} ({provider})"


def _count(n: int, what: str) -> str:
    return f"{n} {what}" if n == 1 else f"{n} {what}s"


class SessionHeader(Static):
    """Two lines about the session, refreshed as the index grows."""

    DEFAULT_CSS = """
    SessionHeader { height: 2; background: $panel; padding: 0 1;
                    text-wrap: nowrap; text-overflow: ellipsis; }
    """

    def __init__(
        self, index: TraceIndex, *, label: str = "", notice: str = "", id: str | None = None
    ) -> None:
        # The content is there from the start, so that the first frame has it.
        text = _header_text(index, label, notice)
        super().__init__(text, id=id, markup=False)
        self.index = index
        self.label = label
        self._shown = text.plain

    def refresh_header(self, notice: str = "") -> None:
        text = _header_text(self.index, self.label, notice)
        if text.plain != self._shown:  # an unchanged header costs no repaint
            self._shown = text.plain
            self.update(text, layout=False)  # its two lines stay two lines


#: A session with no ``session.end`` whose file has been still this long is shown as
#: unfinished (it crashed or was killed), not as running. A live session writes every
#: model answer and tool result; a tool or model call that takes longer is rare.
STALE_S = 60.0


def last_written(ix: TraceIndex) -> float | None:
    """When the trace file was last written (``time.time()`` seconds), if known."""
    try:
        return os.stat(ix.path).st_mtime
    except OSError:
        return None


def _ago(seconds: float) -> str:
    if seconds < 60:
        return f"{max(0, int(seconds))} s ago"
    if seconds < 3600:
        return f"{int(seconds // 60)} min ago"
    if seconds < 86400:
        return f"{int(seconds // 3600)} h ago"
    return f"{int(seconds // 86400)} d ago"


def _unfinished(ix: TraceIndex, now: float | None) -> tuple[str, str]:
    """Running, or cut short: told apart by how long the file has been still."""
    written = last_written(ix)
    now = time.time() if now is None else now
    age = None if written is None else now - written
    if age is not None and age >= STALE_S and getattr(ix, "follows", False):
        # a coding agent's session waits for its user: still going on, not crashed
        return f"  ◌ in progress, idle: last written {_ago(age)}", "yellow"
    if age is not None and age >= STALE_S:
        what = "crashed / unfinished" if not ix.truncated else "crashed mid-write"
        return f"  ✕ {what} (no session.end), last written {_ago(age)}", "bold red"
    return "  ◌ running", "yellow"


def _turns_so_far(ix: TraceIndex) -> int:
    """The turns of a run without its end, as ``show`` counts them: one more than the
    ``turn`` of its last model answer (a turn is what the person typed, not a model call)."""
    import orjson

    for entry in reversed(ix.steps):
        if entry.kind == "model" and entry.complete:
            try:
                turn = orjson.loads(ix.raw_line(entry.lines[-1])).get("turn")
            except (orjson.JSONDecodeError, AttributeError, OSError):
                return 0
            return turn + 1 if isinstance(turn, int) and turn >= 0 else 0
    return 0


def _header_text(ix: TraceIndex, label: str, notice: str, now: float | None = None) -> Text:
    end = ix.end
    started = ix.start is not None or ix.start_data is not None
    task = " ".join(str((_started(ix, "task") or "") if started else "?").split())
    # Each line puts what a narrow screen must keep first: the task (also in step 0)
    # comes after the notice and links, the step counts after the outcome, cost,
    # errors and denials.
    line1 = Text(no_wrap=True, overflow="ellipsis")
    if label:
        line1.append(f"{label} ", "bold reverse")
        line1.append(" ")
    if notice:
        line1.append(f"{notice}  ", "bold yellow")
    forked_from = _started(ix, "forked_from")
    if isinstance(forked_from, dict) and forked_from:
        ff = forked_from
        line1.append(
            f"fork at step {ff.get('at_step', '?')} of {ff.get('session_id', '?')}  ",
            "magenta",
        )
    replay_of = _started(ix, "replay_of")
    if replay_of:
        line1.append(f"replay of {replay_of}  ", "magenta")
    line1.append(task or "(no task)", "bold")
    line2 = Text(no_wrap=True, overflow="ellipsis")
    line2.append(model_label(ix), "cyan")
    if end is not None:
        from regista.engine import OUTCOME_COLOURS, Savings, cost_text, end_outcome, outcome_text

        outcome = end_outcome(end)
        style = "bold red" if outcome == "failed" else OUTCOME_COLOURS[outcome]
        line2.append("  ● ", style).append(outcome_text(end.stop_reason, outcome), style)
        # No price for the model (or a step's) means the cost is not known, not $0.
        line2.append(f" · {cost_text(end.cost_usd)}", "" if end.cost_usd is not None else "dim")
        saved = Savings.from_dict((end.replay or {}).get("saved"))
        if saved is not None and saved.calls:
            what = cost_text(saved.cost_usd)
            line2.append(f" · saved {what}, {saved.tokens:,} tok", "green")
    elif ix.scanned < ix.size and not ix.truncated:  # not read to the end yet
        line2.append(f"  ◌ reading… {100 * ix.scanned // max(1, ix.size)}%", "yellow")
    elif ix.ended:  # a cold scan met the end: how it ended shows once the models load
        line2.append("  ◌ reading…", "yellow")
    else:
        line2.append(*_unfinished(ix, now))
    # A denied call also has an error result: count it once, as a denial.
    errors, denied, tools = ix.steps.counts()
    if errors:
        line2.append(f" · {_count(errors, 'error')}", "bold red")
    if denied:
        line2.append(f" · {denied} denied", "bold yellow")
    turns = end.turns if end is not None else _turns_so_far(ix)
    line2.append(
        f"  {_count(len(ix.steps), 'step')} · {_count(turns, 'turn')} · "
        f"{_count(tools, 'tool call')}",
        "",
    )
    if end is not None:  # last: a narrow screen keeps the counts
        from regista.engine import tokens_of

        try:
            tokens = tokens_of(end.usage)
        except ValueError:  # an odd usage: the header shows none rather than fail
            tokens = None
        if tokens is not None and tokens.total:
            line2.append(f" · {tokens.short()} tokens", "dim")
    text = Text("\n").join([line1, line2])
    text.no_wrap = True
    text.overflow = "ellipsis"
    return text
