"""The applications table: ``ls``'s columns (``app.present``), updated in place (row keys).

Narrower than its columns, it drops the least useful first (``DROP_ORDER``) rather than cut
ALERTS and AGE off the right edge; ``wide`` shows every column of ``ls -o wide`` instead, and
the table scrolls sideways. A sort key other than ``ls``'s own (alerts first) can be chosen.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.binding import Binding
from textual.cache import LRUCache
from textual.coordinate import Coordinate
from textual.widgets import DataTable
from textual.widgets.data_table import ColumnKey

from kubectl_spark.app.present import age_cell, app_key, headers, row
from kubectl_spark.app.summary import SEVERITY, Summary, summarize
from kubectl_spark.core.model import App
from kubectl_spark.knowledge.times import parse

from .safe import safe

# CONTEXT is shown only while several clusters are (``AppsTable.contexts``).
COLUMNS = ("CONTEXT", *headers(all_namespaces=True, wide=False))
WIDE_COLUMNS = ("CONTEXT", *headers(all_namespaces=True, wide=True))
# What goes first when the terminal is narrow: the least needed at 3 a.m. first. APP, STATE
# and ALERTS always stay.
DROP_ORDER = ("RESTARTS", "ATTEMPT", "DRIVER", "NAMESPACE", "AGE", "EXECUTORS", "LOST")
COMPACT_BELOW = 120  # columns: ALERTS shows its most urgent alert and how many more
CELL_PADDING = 2  # DataTable pads each cell by one on either side
SCROLLBAR = 2


@dataclass(frozen=True)
class SortKey:
    """A column to sort by, k9s's way: the same key again reverses, a third time goes back."""

    column: str
    descending: bool = False

    def shown(self) -> str:
        return f"{self.column.lower()} {'↓' if self.descending else '↑'}"


def _age(app: App, _summary: Summary) -> float:
    created = parse(app.created_at)
    return -created.timestamp() if created else 0.0  # the youngest first: the smallest AGE


SORTABLE: dict[str, Callable[[App, Summary], Any]] = {
    "APP": lambda a, _s: (a.name, a.namespace),
    "AGE": _age,
    "STATE": lambda _a, s: s.state,
    "LOST": lambda _a, s: sum(n for _, n in s.losses),
}

__all__ = ["COLUMNS", "AppsTable", "SortKey", "app_key", "cells", "fitting", "severity"]


def severity(app: App) -> int:
    return summarize(app).severity


def cells(
    app: App,
    now: datetime,
    summary: Summary | None = None,
    *,
    wide: bool = False,
    compact: bool = False,
) -> list[Text]:
    """``ls -A``'s row, cell for cell; an application with alerts is marked and red.

    ``compact``: ALERTS names the most urgent alert and counts the others ("SplitBrain +2");
    the banner under the table lists them all for the selected application.
    """
    summary = summary or summarize(app)
    plain = [app.context, *row(app, now, all_namespaces=True, wide=wide, summary=summary)]
    marked = bool(app.alerts)
    style = "bold red" if marked else ""
    out = [safe(cell) for cell in plain]
    if marked:
        name, alerts = COLUMNS.index("APP"), COLUMNS.index("ALERTS")
        out[name] = Text("! ", style="bold red") + safe(plain[name], style)
        found = sorted(summary.alerts, key=lambda a: SEVERITY.get(a, 9))
        shortened = f"{found[0]} +{len(found) - 1}" if compact and len(found) > 1 else None
        out[alerts] = safe(shortened or plain[alerts], style)
    return out


def fitting(widths: dict[str, int], width: int, *, contexts: bool = False) -> tuple[str, ...]:
    """The columns (in ``COLUMNS`` order) that fit ``width``, dropping in ``DROP_ORDER``.

    CONTEXT only with ``contexts`` (several clusters shown), and then it stays: which cluster
    an alert is in is what the operator acts on.
    """
    shown = [c for c in COLUMNS if contexts or c != "CONTEXT"]
    for column in DROP_ORDER:
        if sum(widths[c] + CELL_PADDING for c in shown) <= width - SCROLLBAR:
            break
        shown.remove(column)
    return tuple(shown)


def ordered(
    apps: list[App],
    summaries: dict[str, Summary],
    sort: SortKey | None,
    *,
    namespace_shown: bool = True,
) -> list[App]:
    """``ls``'s order (alerts first, then namespace and name), or the chosen column's.

    Where the NAMESPACE column does not fit (80 columns), by name before namespace: an order by
    a column nobody sees looked random (issue 48).
    """

    def place(a: App) -> tuple[int, str, str, str]:
        severity = summaries[app_key(a)].severity
        return (
            (severity, a.context, a.namespace, a.name)
            if namespace_shown
            else (severity, a.context, a.name, a.namespace)
        )

    default = sorted(apps, key=place)
    if sort is None:
        return default
    value = SORTABLE[sort.column]
    return sorted(default, key=lambda a: value(a, summaries[app_key(a)]), reverse=sort.descending)


@dataclass(slots=True)
class _Row:
    """An application's row as made: its cells by column and their widths."""

    app: App
    summary: Summary
    cells: dict[str, Text]
    compact: bool
    widths: dict[str, int]


def _measured(by_column: dict[str, Text]) -> dict[str, int]:
    return {column: cell.cell_len for column, cell in by_column.items()}


class AppsTable(DataTable[Text]):
    # k9s's and vi's keys beside the arrows: bound on the table, so they move what is focused
    # and a text field (the filter) still takes the letters.
    BINDINGS = [
        Binding("j", "cursor_down", "Down", show=False),
        Binding("k", "cursor_up", "Up", show=False),
        Binding("g", "scroll_top", "First", show=False),
        Binding("G", "scroll_bottom", "Last", show=False),
    ]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.wide = False
        self.contexts = False  # several clusters shown: a CONTEXT column first
        self.sort_key: SortKey | None = None
        self.shown_columns: tuple[str, ...] = ()
        # By id(application): its row as last made. The incremental analysis hands back the
        # applications it did not touch unchanged, so their cells are made and measured once,
        # not at every change in a 500-application cluster.
        self._memo: dict[int, _Row] = {}
        # Drawn cells, by where and how they are drawn, with the cell they were drawn from.
        # DataTable keys its own cache on a count of updates, so one changed cell makes it
        # draw every visible cell again: at an AGE tick with young applications, 190 cells
        # through Rich (100-140 ms at 500 applications, issue 26) where 19 changed. The cells
        # ``sync`` hands over are new objects when they change, never changed in place.
        self._drawn: LRUCache[tuple[Any, ...], tuple[object, list[list[Segment]]]] = LRUCache(4000)

    def _render_cell(
        self,
        row_index: int,
        column_index: int,
        base_style: Style,
        width: int,
        cursor: bool = False,
        hover: bool = False,
    ) -> list[list[Segment]]:
        if row_index < 0 or column_index < 0:  # the header, row labels
            return super()._render_cell(row_index, column_index, base_style, width, cursor, hover)
        try:
            cell = self.get_cell_at(Coordinate(row_index, column_index))
        except Exception:  # noqa: BLE001 - DataTable's own drawing says what is amiss
            return super()._render_cell(row_index, column_index, base_style, width, cursor, hover)
        where = (
            row_index,
            column_index,
            base_style,
            width,
            cursor,
            hover,
            self._show_hover_cursor,
            self._pseudo_class_state,
        )
        kept = self._drawn.get(where)
        if kept is not None and kept[0] is cell:
            return kept[1]
        lines = super()._render_cell(row_index, column_index, base_style, width, cursor, hover)
        self._drawn.set(where, (cell, lines))
        return lines

    def _clear_caches(self) -> None:
        super()._clear_caches()
        self._drawn.clear()

    def notify_style_update(self) -> None:
        self._drawn.clear()  # a theme, a focus: the same cells look different
        super().notify_style_update()

    def on_mount(self) -> None:
        self.cursor_type = "row"
        self.zebra_stripes = True

    def sync(self, apps: list[App], now: datetime, width: int) -> None:
        """Show ``apps`` in order, rows updated in place, in the columns that fit ``width``.

        The cursor stays on the application under it. DataTable's
        cursor is a row index: a row removed above it, or rows put back in order, would move
        the selection to another application, and the tree, the detail and Enter with it,
        under the operator's eyes.
        """
        selected = self.selected_key()
        compact = not self.wide and width < COMPACT_BELOW
        memo = self._memo
        self._memo = {}
        changed: set[str] = set()  # rows whose cells are not those the table shows
        for a in apps:  # an application the analysis did not touch is the same object
            known = memo.get(id(a))
            if known is None or known.app is not a or known.compact != compact:
                summary = summarize(a)
                by_column = dict(
                    zip(
                        WIDE_COLUMNS,
                        cells(a, now, summary, wide=True, compact=compact),
                        strict=True,
                    )
                )
                known = _Row(a, summary, by_column, compact, _measured(by_column))
                changed.add(app_key(a))
            else:
                age = age_cell(a, now)
                if str(known.cells["AGE"]) != age:
                    known.cells["AGE"] = safe(age)
                    known.widths["AGE"] = known.cells["AGE"].cell_len
                    changed.add(app_key(a))
            self._memo[id(a)] = known
        summaries = {app_key(a): self._memo[id(a)].summary for a in apps}  # once per application
        columns = (
            tuple(c for c in WIDE_COLUMNS if self.contexts or c != "CONTEXT")
            if self.wide
            else fitting(
                self._widths([self._memo[id(a)].widths for a in apps]),
                width,
                contexts=self.contexts,
            )
        )
        in_order = ordered(apps, summaries, self.sort_key, namespace_shown="NAMESPACE" in columns)
        shown = {app_key(a): self._memo[id(a)] for a in in_order}
        every = {key: row.cells for key, row in shown.items()}
        if columns != self.shown_columns:
            self._rebuild(columns)
        for key in [str(k.value) for k in list(self.rows) if str(k.value) not in every]:
            self.remove_row(key)
        present = {str(k.value) for k in self.rows}
        for key, by_column in every.items():
            if key not in present:
                self.add_row(*[by_column[c] for c in columns], key=key)
            elif key in changed:  # the others show these very cells already
                self._update(key, [by_column[c] for c in columns])
        order = list(every)
        if self._order() != order:
            # An application gained (or lost) an alert, or came back from a filter: rows are
            # only ever appended, so put them back in order. Sorted in place, by the identity of
            # each row's first cell: rows are neither removed nor added, so no highlight of
            # another application passes through the tree on the way.
            first = columns[0]
            rank = {id(self.get_cell(key, first)): i for i, key in enumerate(order)}
            self.sort(first, key=lambda cell: rank[id(cell)])
        if selected in every and self.get_row_index(selected) != self.cursor_row:
            self.move_cursor(row=self.get_row_index(selected))

    @staticmethod
    def _widths(measured: list[dict[str, int]]) -> dict[str, int]:
        return {
            column: max([len(column), *(widths[column] for widths in measured)])
            for column in COLUMNS
        }

    def _rebuild(self, columns: tuple[str, ...]) -> None:
        """Another set of columns: ``sync`` adds the rows again and puts the cursor back."""
        self.clear(columns=True)
        for column in columns:
            self.add_column(column, key=column)
        self.shown_columns = columns

    def _update(self, key: str, new: list[Text]) -> None:
        for column, value in zip(self.shown_columns, new, strict=True):
            old = self.get_cell(key, column)
            if old is value:
                continue  # the same cell (an application the analysis did not touch)
            if str(old) != str(value) or value.style != getattr(old, "style", None):
                # Widen a column for a wider cell; never narrow it for a narrower one: DataTable
                # then measures every cell of the column again (500 at 500 applications, at
                # every AGE that ticks: most of an event's time on screen, issue 26).
                shown = self.columns.get(ColumnKey(column))
                wider = shown is None or value.cell_len > shown.content_width
                self.update_cell(key, column, value, update_width=wider)

    def marks(self) -> tuple[str, ...]:
        """How the table reorders or widens the list, named on the status bar while on."""
        return (
            *([f"sort: {self.sort_key.shown()}"] if self.sort_key else []),
            *(["wide"] if self.wide else []),
        )

    def _order(self) -> list[str]:
        return [
            str(self.coordinate_to_cell_key(Coordinate(i, 0)).row_key.value)
            for i in range(self.row_count)
        ]

    def selected_key(self) -> str | None:
        if not self.rows or self.cursor_row < 0:
            return None
        try:
            return str(self.coordinate_to_cell_key(Coordinate(self.cursor_row, 0)).row_key.value)
        except Exception:  # noqa: BLE001 - an empty or changing table has no selection
            return None
