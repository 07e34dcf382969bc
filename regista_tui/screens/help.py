"""The help screen: every key of the screen below it, from its bindings."""

from __future__ import annotations

from typing import Any, ClassVar

from rich.table import Table
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import Static

__all__ = ["HelpScreen", "key_table"]


def key_table(screen: Screen[Any]) -> Table:
    """A table of the keys active on ``screen`` and what they do."""
    table = Table(box=None, show_header=False, padding=(0, 2, 0, 0))
    table.add_column(style="bold cyan", no_wrap=True)
    table.add_column()
    seen: set[str] = set()
    for key, active in screen.active_bindings.items():
        binding = active.binding
        if not binding.description or (binding.action in seen and not binding.id):
            continue
        if screen.check_action(binding.action, ()) is False:  # e.g. Back on the first run
            continue
        seen.add(binding.action)
        keys = screen.app.get_key_display(binding)
        table.add_row(keys, binding.tooltip or binding.description)
        _ = key
    return table


class HelpScreen(ModalScreen[None]):
    """Keys of the screen it was opened from; any of Escape, ? or q closes it."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,question_mark,q", "close", "Close", id="help.close"),
    ]
    DEFAULT_CSS = """
    HelpScreen { align: center middle; background: $background 40%; }
    HelpScreen > VerticalScroll { width: 72; max-width: 95%; height: auto; max-height: 90%;
                                  border: round $accent; background: $surface; padding: 0 1; }
    """

    def __init__(self, table: Table) -> None:
        super().__init__()
        self._table = table

    def compose(self) -> ComposeResult:
        with VerticalScroll() as scroll:
            scroll.border_title = "Keys  (Esc to close)"
            yield Static(self._table)

    def action_close(self) -> None:
        self.dismiss(None)
