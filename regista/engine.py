"""The engine as the TUI sees it: the one module of regista's that ``regista_tui`` imports
beyond the public API (re-exports only; the engine never imports the TUI)."""

from __future__ import annotations

from regista.importers.detect import detect
from regista.importers.memory import LIVE_S, follow

__all__ = ["LIVE_S", "detect", "follow"]
