"""Two runs side by side: one row per aligned pair, gaps for inserted / deleted steps."""

from __future__ import annotations

from rich.text import Text
from textual.message import Message

from regista import RegistaError, RunDiff
from regista.engine import (
    DIVERGED,
    KIND_COLOURS,
    KIND_MARKS,
    MASKED,
    AlignedPair,
    MaskSet,
    Step,
    pair_verdict,
)
from regista_tui.rows import row_of
from regista_tui.widgets.virtual_list import VirtualList

__all__ = ["KIND_STYLE", "MASKED_MARK", "PairList"]

#: The gutter mark of a pair that differs only in masked values.
MASKED_MARK = "≈"

#: Color of each classification (gutter and legend).
KIND_STYLE: dict[str, str] = {
    kind: colour if kind == "same" else f"bold {colour}" for kind, colour in KIND_COLOURS.items()
}
_GUTTER = KIND_MARKS


class PairList(VirtualList):
    """The aligned pairs of a :class:`RunDiff`; the diff can be replaced as run B grows."""

    class PairSelected(Message):
        """The cursor moved to pair ``position``."""

        def __init__(self, pair_list: PairList, position: int) -> None:
            super().__init__()
            self.pair_list = pair_list
            self.position = position

        @property
        def control(self) -> PairList:
            return self.pair_list

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.diff: RunDiff | None = None
        self.labels: tuple[str | None, str | None] = (None, None)
        #: The masks a pair's changes are read through (a pair that differs only where
        #: they cover is ``masked``); none: every difference counts.
        self.masks: MaskSet | None = None
        self._verdicts: dict[int, str] = {}

    def set_diff(self, diff: RunDiff, labels: tuple[str | None, str | None]) -> None:
        """Show ``diff`` (keeping the cursor where it was, when it still exists)."""
        self.diff = diff
        self.labels = labels
        self._verdicts = {}
        self.grow()

    def verdict(self, pos: int) -> str:
        """Pair ``pos``'s verdict: ``exact``, ``masked`` or ``diverged`` (worked out when
        it is first shown: a pair's changes are read only then)."""
        found = self._verdicts.get(pos)
        if found is None:
            pair = self.pair(pos)
            if pair is None:
                return DIVERGED
            try:
                found = pair_verdict(pair, self.masks)
            except RegistaError:
                found = DIVERGED
            self._verdicts[pos] = found
        return found

    def row_count(self) -> int:
        return len(self.diff.pairs) if self.diff is not None else 0

    def pair(self, pos: int) -> AlignedPair | None:
        if self.diff is None or not 0 <= pos < len(self.diff.pairs):
            return None
        return self.diff.pairs[pos]

    def row_text(self, pos: int, width: int) -> Text:
        pair = self.pair(pos)
        text = Text(no_wrap=True, end="")
        if pair is None:
            return text
        style = KIND_STYLE.get(pair.kind, "")
        if pair.kind != "same" and self.masks and self.verdict(pos) == MASKED:
            text.append(f"{MASKED_MARK} ", "dim")  # differs only in masked values
        else:
            text.append(f"{_GUTTER.get(pair.kind, '?')} ", style)
        side = max(10, (width - 5) // 2)
        text.append_text(self._side_of(pair, "a", side, self.labels[0], pair.kind == "insert"))
        text.append(" │ ", style if pair.kind != "same" else "dim")
        text.append_text(self._side_of(pair, "b", side, self.labels[1], pair.kind == "delete"))
        return text

    def _side_of(
        self, pair: AlignedPair, which: str, width: int, label: str | None, gap: bool
    ) -> Text:
        """One run's half of a row; a step that cannot be read says so in its place."""
        try:
            step = pair.a if which == "a" else pair.b
        except RegistaError as exc:
            number = pair.a_step if which == "a" else pair.b_step
            row = Text(f"{number:>4} ✗  cannot read: {exc}", "bold red", no_wrap=True)
            row.truncate(width, pad=True)
            return row
        return self._side(step, width, label, gap)

    def _side(self, step: Step | None, width: int, label: str | None, gap: bool) -> Text:
        if step is None:
            return Text("·" * width if gap else " " * width, "dim")
        row = row_of(step, label)
        badge = {"model": "M", "tool": "T", "compaction": "C"}.get(row.kind, "?")
        mark = "⊘" if row.denied else "✗" if row.error else " "
        title_w = 14 if width >= 44 else 11
        title = row.title if len(row.title) <= title_w else row.title[: title_w - 1] + "…"
        head = f"{row.number:>4} {badge}{mark} {title:<{title_w}} "
        room = max(0, width - len(head))
        gist = row.gist if len(row.gist) <= room else row.gist[: max(0, room - 1)] + "…"
        text = Text(head, "")
        text.stylize("dim", 0, 5)
        text.stylize("bold red" if row.error else "", 6, 7)
        text.append(f"{gist:<{room}}")
        return text

    def selected(self, pos: int) -> None:
        self.post_message(self.PairSelected(self, pos))
