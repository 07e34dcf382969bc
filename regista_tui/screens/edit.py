"""Modals that start a fork: edit a step (``e``) and confirm a rewind (``r``); and, for
a recorded program with no command to run here, the command line that forks it.

The first two answer with ``dismiss(value)``: the edit (or ``True``) to fork, ``None`` (or
``False``) when the person backs out, and then nothing changes.
"""

from __future__ import annotations

import shlex
from typing import ClassVar

import orjson
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.css.scalar import Scalar
from textual.screen import ModalScreen
from textual.widgets import Button, Label, Static, Switch, TextArea

from regista import InvalidEditError, ModelAnswerEdit, ToolResultEdit
from regista_tui.edits import EditorContent, model_edit_from, tool_edit_from
from regista_tui.live import LiveHalf

__all__ = ["ConfirmRewind", "EditStep", "Editor", "ForkCommand"]

Edit = ToolResultEdit | ModelAnswerEdit

#: The editor's height: at most, and at least when the screen is short.
_EDITOR_MAX, _EDITOR_MIN = 24, 6

#: Results longer than this are not re-parsed on every key press.
_CHECK_LIMIT = 200_000


def _parses(text: str) -> bool:
    try:
        orjson.loads(text)
    except orjson.JSONDecodeError:
        return False
    return True


def _replayed(step: int) -> str:
    if step == 0:
        return "nothing replayed, "
    steps = "step 0" if step == 1 else f"steps 0–{step - 1}"
    return f"{steps} replayed from the recording for $0, "


#: The dialogs' look (shared by the editor and the rewind confirmation).
MODAL_CSS_PATH = "modal.tcss"

#: What the editor's border says about its keys.
EDITOR_KEYS = "ctrl+s fork · ctrl+a select all · esc cancel"


class Editor(TextArea):
    """The step's text: ctrl+a selects it all, as in most editors, to paste over it
    (Textual's own ctrl+a goes to the line's start, which Home does too; F7 still works)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+a", "select_all", "Select all", show=False),
    ]


class EditStep(ModalScreen[Edit | None]):
    """Edit a tool step's result (and is_error) or a model step's answer.

    Args:
        step: The step number.
        title: What the step is (``search_orders``, ``model``).
        content: What the editor starts with (from :func:`regista_tui.edits.editor_content`).
        tool_names: The agent's tools (a model answer may only call these).
        live: Who answers the live steps after the edit.
    """

    CSS_PATH = MODAL_CSS_PATH
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+s", "save", "Fork with this edit", id="edit.save", priority=True),
        Binding("escape", "cancel", "Cancel", id="edit.cancel"),
    ]

    def __init__(
        self, step: int, title: str, content: EditorContent, tool_names: set[str], live: LiveHalf
    ) -> None:
        super().__init__()
        self.step = step
        self.step_title = title
        self.content = content
        self.tool_names = tool_names
        self.live = live

    def compose(self) -> ComposeResult:
        c = self.content
        with Vertical() as box:
            what = "result" if c.kind == "tool" else "answer"
            box.border_title = f"Edit step {self.step} · {self.step_title} {what}"
            box.border_subtitle = EDITOR_KEYS
            if c.kind == "tool":
                yield Label(
                    "The tool result the agent sees at this step. JSON or plain text.",
                    classes="hint",
                )
            else:
                yield Label(
                    "The model's answer: plain text, or a JSON list of text / tool_use blocks.",
                    classes="hint",
                )
            yield Editor(
                c.text,
                language=c.language,
                soft_wrap=True,
                show_line_numbers=True,
                id="editor",
            )
            if c.kind == "tool":
                with Horizontal(id="edit-flags"):
                    yield Switch(value=c.is_error, id="is-error")
                    yield Label("is_error: the tool failed")
            if c.note:
                yield Label(c.note, classes="hint")
            yield Static(self._plan(), id="edit-plan")
            yield Static("", id="edit-error", classes="error", markup=False)

    def _plan(self) -> Text:
        text = Text()
        text.append("Fork: ", "bold")
        text.append(_replayed(self.step))
        text.append(f"step {self.step} answered with this edit, live after it: ")
        text.append(self.live.describe(), "cyan")
        return text

    def on_mount(self) -> None:
        self.query_one(TextArea).focus()

    def on_resize(self) -> None:
        self.call_after_refresh(self._fit)

    def _fit(self) -> None:
        """Shrink the editor so that what is under it (the plan, the error) stays on screen."""
        box = self.query_one("EditStep > Vertical", Vertical)
        editor = self.query_one(TextArea)
        room = int(self.size.height * 0.95) - box.styles.gutter.height
        error = self.query_one("#edit-error", Static)
        below = sum(w.outer_size.height for w in box.children if w not in (editor, error))
        below += max(3, error.outer_size.height)  # room for an error as the text changes
        fit = max(_EDITOR_MIN, min(_EDITOR_MAX, room - below))
        if editor.styles.max_height != Scalar.from_number(fit):
            editor.styles.max_height = fit

    def edit(self) -> Edit:
        """The edit the editor holds now.

        Raises:
            InvalidEditError: It is not a valid edit for this step.
        """
        text = self.query_one(TextArea).text
        if self.content.kind == "tool":
            is_error = self.query_one("#is-error", Switch).value
            return tool_edit_from(text, is_error, self.content)
        return model_edit_from(text, self.tool_names)

    def recorded(self) -> Edit | None:
        """The edit the editor started with: the step as it was recorded."""
        c = self.content
        try:
            if c.kind == "tool":
                return tool_edit_from(c.text, c.is_error, c)
            return model_edit_from(c.text, self.tool_names)
        except InvalidEditError:
            return None

    def action_save(self) -> None:
        error = self.query_one("#edit-error", Static)
        try:
            edit = self.edit()
        except InvalidEditError as exc:
            error.update(f"✗ {exc}")
            self.call_after_refresh(self._fit)
            self.app.bell()
            return
        if edit == self.recorded():
            # Forking with the recorded value changes nothing where it claims to.
            what = "result" if self.content.kind == "tool" else "answer"
            error.update(
                f"✗ unchanged: this is the recorded {what}. Change it first (ctrl+a "
                "selects all), or press Escape and r to rewind from this step."
            )
            self.app.bell()
            return
        self.dismiss(edit)

    @on(TextArea.Changed)
    def _changed(self, event: TextArea.Changed) -> None:
        note = self.query_one("#edit-error", Static)
        note.update("")
        c = self.content
        text = event.text_area.text
        if (c.was_json or c.blocks) and len(text) < _CHECK_LIMIT and not _parses(text):
            plain = "will be sent as plain text" if c.was_json else "must be a JSON list"
            note.update(Text(f"⚠ not valid JSON now: {plain}", "yellow"))

    def action_cancel(self) -> None:
        self.dismiss(None)


class ConfirmRewind(ModalScreen[bool]):
    """Say what a rewind to step N does and ask before doing it."""

    CSS_PATH = MODAL_CSS_PATH
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter,y", "confirm", "Rewind", id="rewind.confirm"),
        Binding("escape,n", "cancel", "Cancel", id="rewind.cancel"),
    ]

    def __init__(self, step: int, live: LiveHalf) -> None:
        super().__init__()
        self.step = step
        self.live = live

    def compose(self) -> ComposeResult:
        with Vertical() as box:
            box.border_title = f"Rewind to step {self.step}"
            text = Text()
            if self.step == 0:
                text.append("Nothing is replayed; ")
            else:
                text.append(_replayed(self.step).removesuffix(", ").capitalize() + "; ")
            text.append(f"from step {self.step} on, the agent runs live: ")
            text.append(self.live.describe(), "cyan")
            text.append(".\nIts tools really run; the fork writes a trace of its own.")
            yield Static(text)
            with Horizontal(classes="buttons"):
                yield Button("Rewind", variant="primary", id="rewind-yes")
                yield Button("Cancel", id="rewind-no")
            yield Label("enter rewind · esc cancel", classes="hint")

    @on(Button.Pressed, "#rewind-yes")
    def action_confirm(self) -> None:
        self.dismiss(True)

    @on(Button.Pressed, "#rewind-no")
    def action_cancel(self) -> None:
        self.dismiss(False)


class ForkCommand(ModalScreen[None]):
    """The ``regista fork … -- CMD`` line that runs a fork of a recorded program, to copy:
    the TUI was started without the program's command (``regista-tui TRACE -- CMD``).

    Args:
        argv: The ``regista fork|rewind`` arguments, up to ``--``.
        trace: The trace (for the other way: start the TUI with the command).
        resume_in: A Claude Code or Codex session (``claude`` / ``codex``): the line writes
            the fork back into that CLI (``--resume-in``), to continue it there.
    """

    CSS_PATH = MODAL_CSS_PATH
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("c", "copy", "Copy", id="forkcmd.copy"),
        Binding("escape,enter", "close", "Close", id="forkcmd.close"),
    ]

    def __init__(self, argv: list[str], trace: str, *, resume_in: str | None = None) -> None:
        super().__init__()
        #: The whole line, ``CMD`` standing for the program (e.g. ``python agent.py``).
        self.line = shlex.join(argv) if resume_in else f"{shlex.join(argv)} -- CMD"
        self.trace = trace
        self.resume_in = resume_in

    def compose(self) -> ComposeResult:
        if self.resume_in:
            name = "Claude Code" if self.resume_in == "claude" else "Codex"
            with Vertical() as box:
                box.border_title = f"Fork the {name} session"
                box.border_subtitle = "c copy · esc close"
                yield Label(
                    f"This is a {name} session: the fork is written back as a new session "
                    f"of the CLI (the original is untouched), and the line prints the command "
                    f"that continues it there. Run:",
                    classes="hint",
                )
                yield TextArea(self.line, read_only=True, soft_wrap=True, id="fork-command")
            return
        with Vertical() as box:
            box.border_title = "Fork the recorded program"
            box.border_subtitle = "c copy · esc close"
            yield Label(
                "This trace was recorded from a program (no regista Agent), so the fork runs "
                "that program again: its calls before the edit are answered from the "
                "recording for $0, the rest go live. Run, with CMD your program "
                "(e.g. python agent.py):",
                classes="hint",
            )
            yield TextArea(self.line, read_only=True, soft_wrap=True, id="fork-command")
            yield Label(
                f"Or start the debugger with it, and e forks here: "
                f"regista-tui {shlex.quote(self.trace)} -- CMD",
                classes="hint",
            )

    def on_mount(self) -> None:
        self.query_one(TextArea).focus()

    def action_copy(self) -> None:
        self.app.copy_to_clipboard(self.line)
        if self.resume_in:
            self.notify("The command is copied.", timeout=4)
            return
        self.notify("The command is copied: replace CMD with your program.", timeout=4)

    def action_close(self) -> None:
        self.dismiss(None)
