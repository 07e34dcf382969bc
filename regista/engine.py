"""The engine as the TUI sees it: the one module of regista's that ``regista_tui`` imports
beyond the public API (re-exports only; the engine never imports the TUI)."""

from __future__ import annotations

from regista.errors import RegistaError, UserError
from regista.importers.detect import detect
from regista.importers.memory import LIVE_S, follow
from regista.server.handoff import REPLAY_KEY, ReplayDesk, ReplayHandoff

__all__ = [
    "LIVE_S",
    "REPLAY_KEY",
    "RegistaError",
    "ReplayDesk",
    "ReplayHandoff",
    "UserError",
    "detect",
    "follow",
]
