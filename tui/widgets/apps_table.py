"""The applications table: ``ls``'s columns (``app.present``), updated in place (row keys)."""

from __future__ import annotations

from datetime import datetime

from rich.text import Text
from textual.coordinate import Coordinate
from textual.widgets import DataTable

from kubectl_spark.app.present import app_key, headers, row
from kubectl_spark.app.summary import Summary, summarize
from kubectl_spark.core.model import App

from .safe import safe

COLUMNS = tuple(headers(all_namespaces=True, wide=False))
_NAME, _ALERTS = COLUMNS.index("APP"), COLUMNS.index("ALERTS")

__all__ = ["COLUMNS", "AppsTable", "app_key", "cells", "severity"]


def severity(app: App) -> int:
    return summarize(app).severity


def cells(app: App, now: datetime, summary: Summary | None = None) -> list[Text]:
    """``ls -A``'s row, cell for cell; an application with alerts is marked and red."""
    plain = row(app, now, all_namespaces=True, wide=False, summary=summary)
    marked = bool(app.alerts)
    style = "bold red" if marked else ""
    out = [safe(cell) for cell in plain]
    if marked:
        out[_NAME] = Text("! ", style="bold red") + safe(plain[_NAME], style)
        out[_ALERTS] = safe(plain[_ALERTS], style)
    return out


class AppsTable(DataTable[Text]):
    def on_mount(self) -> None:
        self.cursor_type = "row"
        self.zebra_stripes = True
        for column in COLUMNS:
            self.add_column(column, key=column)

    def sync(self, apps: list[App], now: datetime) -> None:
        """Show ``apps`` in ``ls``'s order (alerts first), rows updated in place.

        The cursor stays on the application under it. DataTable's
        cursor is a row index: a row removed above it, or rows put back in order, would move
        the selection to another application, and the tree, the detail and Enter with it,
        under the operator's eyes.
        """
        selected = self.selected_key()
        summaries = {app_key(a): summarize(a) for a in apps}  # once per application
        wanted = {
            app_key(a): a
            for a in sorted(
                apps, key=lambda a: (summaries[app_key(a)].severity, a.namespace, a.name)
            )
        }
        for key in [str(k.value) for k in list(self.rows) if str(k.value) not in wanted]:
            self.remove_row(key)
        shown = {str(k.value) for k in self.rows}
        for key, app in wanted.items():
            new = cells(app, now, summaries[key])
            if key in shown:
                self._update(key, new)
            else:
                self.add_row(*new, key=key)
        order = list(wanted)
        if self._order() != order:
            # An application gained (or lost) an alert, or came back from a filter: rows are
            # only ever appended, so put them back in order. Sorted in place, by the identity of
            # each row's first cell: rows are neither removed nor added, so no highlight of
            # another application passes through the tree on the way.
            rank = {id(self.get_cell(key, COLUMNS[0])): i for i, key in enumerate(order)}
            self.sort(COLUMNS[0], key=lambda first: rank[id(first)])
        if selected in wanted and self.get_row_index(selected) != self.cursor_row:
            self.move_cursor(row=self.get_row_index(selected))

    def _update(self, key: str, new: list[Text]) -> None:
        for column, value in zip(COLUMNS, new, strict=True):
            old = self.get_cell(key, column)
            if str(old) != str(value) or value.style != getattr(old, "style", None):
                self.update_cell(key, column, value, update_width=True)

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
