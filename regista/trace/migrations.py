"""Migrations of older trace schemas to :data:`SCHEMA_VERSION`.

Version 1 is the first schema, so there is nothing to migrate yet. When the schema
changes: bump ``SCHEMA_VERSION`` in ``events.py``, add a ``_v{N}_to_v{N+1}`` function
here, and describe the change in ``docs/trace-format.md``.
"""

from __future__ import annotations

from typing import Any

from regista.trace.events import SCHEMA_VERSION

__all__ = ["migrate"]

_MIGRATIONS: dict[int, Any] = {}


def migrate(event: dict[str, Any]) -> dict[str, Any]:
    """Bring one decoded event up to the current schema version."""
    version = event["schema_version"]
    while version < SCHEMA_VERSION:
        event = _MIGRATIONS[version](event)
        version += 1
    return event
