"""The application table's order: ``ls``'s, by what people can see of it."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from kubectl_spark.app.present import app_key
from kubectl_spark.tui.widgets.apps_table import ordered


def _app(namespace: str, name: str) -> Any:
    return SimpleNamespace(
        namespace=namespace, name=name, created_at="2026-12-05T00:00:00Z", context=""
    )


def test_without_the_namespace_column_the_order_is_by_name() -> None:
    """At 80 columns NAMESPACE does not fit: an order by it looked random (issue 48)."""
    apps = [_app("zeta", "alpha"), _app("alpha", "zulu"), _app("mid", "beta"), _app("b", "x")]
    severity = {"x": 0}  # an alert: first, whatever the columns
    summaries: dict[str, Any] = {
        app_key(a): SimpleNamespace(severity=severity.get(a.name, 5)) for a in apps
    }
    by_namespace = [a.name for a in ordered(apps, summaries, None)]
    assert by_namespace == ["x", "zulu", "beta", "alpha"]
    by_name = [a.name for a in ordered(apps, summaries, None, namespace_shown=False)]
    assert by_name == ["x", "alpha", "beta", "zulu"]


def test_several_clusters_alerts_first_then_by_context() -> None:
    """An alert in any cluster comes before every quiet application, whichever its context."""
    quiet_a, loud_b = _app("default", "etl"), _app("default", "etl")
    quiet_a.context, loud_b.context = "a", "b"
    apps: list[Any] = [quiet_a, loud_b]
    summaries = {
        app_key(quiet_a): SimpleNamespace(severity=5),
        app_key(loud_b): SimpleNamespace(severity=0),
    }
    assert [a.context for a in ordered(apps, summaries, None)] == ["b", "a"]  # type: ignore[arg-type]
    assert app_key(quiet_a) != app_key(loud_b)  # the same name in two clusters: two rows
