"""Small modal prompts that answer with ``dismiss(value)``: go to step, search."""

from __future__ import annotations

from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label

__all__ = ["GoToStep", "RecallPrompt", "SearchPrompt"]


class _Prompt(ModalScreen[str | None]):
    """One line of input; Enter answers it, Escape cancels (answers ``None``)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", id="prompt.cancel"),
    ]
    DEFAULT_CSS = """
    _Prompt { align: center middle; background: $background 40%; }
    _Prompt > Vertical { width: 50; height: auto; border: round $accent;
                         background: $surface; padding: 0 1; }
    _Prompt Label { color: $text-muted; width: 100%; }
    """

    title_text = ""
    placeholder = ""
    restrict: str | None = None

    def __init__(self, value: str = "") -> None:
        super().__init__()
        self._value = value

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(self.title_text)
            yield Input(value=self._value, placeholder=self.placeholder, restrict=self.restrict)

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value.strip() or None)

    def action_cancel(self) -> None:
        self.dismiss(None)


class GoToStep(_Prompt):
    """Answers the step number typed (as text), or ``None``."""

    title_text = "Go to step (number, Enter)"
    placeholder = "step number"
    restrict = r"[0-9]*"


class SearchPrompt(_Prompt):
    """Answers the text to search for across the steps, or ``None``."""

    title_text = "Search the steps (Enter; then n / N for next / previous)"
    placeholder = "text"


class RecallPrompt(_Prompt):
    """Answers the words to recall earlier runs by, or ``None``."""

    title_text = "Recall the runs that dealt with these words (Enter)"
    placeholder = "words"
