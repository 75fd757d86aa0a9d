"""Widgets that leave the screen alone when handed what they already show.

``Static.update`` asks for a layout of the whole screen (the new content may change its
height), and a layout draws every widget on it again: the applications table's visible rows,
the tree, the detail pane, the timeline. The TUI hands the banner, the detail pane, the
timeline and the status bar their content at every watch event and every second; at 50,000
pods, drawing all of them again was most of an event's way to the screen (frames of 60-365 ms,
issue 26), though what they showed had not changed.
"""

from __future__ import annotations

from typing import Any

from rich.cells import cell_len
from rich.text import Text
from textual.css.scalar import Scalar
from textual.visual import VisualType
from textual.widgets import Static


def looks(content: object) -> tuple[Any, ...] | None:
    """What decides how ``content`` is drawn, to compare; None: unknown, draw it again.

    Rich's ``Text.__eq__`` compares the characters and spans only, not the style of the whole
    text, nor how it is justified or wrapped: all of those are here.
    """
    if isinstance(content, str):
        return ("str", content)
    if isinstance(content, Text):
        return (
            "text",
            content.plain,
            tuple(content.spans),
            content.style,
            content.justify,
            content.overflow,
            content.no_wrap,
            content.end,
            content.tab_size,
        )
    return None


class SteadyStatic(Static):
    _looks: tuple[Any, ...] | None = None
    _fits: tuple[int, int] | None = None  # (lines, width) of the content shown, none folded

    def update(self, content: VisualType = "", *, layout: bool = True) -> None:
        looks_now = looks(content)
        if looks_now is not None and looks_now == self._looks:
            return
        fits = self._fitting(content)
        # As many lines as before, none folded, in a box whose width is not the content's:
        # the widget keeps its size, and only it is drawn again (the timeline, every second).
        same_size = fits is not None and fits == self._fits and not _auto(self.styles.width)
        self._looks, self._fits = looks_now, fits
        super().update(content, layout=layout and not same_size)

    def _fitting(self, content: object) -> tuple[int, int] | None:
        width = self.content_size.width
        if not isinstance(content, Text) or width <= 0:
            return None
        lines = content.plain.split("\n")
        return (len(lines), width) if all(cell_len(line) <= width for line in lines) else None


def _auto(width: Scalar | None) -> bool:
    return width is not None and width.is_auto
