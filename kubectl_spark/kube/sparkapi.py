"""Spark's own executor list, read through the API server's pod proxy while a driver lives.

``GET /api/v1/namespaces/<ns>/pods/<driver>:<port>/proxy/api/v1/applications/<app-id>/allexecutors``
(the port: the driver container's ``spark-ui`` port, default 4040). It needs ``get`` on
``pods/proxy``, a driver with its UI enabled and reachable; whatever fails becomes a note in the
view, never an error: the pods still tell most of the story.
"""

from __future__ import annotations

from typing import Any

from kubectl_spark import errors
from kubectl_spark.core import raw
from kubectl_spark.core.model import App

from .client import Api

DEFAULT_UI_PORT = 4040
TIMEOUT = 5.0  # a driver that does not answer in this long is reported, not waited for


def _ui_port(pod: Any) -> int:
    for container in raw.items(pod, "spec", "containers"):
        for port in raw.items(container, "ports"):
            if port.get("name") == "spark-ui" and raw.number(port, "containerPort"):
                return int(port["containerPort"])
    return DEFAULT_UI_PORT


def read_views(api: Api, app: App, pods: list[Any]) -> dict[str, dict[str, Any]]:
    """{driver uid: {"executors": [...]} or {"note": why not}} for the app's running drivers."""
    by_uid = {raw.uid(p): p for p in pods if isinstance(p, dict)}
    views: dict[str, dict[str, Any]] = {}
    for attempt in app.attempts:
        driver = by_uid.get(attempt.uid or "")
        if driver is None or attempt.state != "Running" or not app.app_id:
            continue
        path = (
            f"/api/v1/namespaces/{app.namespace}/pods/{attempt.driver_pod}:{_ui_port(driver)}"
            f"/proxy/api/v1/applications/{app.app_id}/allexecutors"
        )
        try:
            found = api.request(
                "GET",
                path,
                what=f"read Spark's executor list from {attempt.driver_pod}",
                timeout=TIMEOUT,
                retry=False,
            )
        except errors.Forbidden:
            views[attempt.uid or ""] = {
                "note": "Spark's executor list was not read: forbidden (needs get on pods/proxy)"
            }
            continue
        except errors.KubectlSparkError as exc:
            views[attempt.uid or ""] = {
                "note": "Spark's executor list was not read: the driver's UI did not answer through "
                f"the pod proxy (UI disabled or driver unreachable): {exc.message}"
            }
            continue
        if not isinstance(found, list):
            views[attempt.uid or ""] = {"note": "Spark's executor list was not read: not a list"}
            continue
        views[attempt.uid or ""] = {"executors": found}
    return views
