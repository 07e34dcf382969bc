"""The traces folder as a library: list runs, recall earlier ones by their words.

``regista.store.runs`` reads runs cheaply (first and last line of each trace);
``regista.store.recall`` keeps a SQLite FTS5 index beside the traces, rebuilt from them
whenever it is missing or damaged (the traces stay the only source of truth).
"""

from __future__ import annotations

from regista.store.runs import DEFAULT_DIR, RunInfo, RunList, filter_runs, list_runs, read_run

__all__ = ["DEFAULT_DIR", "RunInfo", "RunList", "filter_runs", "list_runs", "read_run"]
