"""docs/trace-format.md names every field of every event, as the event classes define them."""

from __future__ import annotations

import ast
import itertools
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


def _field_docstrings() -> dict[str, set[str]]:
    """The fields that carry an attribute docstring, by class name, read from the source."""
    tree = ast.parse(Path(events.__file__).read_text(encoding="utf-8"))
    found: dict[str, set[str]] = {}
    for node in tree.body:
        if not isinstance(node, ast.ClassDef):
            continue
        names = found.setdefault(node.name, set())
        for prev, cur in itertools.pairwise(node.body):
            if (
                isinstance(prev, ast.AnnAssign)
                and isinstance(prev.target, ast.Name)
                and isinstance(cur, ast.Expr)
                and isinstance(cur.value, ast.Constant)
                and isinstance(cur.value.value, str)
                and cur.value.value.strip()
            ):
                names.add(prev.target.id)
    return found


def test_every_event_field_has_an_attribute_docstring() -> None:
    documented = _field_docstrings()
    classes = [events.EventBase, *get_args(get_args(events.Event)[0])]
    for cls in classes:
        own = set(cls.model_fields) - (
            set(events.EventBase.model_fields) if cls is not events.EventBase else set()
        )
        missing = own - documented.get(cls.__name__, set())
        assert not missing, f"{cls.__name__} fields without a docstring: {sorted(missing)}"


def test_the_type_constants_name_the_event_classes() -> None:
    classes = get_args(get_args(events.Event)[0])
    kinds = {cls.model_fields["type"].default for cls in classes}
    # the one table from a type to its class says what the classes say
    assert {cls.model_fields["type"].default: cls for cls in classes} == events.EVENT_CLASSES
    constants = {
        events.SESSION_START,
        events.LLM_REQUEST,
        events.LLM_RESPONSE,
        events.TOOL_CALL,
        events.PERMISSION_DECISION,
        events.TOOL_RESULT,
        events.CONTEXT_COMPACTION,
        events.ERROR,
        events.SESSION_END,
    }
    assert constants == kinds


def test_usage_counts_are_the_usage_models_fields() -> None:
    from regista.trace.names import USAGE_COUNTS
    from regista.types import Usage

    assert tuple(Usage.model_fields) == USAGE_COUNTS
