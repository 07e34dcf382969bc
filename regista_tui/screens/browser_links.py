"""The browser's links to other runs: the subagent a step started (Enter, Escape back) and
the folder's runs like this step (``L``)."""

from __future__ import annotations

from typing import Any

from textual import work

from regista import RegistaError
from regista_tui.screens.browser_base import BrowserBase

__all__ = ["LinkActions"]


class LinkActions(BrowserBase):
    """Open a subagent's run or the runs like this step; come back with Escape."""

    #: For a subagent's run: which step of which run started it ("" for the first run).
    started_by: str

    def action_open_subagent(self) -> None:
        from regista_tui.subagents import open_subagent, subagent_link

        if not len(self.index):
            return
        pos = self.timeline.cursor
        link = subagent_link(self.index.step(pos))
        if link is None:
            self.set_status("This step started no subagent")
            return
        try:
            child = open_subagent(self.index, link)
        except RegistaError as exc:
            self._refuse(str(exc), "Cannot open the subagent")
            return
        step = self.index.steps[pos].index
        parent = f"subagent of step {step} · Escape: back"
        from regista_tui.screens.browser import BrowserScreen

        self.app.push_screen(BrowserScreen(child, notice=parent, parent=parent))

    def action_back(self) -> None:
        if self.started_by:
            self.app.pop_screen()

    def action_like(self) -> None:
        from regista_tui.like import like_words

        if not len(self.index):
            return
        entry = self.index.steps[self.timeline.cursor]
        try:
            words = like_words(self.index.step(self.timeline.cursor))
        except RegistaError as exc:
            self.set_status(str(exc), error=True)
            return
        if not words:
            self.set_status(f"Step {entry.index} has no words to recall runs like it by.")
            return
        self.set_status(f"Recalling runs like step {entry.index} by {words!r}…")
        self._like(entry.index, words)

    @work(thread=True, exclusive=True, group="like")
    def _like(self, number: int, words: str) -> None:
        from regista_tui.like import runs_like

        try:
            listing, hits = runs_like(self.index.path, words)
        except (RegistaError, OSError) as exc:
            self.app.call_from_thread(self.set_status, f"Recall failed: {exc}", error=True)
            return
        self.app.call_from_thread(self._liked, number, words, listing, hits)

    def _liked(self, number: int, words: str, listing: Any, hits: list[Any]) -> None:
        from regista_tui.screens.runs import RunsScreen

        folder = self.index.path.parent
        if not hits:
            self.set_status(f"No earlier runs found in {folder} like step {number} ({words!r}).")
            return
        self.set_status(f"Runs like step {number}, recalled by {words!r}")
        if self.app.screen is self:
            found = RunsScreen(listing, str(folder), recalled=(words, hits), back=True)
            self.app.push_screen(found)
