"""Spark's executor lists of finished drivers, from a Spark History Server.

Once a driver is gone its UI is gone too, and with it the ``removeReason`` of every executor it
lost; a History Server replays the event logs and serves the same REST API
(``/api/v1/applications/<app id>/allexecutors``, Spark's ``monitoring.md``). Which one: the
``--history-server`` flag, else ``$KUBECTL_SPARK_HISTORY_SERVER``, else ``auto``: a URL is read
directly; ``NAMESPACE/NAME`` of its Service, or the Service found by its label
(``app.kubernetes.io/name=spark-history-server``, ``kube/incluster.py``), through the API
server's service proxy; ``none`` asks nothing. Asked only for the app ids of attempts whose
driver does not run (``finished_app_ids``); what fails is a note.
"""

from __future__ import annotations

import threading
import urllib.error
import urllib.request
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import Any
from urllib.parse import quote

import orjson

from kubectl_spark import errors
from kubectl_spark.core import apache, raw
from kubectl_spark.core.inputs import Snapshot
from kubectl_spark.core.summaries import read_summaries, summaries_from, summaries_of
from kubectl_spark.knowledge.labels import APP_ID
from kubectl_spark.knowledge.operator_names import app_id_of

from . import incluster

ORIGIN = "the Spark History Server"
TIMEOUT = 5.0
MAX_APPS = 50  # app ids asked per read: a namespace of finished runs does not become 1,000 calls
MAX_BODY = 16 * 1024 * 1024
PORT = 18080  # spark.history.ui.port's default: the Service port asked when it has several


def finished_app_ids(snapshot: Snapshot) -> list[str]:
    """App ids of attempts whose driver is not running: the History Server is theirs to tell.

    A driver pod's ``spark-app-selector`` (one that ended); the Apache operator's attempts
    (``<name>-<attemptId>``) and the Kubeflow operator's last run (``sparkApplicationId``),
    whose pods may all be gone.
    """
    running = set()
    ids: list[str] = []
    for pod in snapshot.driver_pods():  # one pod in a hundred
        app_id = pod.metadata.labels.get(APP_ID)
        if not app_id:
            continue
        if pod.status.phase in ("Running", "Pending"):
            running.add(app_id)
        else:
            ids.append(app_id)
    for app in snapshot.apacheapps:
        ids += [
            app_id_of(raw.namespace(app), raw.name(app), span.attempt_id)
            for span in apache.spans(app)
        ]
    for app in snapshot.sparkapplications:
        ids.append(raw.text(app, "status", "sparkApplicationId"))
    unique = [i for i in dict.fromkeys(ids) if i and i not in running]
    return unique[:MAX_APPS]


def read_finished(url: str, app_ids: Iterable[str]) -> dict[str, dict[str, Any]]:
    """{app id: {"executors": [...], "origin": …} or {"note": why not}}; never an error."""
    return _read_each(app_ids, lambda app_id, down: _read(url, app_id, down))


def read_running_ui(url: str) -> dict[str, dict[str, Any]]:
    """A running driver's own UI (``--spark-ui``): its application's executor list.

    A driver outside the cluster (Spark's client mode: a notebook, a laptop) is no pod to reach
    through the API server; its UI serves the same REST API as the History Server
    (``/api/v1/applications``, then ``…/<app id>/allexecutors``). Read as a running driver's
    list: what it says is Spark's word now. A UI that cannot be read is a note, keyed "".
    """
    origin = f"Spark's driver (its UI at {url})"
    try:
        with urllib.request.urlopen(  # noqa: S310 - a URL the user gave, checked http(s)
            f"{url.rstrip('/')}/api/v1/applications", timeout=TIMEOUT
        ) as answer:
            listed = orjson.loads(answer.read(MAX_BODY))
    except (OSError, ValueError) as exc:
        return {"": {"note": f"{origin} could not be read: {exc}"}}
    apps = listed if isinstance(listed, list) else []
    ids = [str(a.get("id")) for a in apps if isinstance(a, dict) and a.get("id")][:MAX_APPS]
    views = _read_each(ids, lambda app_id, down: _read(url, app_id, down, origin))
    return {i: {**v, "live": True} if "executors" in v else v for i, v in views.items()}


def _read_each(
    app_ids: Iterable[str], read: Callable[[str, threading.Event], dict[str, Any]]
) -> dict[str, dict[str, Any]]:
    """Each app id's view by ``read``, 8 at a time.

    ``down`` is set by a read that found no server; the reads after it are not made: a History
    Server that does not answer must not cost 50 timeouts.
    """
    ids = list(app_ids)
    if not ids:
        return {}
    down = threading.Event()
    with ThreadPoolExecutor(max_workers=min(8, len(ids))) as pool:
        views = list(pool.map(lambda i: read(i, down), ids))
    return dict(zip(ids, views, strict=True))


def _read(url: str, app_id: str, down: threading.Event, origin: str = ORIGIN) -> dict[str, Any]:
    if down.is_set():
        return {"note": f"{origin} at {url} was not asked for {app_id}: it did not answer before"}
    target = f"{url.rstrip('/')}/api/v1/applications/{quote(app_id, safe='')}/allexecutors"
    try:
        with urllib.request.urlopen(target, timeout=TIMEOUT) as answer:  # noqa: S310 - a URL the user gave
            body = answer.read(MAX_BODY + 1)
    except urllib.error.HTTPError as exc:
        if exc.code == 404:
            return {"note": f"{origin} has no application {app_id}"}
        return {"note": f"{origin} answered {exc.code} for {app_id}"}
    except (OSError, ValueError) as exc:
        down.set()
        return {"note": f"{origin} at {url} could not be read: {exc}"}
    try:
        found = orjson.loads(body) if len(body) <= MAX_BODY else None
    except orjson.JSONDecodeError:
        found = None
    if not isinstance(found, list):
        return {"note": f"{origin} sent no executor list for {app_id}"}
    return {"executors": read_summaries(found), "origin": origin}


def find(api: Any, wanted: str, discovery: incluster.Discovery) -> incluster.ServiceRef | None:
    """The History Server's Service: ``NAMESPACE/NAME``, or (``auto``) the one labelled so."""
    if wanted not in (incluster.AUTO, ""):
        namespace, _, name = wanted.partition("/")
        try:
            service = api.request(
                "GET",
                f"/api/v1/namespaces/{namespace}/services/{name}",
                what=f"read the Spark History Server's Service {wanted}",
                timeout=incluster.TIMEOUT,
            )
        except errors.KubectlSparkError as exc:
            api.note(f"the Spark History Server's Service {wanted} was not read: {exc.message}")
            return None
        services = [service]
    else:
        services = discovery.find(incluster.HISTORY_SERVER_LABELS, "Spark History Server")
    found = [
        incluster.ServiceRef(s["metadata"]["namespace"], s["metadata"]["name"], _port(s))
        for s in services
        if isinstance(s, dict) and isinstance(s.get("metadata"), dict)
    ]
    return incluster.first(api, found, "--history-server", "Spark History Server")


def _port(service: dict[str, Any]) -> str:
    """Its port numbered 18080, else its first: by name when named (the proxy's own rule)."""
    ports = [p for p in (service.get("spec") or {}).get("ports") or [] if isinstance(p, dict)]
    chosen = next((p for p in ports if p.get("port") == PORT), ports[0] if ports else {})
    return str(chosen.get("name") or chosen.get("port") or PORT)


def read_finished_through(
    api: Any, ref: incluster.ServiceRef, app_ids: Iterable[str]
) -> dict[str, dict[str, Any]]:
    """As ``read_finished``, through the API server's service proxy to the Service ``ref``."""
    return _read_each(app_ids, lambda app_id, down: _read_through(api, ref, app_id, down))


def _read_through(
    api: Any, ref: incluster.ServiceRef, app_id: str, down: threading.Event
) -> dict[str, Any]:
    """One app's executor list, through the service proxy (``down``: see ``_read_each``)."""
    if down.is_set():
        return {"note": f"{ORIGIN} {ref} was not asked for {app_id}: it did not answer before"}
    try:
        found = api.request(
            "GET",
            ref.path(f"api/v1/applications/{quote(app_id, safe='')}/allexecutors"),
            what=f"read {app_id}'s executors from the Spark History Server {ref}",
            timeout=TIMEOUT,
            retry=False,
            decode=summaries_from,
        )
    except errors.NotFound:
        return {"note": f"{ORIGIN} has no application {app_id}"}
    except errors.KubectlSparkError as exc:
        down.set()
        return {
            "note": f"{ORIGIN} {ref} could not be read through the service proxy: {exc.message}"
        }
    summaries = summaries_of(found)
    if summaries is None:
        return {"note": f"{ORIGIN} sent no executor list for {app_id}"}
    return {"executors": summaries, "origin": ORIGIN}
