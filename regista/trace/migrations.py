"""Migrations of older trace schemas to :data:`SCHEMA_VERSION`.

Each ``_v{N}_to_v{N+1}`` takes one decoded event of version N and returns it in version
N+1; :func:`migrate` chains them. See the migration notes in ``docs/trace-format.md``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from regista.trace.names import CONTEXT_COMPACTION, LLM_REQUEST, SCHEMA_VERSION

__all__ = ["migrate"]


def _v1_to_v2(event: dict[str, Any]) -> dict[str, Any]:
    """Version 1 wrote every request whole: its ``system`` and ``tools`` are explicit
    (absent meant the default), and it has no ``result_refs``. Its ``request_hash`` is
    over the plain canonical JSON (version 2 redacts secret shapes first): the event says
    so with ``request_hash_form: "plain"``."""
    kind = event.get("type")
    if kind == LLM_REQUEST:
        event.setdefault("system", None)
        event.setdefault("tools", [])
    if kind in (LLM_REQUEST, CONTEXT_COMPACTION):
        event.setdefault("request_hash_form", "plain")
    event["schema_version"] = 2
    return event


_MIGRATIONS: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {1: _v1_to_v2}


def migrate(event: dict[str, Any]) -> dict[str, Any]:
    """Bring one decoded event up to the current schema version."""
    version = event["schema_version"]
    while version < SCHEMA_VERSION:
        event = _MIGRATIONS[version](event)
        version += 1
    return event
