"""The applications table: the ls columns, updated in place (row keys, update_cell)."""

from __future__ import annotations

from datetime import datetime

from rich.text import Text
from textual.coordinate import Coordinate
from textual.widgets import DataTable

from kubectl_spark.cli.commands.ls import driver_cell, lost_summary
from kubectl_spark.core.model import App
from kubectl_spark.knowledge.times import age, parse

from .safe import safe

COLUMNS = (
    "NAMESPACE",
    "APP",
    "STATE",
    "ATTEMPT",
    "DRIVER",
    "EXECUTORS",
    "LOST",
    "RESTARTS",
    "ALERTS",
    "AGE",
)
SEVERITY = {
    "SplitBrain": 0,
    "ZombieDriver": 1,
    "ReplacementBlocked": 2,
    "NameCollision": 3,
    "OrphanedExecutors": 4,
    "ExecutorChurn": 5,
}


def app_key(app: App) -> str:
    return f"{app.namespace}/{app.name}/{app.created_at or ''}"


def severity(app: App) -> int:
    return min((SEVERITY.get(a.type, 9) for a in app.alerts), default=10)


def cells(app: App, now: datetime) -> list[Text]:
    current = app.current
    execs = current.executors if current else ()
    running = sum(1 for e in execs if e.state == "Running")
    restarts = sum(a.restarts + sum(e.restarts for e in a.executors) for a in app.attempts)
    alerts = ",".join(dict.fromkeys(a.type for a in app.alerts))
    marked = bool(app.alerts)
    style = "bold red" if marked else ""
    name = Text("! ", style="bold red") + safe(app.name, style) if marked else safe(app.name)
    return [
        safe(app.namespace),
        name,
        safe(app.state),
        safe(f"{current.number}/{len(app.attempts)}" if current else "0/0"),
        safe(driver_cell(current)),
        safe(f"{running}/{len(execs)}"),
        safe(lost_summary(app)),
        safe(str(restarts)),
        safe(alerts or "-", style),
        safe(age(parse(app.created_at), now)),
    ]


class AppsTable(DataTable[Text]):
    def on_mount(self) -> None:
        self.cursor_type = "row"
        self.zebra_stripes = True
        for column in COLUMNS:
            self.add_column(column, key=column)

    def sync(self, apps: list[App], now: datetime) -> None:
        """Add, update and remove rows in place; the cursor stays on its application.

        DataTable's cursor is a row index: a row removed above it would move the selection to
        the next application, and the tree and detail with it, under the operator's eyes.
        """
        selected = self.selected_key()
        wanted = {
            app_key(a): a for a in sorted(apps, key=lambda a: (severity(a), a.namespace, a.name))
        }
        for key in [str(k.value) for k in list(self.rows) if str(k.value) not in wanted]:
            self.remove_row(key)
        for key, app in wanted.items():
            row = cells(app, now)
            if key in {str(k.value) for k in self.rows}:
                for column, value in zip(COLUMNS, row, strict=True):
                    if str(self.get_cell(key, column)) != str(value) or value.style != getattr(
                        self.get_cell(key, column), "style", None
                    ):
                        self.update_cell(key, column, value, update_width=True)
            else:
                self.add_row(*row, key=key)
        if selected in wanted and self.get_row_index(selected) != self.cursor_row:
            self.move_cursor(row=self.get_row_index(selected))

    def selected_key(self) -> str | None:
        if not self.rows or self.cursor_row < 0:
            return None
        try:
            return str(self.coordinate_to_cell_key(Coordinate(self.cursor_row, 0)).row_key.value)
        except Exception:  # noqa: BLE001 - an empty or changing table has no selection
            return None
