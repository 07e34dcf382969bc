"""What the browser's actions share: the trace, the cursor, the app and the status line.

The browser (:mod:`regista_tui.screens.browser`) is made of this base, its fork actions
(:mod:`~regista_tui.screens.browser_forks`) and its subagent and recall actions
(:mod:`~regista_tui.screens.browser_links`).
"""

from __future__ import annotations

from textual.screen import Screen
from textual.widgets import Static

from regista.engine import TraceIndex
from regista_tui.app import RegistaApp
from regista_tui.widgets.timeline.timeline import Timeline

__all__ = ["BrowserBase"]


class BrowserBase(Screen[None]):
    """One trace's screen: ``index`` is the trace, the timeline holds the cursor."""

    index: TraceIndex

    @property
    def regista(self) -> RegistaApp:
        """The app, typed: its settings (agent, trace folder, settle time) are read here."""
        app = self.app
        if not isinstance(app, RegistaApp):
            raise TypeError("The browser runs inside a RegistaApp")
        return app

    @property
    def timeline(self) -> Timeline:
        return self.query_one(Timeline)

    def set_status(self, text: str, *, error: bool = False) -> None:
        """One line under the panes (search results, "no more errors", …)."""
        status = self.query_one("#status", Static)
        status.set_class(error, "-error")
        status.update(text)

    def _refuse(self, message: str, title: str) -> None:
        self.set_status(message, error=True)
        self.notify(message, title=title, severity="error", timeout=8)
        self.app.bell()
