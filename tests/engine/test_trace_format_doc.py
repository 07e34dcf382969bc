"""docs/trace-format.md names every field of every event, as the event classes define them."""

from __future__ import annotations

import re
from pathlib import Path
from typing import get_args

from regista.trace import events

DOC = Path(__file__).resolve().parents[2] / "docs" / "trace-format.md"
ENVELOPE = {"schema_version", "session_id", "seq", "ts", "type"}


def _documented() -> dict[str, set[str]]:
    rows: dict[str, set[str]] = {}
    for line in DOC.read_text(encoding="utf-8").splitlines():
        m = re.match(r"\| `([a-z.]+)` \| (.*) \|$", line)
        if m:
            rows[m.group(1)] = set(re.findall(r"`([a-z_]+)`", m.group(2)))
    return rows


def test_every_event_field_is_documented() -> None:
    documented = _documented()
    classes = get_args(get_args(events.Event)[0])
    assert len(classes) >= 9
    for cls in classes:
        kind = cls.model_fields["type"].default
        missing = set(cls.model_fields) - ENVELOPE - documented.get(kind, set())
        assert not missing, f"docs/trace-format.md does not describe {kind}: {sorted(missing)}"
