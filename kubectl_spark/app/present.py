"""The applications table: ``ls``'s columns, and the TUI's, cell by cell from the summary."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime

from kubectl_spark.app.summary import Summary, summarize
from kubectl_spark.core.model import App
from kubectl_spark.knowledge.times import age, parse

HEADERS = ("APP", "STATE", "ATTEMPT", "DRIVER", "EXECUTORS", "LOST", "RESTARTS", "ALERTS", "AGE")
WIDE = ("NODE", "APP-ID", "SOURCE", "SCHEDULE")  # SCHEDULE: a ScheduledSparkApplication's run


def headers(*, all_namespaces: bool, wide: bool) -> list[str]:
    return [*(["NAMESPACE"] if all_namespaces else []), *HEADERS, *(WIDE if wide else ())]


def cells(app: App, summary: Summary, now: datetime) -> list[str]:
    """The HEADERS columns."""
    return [
        app.name,
        summary.state,
        f"{summary.attempt}/{summary.attempts}",
        summary.driver,
        f"{summary.running}/{summary.executors}",
        summary.lost_text(),
        str(summary.restarts),
        ",".join(summary.alerts) or "-",
        age_cell(app, now),
    ]


def age_cell(app: App, now: datetime) -> str:
    """AGE: the one column that changes with the clock alone (the TUI redraws it each second)."""
    return age(parse(app.created_at), now)


def row(
    app: App,
    now: datetime,
    *,
    all_namespaces: bool,
    wide: bool,
    summary: Summary | None = None,
) -> list[str]:
    current = app.current
    out = cells(app, summary or summarize(app), now)
    if all_namespaces:
        out.insert(0, app.namespace)
    if wide:
        out += [
            (current.node if current else None) or "-",
            app.app_id or "-",
            app.source,
            app.schedule or "-",
        ]
    return out


def sort_key(app: App) -> tuple[str, str, str]:
    return (app.namespace, app.name, app.created_at or "")


def app_key(app: App) -> str:
    """One application, across refreshes (names are reused: its creation time tells them apart).

    Read from several clusters, its context first: two clusters can run the same name.
    """
    key = f"{app.namespace}/{app.name}/{app.created_at or ''}"
    return f"{app.context}:{key}" if app.context else key


def label_headers(label_columns: Sequence[str], show_labels: bool) -> list[str]:
    """``kubectl get -L``'s headers: a key's last path segment in capitals; then LABELS."""
    return [c.rsplit("/", 1)[-1].upper() for c in label_columns] + (
        ["LABELS"] if show_labels else []
    )


def label_cells(
    labels: Mapping[str, str], label_columns: Sequence[str], show_labels: bool
) -> list[str]:
    """A label's value (blank when absent, as kubectl leaves it), then all of them sorted."""
    out = [labels.get(c, "") for c in label_columns]
    if show_labels:
        out.append(",".join(f"{k}={v}" for k, v in sorted(labels.items())) or "<none>")
    return out


def app_labels(app: App, labels_by_uid: Mapping[str, Mapping[str, str]]) -> Mapping[str, str]:
    """An application's labels are its current driver pod's (the one ``-l`` selected it by)."""
    current = app.current
    return labels_by_uid.get(current.uid or "", {}) if current else {}
