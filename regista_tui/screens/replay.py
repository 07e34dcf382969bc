"""What to paste into a terminal to point an agent at a replay of a run.

The run list's ``r`` starts a replay of the selected run on a regista server inside the TUI
(see :class:`regista.engine.ReplayDesk`) and opens this screen: the two environment lines,
and a short Python and TypeScript snippet. ``c`` copies the environment lines; Escape
closes it. The replay lives until the TUI quits.
"""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Label, Static

from regista.engine import ReplayHandoff

__all__ = ["ReplayPaste"]


class ReplayPaste(ModalScreen[None]):
    """The environment lines and snippets of a replay, to paste into a terminal."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q", "close", "Close", id="replay.close"),
        Binding("c", "copy", "Copy env", id="replay.copy", tooltip="Copy the two env lines"),
    ]
    DEFAULT_CSS = """
    ReplayPaste { align: center middle; background: $background 50%; }
    ReplayPaste > VerticalScroll { width: 90%; max-width: 110; height: auto; max-height: 95%;
                                   border: round $accent; background: $surface; padding: 0 1; }
    ReplayPaste .hint { color: $text-muted; width: 100%; }
    ReplayPaste .heading { text-style: bold; margin-top: 1; }
    ReplayPaste .code { width: 100%; color: $text; background: $boost; }
    """

    def __init__(self, handoff: ReplayHandoff) -> None:
        super().__init__()
        self.handoff = handoff

    def compose(self) -> ComposeResult:
        h = self.handoff
        with VerticalScroll() as box:
            box.border_title = f"Replay of {h.run}"
            box.border_subtitle = "c: copy the env lines · Escape: close"
            yield Label(
                f"A {h.mode} replay, served by this TUI at {h.server} until you quit it: "
                "every model call is answered from the run, $0, no key.",
                classes="hint",
            )
            yield Label("In a terminal", classes="heading")
            yield Static(Text("\n".join(h.env_lines())), id="replay-env", classes="code")
            yield Label("Python", classes="heading")
            yield Static(Text(h.python_snippet()), id="replay-python", classes="code")
            yield Label("TypeScript", classes="heading")
            yield Static(Text(h.typescript_snippet()), id="replay-typescript", classes="code")

    def action_close(self) -> None:
        self.dismiss(None)

    def action_copy(self) -> None:
        self.app.copy_to_clipboard("\n".join(self.handoff.env_lines()) + "\n")
        self.notify("The two environment lines are copied")
