"""rr-style movement over a trace's steps: pure functions over the index's step entries."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from regista.engine import StepEntry

__all__ = ["Breakpoints", "find", "label_of"]


def label_of(entry: StepEntry) -> str:
    """What a breakpoint on this step stops at: its tool name, or its kind."""
    return f"tool:{entry.tool}" if entry.kind == "tool" and entry.tool else entry.kind


def find(
    entries: Sequence[StepEntry],
    start: int,
    direction: int,
    match: Callable[[StepEntry], bool],
) -> int | None:
    """The first position after ``start`` (before it when ``direction`` < 0) that matches."""
    step = 1 if direction > 0 else -1
    pos = start + step
    while 0 <= pos < len(entries):
        if match(entries[pos]):
            return pos
        pos += step
    return None


@dataclass
class Breakpoints:
    """Breakpoints on a step kind (``model``, ``tool``, ``compaction``) or ``tool:NAME``."""

    labels: set[str] = field(default_factory=set)

    def toggle(self, label: str) -> bool:
        """Add or remove ``label``; True when it is now set."""
        if label in self.labels:
            self.labels.discard(label)
            return False
        self.labels.add(label)
        return True

    def hits(self, entry: StepEntry) -> bool:
        return entry.kind in self.labels or label_of(entry) in self.labels

    def __bool__(self) -> bool:
        return bool(self.labels)
