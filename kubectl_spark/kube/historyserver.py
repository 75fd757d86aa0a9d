"""Spark's executor lists of finished drivers, from a Spark History Server.

Once a driver is gone its UI is gone too, and with it the ``removeReason`` of every executor it
lost; a History Server replays the event logs and serves the same REST API
(``/api/v1/applications/<app id>/allexecutors``, Spark's ``monitoring.md``). Which one: the
``--history-server URL`` flag, else ``$KUBECTL_SPARK_HISTORY_SERVER``. Asked only for the app
ids of attempts whose driver does not run (``finished_app_ids``); what fails is a note.
"""

from __future__ import annotations

import urllib.error
import urllib.request
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import Any
from urllib.parse import quote

import orjson

from kubectl_spark.core import apache, raw
from kubectl_spark.core.inputs import Snapshot
from kubectl_spark.knowledge.labels import APP_ID, ROLE

ORIGIN = "the Spark History Server"
TIMEOUT = 5.0
MAX_APPS = 50  # app ids asked per read: a namespace of finished runs does not become 1,000 calls
MAX_BODY = 16 * 1024 * 1024


def finished_app_ids(snapshot: Snapshot) -> list[str]:
    """App ids of attempts whose driver is not running: the History Server is theirs to tell.

    A driver pod's ``spark-app-selector`` (one that ended); the Apache operator's attempts
    (``<name>-<attemptId>``) and the Kubeflow operator's last run (``sparkApplicationId``),
    whose pods may all be gone.
    """
    running = set()
    ids: list[str] = []
    for pod in snapshot.pods:
        app_id = raw.label(pod, APP_ID)
        if raw.label(pod, ROLE) != "driver" or not app_id:
            continue
        if raw.text(pod, "status", "phase") in ("Running", "Pending"):
            running.add(app_id)
        else:
            ids.append(app_id)
    for app in snapshot.apacheapps:
        ids += [f"{raw.name(app)}-{span.attempt_id}" for span in apache.spans(app)]
    for app in snapshot.sparkapplications:
        ids.append(raw.text(app, "status", "sparkApplicationId"))
    unique = [i for i in dict.fromkeys(ids) if i and i not in running]
    return unique[:MAX_APPS]


def read_finished(url: str, app_ids: Iterable[str]) -> dict[str, dict[str, Any]]:
    """{app id: {"executors": [...], "origin": …} or {"note": why not}}; never an error."""
    ids = list(app_ids)
    if not ids:
        return {}
    with ThreadPoolExecutor(max_workers=min(8, len(ids))) as pool:
        views = list(pool.map(lambda i: _read(url, i), ids))
    return dict(zip(ids, views, strict=True))


def _read(url: str, app_id: str) -> dict[str, Any]:
    target = f"{url.rstrip('/')}/api/v1/applications/{quote(app_id, safe='')}/allexecutors"
    try:
        with urllib.request.urlopen(target, timeout=TIMEOUT) as answer:  # noqa: S310 - a URL the user gave
            body = answer.read(MAX_BODY + 1)
    except urllib.error.HTTPError as exc:
        if exc.code == 404:
            return {"note": f"{ORIGIN} has no application {app_id}"}
        return {"note": f"{ORIGIN} answered {exc.code} for {app_id}"}
    except (OSError, ValueError) as exc:
        return {"note": f"{ORIGIN} at {url} could not be read: {exc}"}
    try:
        found = orjson.loads(body) if len(body) <= MAX_BODY else None
    except orjson.JSONDecodeError:
        found = None
    if not isinstance(found, list):
        return {"note": f"{ORIGIN} sent no executor list for {app_id}"}
    return {"executors": found, "origin": ORIGIN}
