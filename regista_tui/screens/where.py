"""``w``: where the time and the money went, per tool, model, turn or subagent."""

from __future__ import annotations

from typing import Any, ClassVar

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import ModalScreen
from textual.widgets import DataTable, Static

from regista.engine import BY, RegistaError, breakdown, compact_count, cost_amount, subagent_of

__all__ = ["WhereScreen"]


class WhereScreen(ModalScreen[None]):
    """The run's tokens (cache split), cost and time per group, with their share."""

    DEFAULT_CSS = """
    WhereScreen { align: center middle; }
    WhereScreen > #where-box { width: 96%; max-width: 120; height: auto; max-height: 90%;
        border: round $accent; background: $panel; padding: 0 1; }
    WhereScreen #where-title { height: 1; }
    WhereScreen DataTable { height: auto; max-height: 30; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("tab,w", "next_by", "By …", tooltip="Group by tool, model, turn or subagent"),
        Binding("escape,q", "dismiss_where", "Close"),
    ]

    def __init__(self, index: Any) -> None:
        super().__init__()
        self.index = index
        self.by = "tool"
        self.steps: list[Any] | None = None

    def compose(self) -> ComposeResult:
        from textual.containers import Vertical

        with Vertical(id="where-box"):
            yield Static(id="where-title")
            yield DataTable(id="where-table", cursor_type="row", zebra_stripes=True)
            yield Static(
                Text(
                    "IN / OUT tokens, C.READ cache reads, C.WRITE cache writes (5 min + 1 h); "
                    "% of the run's cost and time · tab: by tool, model, turn, subagent · "
                    "Escape: close",
                    "dim",
                )
            )

    def on_mount(self) -> None:
        self._title("reading the steps…")
        self._read()

    @work(thread=True, exclusive=True, group="where")
    def _read(self) -> None:
        try:
            steps = [self.index.step(pos) for pos in range(len(self.index))]
        except RegistaError as exc:
            self.app.call_from_thread(self._title, f"cannot read the run: {exc}")
            return
        self.app.call_from_thread(self._show, steps)

    def _title(self, note: str = "") -> None:
        head = Text("Where the time and the money went · by ", "bold")
        for b in BY:
            head.append(b, "reverse" if b == self.by else "dim")
            head.append(" ")
        if note:
            head.append(f" {note}", "dim")
        self.query_one("#where-title", Static).update(head)

    def _show(self, steps: list[Any] | None = None) -> None:
        if steps is not None:
            self.steps = steps
        if self.steps is None:
            return
        groups = breakdown(self.steps, self.by, subagent=subagent_of(self.index.path))
        total_cost = sum(g.cost or 0.0 for g in groups)
        total_ms = sum(g.ms for g in groups)
        table = self.query_one(DataTable)
        table.clear(columns=True)
        table.add_columns(self.by.upper(), "STEPS", "IN", "OUT", "C.READ", "C.WRITE", "COST",
                          "%", "TIME", "%")  # fmt: skip
        for g in groups:
            t = g.tokens
            table.add_row(
                g.key,
                f"{g.steps:,}",
                compact_count(t.input),
                compact_count(t.output),
                compact_count(t.cache_read),
                compact_count(t.cache_write),
                cost_amount(g.cost),
                f"{100 * (g.cost or 0) / total_cost:.0f}%" if total_cost and g.cost else "",
                f"{g.ms / 1000:.2f} s",
                f"{100 * g.ms / total_ms:.0f}%" if total_ms else "",
            )
        self._title()

    def action_next_by(self) -> None:
        self.by = BY[(BY.index(self.by) + 1) % len(BY)]
        self._show()

    def action_dismiss_where(self) -> None:
        self.dismiss(None)
