"""The browser's fork actions: edit a step (``e``) or rewind to it (``r``), then fork live."""

from __future__ import annotations

from typing import Any

from textual import work

from regista import RegistaError
from regista_tui.screens.browser_base import BrowserBase

__all__ = ["ForkActions"]


class ForkActions(BrowserBase):
    """Edit / rewind: find the live half, ask the person, open the fork beside its original."""

    def action_edit(self) -> None:
        from regista_tui.edits import editor_content

        if not len(self.index) or not self._warmed():
            return
        pos = self.timeline.cursor
        try:
            content = editor_content(self.index.step(pos))
        except RegistaError as exc:
            self._refuse(str(exc), "This step cannot be edited")
            return
        self._prepare(pos, content)

    def action_rewind(self) -> None:
        if len(self.index) and self._warmed():
            self._prepare(self.timeline.cursor, None)

    def _warmed(self) -> bool:
        """The trace's start validated (at once, when a key comes before the models have
        loaded after the first screen): a fork needs its agent reference and tools."""
        try:
            self.index.warm()
        except RegistaError as exc:
            self._refuse(str(exc), "Cannot fork this trace")
            return False
        return True

    @work(thread=True, exclusive=True, group="live")
    def _prepare(self, pos: int, content: Any) -> None:
        """Find the live half (importing its module may be slow), then ask the person."""
        from regista_tui.live import resolve_live

        start = self.index.start
        try:
            ref = start.agent_ref if start is not None else None
            live = resolve_live(self.regista.agent, ref, self.regista.command, start)
        except RegistaError as exc:
            self.app.call_from_thread(self._refuse, str(exc), "No agent for the live half")
            return
        except Exception as exc:  # a broken agent module is one line, not a traceback
            message = f"{type(exc).__name__}: {exc}"
            self.app.call_from_thread(self._refuse, message, "No agent for the live half")
            return
        self.app.call_from_thread(self._ask, pos, content, live)

    def _ask(self, pos: int, content: Any, live: Any) -> None:
        from regista_tui.screens.edit import ConfirmRewind, EditStep

        if self.app.screen is not self:  # a key pressed twice: one prompt is enough
            return
        entry = self.index.steps[pos]
        number = entry.index
        if content is None:

            def rewind(yes: bool | None) -> None:
                if yes:
                    self._fork(number, None, live)

            self.app.push_screen(ConfirmRewind(number, live), rewind)
            return
        start = self.index.start
        tools = {str(t.get("name")) for t in (start.tools if start else [])}
        title = entry.tool or "model"

        def edited(edit: Any) -> None:
            if edit is not None:
                self._fork(number, edit, live)

        self.app.push_screen(EditStep(number, title, content, tools, live), edited)

    def _fork(self, step: int, edit: Any, live: Any) -> None:
        from regista_tui.forkrun import ForkRequest
        from regista_tui.screens.fork import ForkScreen

        trace_dir = self.regista.trace_dir
        if live.how == "none":  # a recorded program, and no command to run it here
            from regista.engine import fork_argv
            from regista_tui.screens.edit import ForkCommand

            start = self.index.start
            source = (start.metadata if start else {}).get("imported_from")
            fmt = source.get("format") if isinstance(source, dict) else None
            cli = {"claude-code": "claude", "codex": "codex"}.get(str(fmt))
            argv = fork_argv(str(self.index.path), step, edit, str(trace_dir), resume_in=cli)
            self.app.push_screen(ForkCommand(argv, str(self.index.path), resume_in=cli))
            return
        request = ForkRequest(self.index.path, step, edit, live, trace_dir)
        self.set_status("")
        self.app.push_screen(ForkScreen(request))
