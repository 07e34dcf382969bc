"""The field-level diff of the selected pair of steps."""

from __future__ import annotations

from rich.console import Group
from rich.text import Text
from textual.widgets import Static

from regista.engine import AlignedPair, MaskSet, split_changes
from regista_tui.widgets.diff.pair_list import KIND_STYLE
from regista_tui.widgets.step.render import OP_STYLE

__all__ = ["PairDetail"]

_LIMIT = 200


class PairDetail(Static):
    """What differs between the two steps of a pair (``Change.describe``), colored by op."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, markup=False)

    def show(
        self,
        pair: AlignedPair | None,
        a_name: str = "A",
        b_name: str = "B",
        masks: MaskSet | None = None,
    ) -> None:
        if pair is None:
            self.update(Text("No steps in either run.", "dim"))
            return
        where = []
        if pair.a_step is not None:
            where.append(f"step {pair.a_step} in {a_name}")
        if pair.b_step is not None:
            where.append(f"step {pair.b_step} in {b_name}")
        head = Text(f"{pair.label}", KIND_STYLE.get(pair.kind, ""))
        head.append(f"  {pair.step_kind} · {', '.join(where)}", "")
        if pair.kind == "same":
            return self.update(Group(head, Text("The two steps are the same.", "dim")))
        try:
            changes = pair.changes
        except Exception as exc:  # a diff of malformed steps is shown, not raised
            return self.update(Group(head, Text(f"cannot diff: {exc}", "bold red")))
        masked: list[str] = []
        if masks and pair.a is not None and pair.b is not None:
            changes, masked = split_changes(changes, masks, a_name, b_name)
            if not changes:
                head = Text("masked", "dim")
                head.append(f"  {pair.step_kind} · {', '.join(where)}", "")
                head.append("  · only masked values differ (see regista masks)", "dim")
        lines = [head]
        for note in masked[:_LIMIT]:
            lines.append(Text(f"{'masked':>8} {note}", "dim"))
        for change in changes[:_LIMIT]:
            line = Text(f"{change.op:>8} ", OP_STYLE.get(change.op, ""))
            line.append(change.describe(a_name, b_name))
            lines.append(line)
        if len(changes) > _LIMIT:
            lines.append(Text(f"… and {len(changes) - _LIMIT} more", "dim"))
        self.update(Group(*lines))
