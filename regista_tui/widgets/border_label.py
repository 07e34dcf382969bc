"""Border titles that change often (the step under the cursor) without a full repaint.

Setting ``border_title`` or ``border_subtitle`` repaints the whole widget in Textual: every
line of a tall list or step view is drawn and composited again, for one line of border
that changed. A widget with :class:`QuickBorderLabels` repaints only that border line.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual.geometry import Region

__all__ = ["QuickBorderLabels"]

if TYPE_CHECKING:
    from textual.widget import Widget

    _Base = Widget
else:
    _Base = object


class QuickBorderLabels(_Base):
    """Mixed into a widget class (first): :meth:`set_border_labels` repaints its top or
    bottom border only."""

    _border_line: int | None = None

    def set_border_labels(self, *, title: str | None = None, subtitle: str | None = None) -> None:
        """Change the border title and / or subtitle (``None`` leaves one as it is)."""
        if title is not None and title != self.border_title:
            self._set_border_label("border_title", title, top=True)
        if subtitle is not None and subtitle != self.border_subtitle:
            self._set_border_label("border_subtitle", subtitle, top=False)

    def _set_border_label(self, name: str, value: str, *, top: bool) -> None:
        outer = self.outer_size
        if not self.is_mounted or not outer:
            setattr(self, name, value)
            return
        # Region of that border line, in content coordinates (refresh moves it back).
        offset = self.content_offset
        self._border_line = -offset.y if top else outer.height - 1 - offset.y
        try:
            setattr(self, name, value)
        finally:
            self._border_line = None

    def refresh(self, *regions: Region, **kwargs: Any) -> Any:
        line = self._border_line
        if line is not None and not regions and not kwargs.get("layout"):
            regions = (Region(-self.content_offset.x, line, self.outer_size.width, 1),)
        return super().refresh(*regions, **kwargs)
