"""Spark's own executor list, read through the API server's pod proxy while a driver lives.

``GET /api/v1/namespaces/<ns>/pods/<driver>:<port>/proxy/api/v1/applications/<app-id>/allexecutors``
(the port: the driver container's ``spark-ui`` port, default 4040). It needs ``get`` on
``pods/proxy``, a driver with its UI enabled and reachable; whatever fails becomes a note in the
view, never an error: the pods still tell most of the story.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable, Mapping
from concurrent.futures import Future
from datetime import timedelta
from functools import partial
from typing import Any

from kubectl_spark import errors
from kubectl_spark.core.inputs import node_health
from kubectl_spark.core.node import Node
from kubectl_spark.core.pod import Pod
from kubectl_spark.core.reasons import spark_container
from kubectl_spark.core.sparkview import KILLED_BY_DRIVER
from kubectl_spark.core.summaries import summaries_from, summaries_of
from kubectl_spark.knowledge import times
from kubectl_spark.knowledge.labels import APP_ID, DRIVER_CONTAINER, ROLE

from .background import Background
from .client import Api

DEFAULT_UI_PORT = 4040
TIMEOUT = 5.0  # a driver that does not answer in this long is reported, not waited for


def ui_port(pod: Pod) -> int:
    """The driver container's ``spark-ui`` port (4040 unless the pod names another)."""
    for container in pod.spec.containers:
        for port in container.ports:
            if port.name == "spark-ui" and port.container_port:
                return port.container_port
    return DEFAULT_UI_PORT


MAX_PARALLEL = 8  # drivers asked at once: a few slow ones do not add up
# Drivers asked at once at first: more only once the process finds the reads waiting on their
# servers (``background.Background``). Near the API server a read mostly computes, and eight
# at a time only took turns on the interpreter (``benchmarks/spark_ui_readers.py``).
FIRST_READERS = 2


def unready_nodes(nodes: Iterable[Node]) -> set[str]:
    """Nodes the core finds unreachable (Ready not True, or tainted unreachable).

    The pod proxy to a driver on one would only time out.
    """
    return {n.name for n in nodes if not node_health(n).reachable}


def running_drivers(pods: Iterable[Pod], nodes: Iterable[Node] = ()) -> list[Pod]:
    """Driver pods that may answer: Running on a Ready node, with an app id, not being deleted."""
    return _running(pods, unready_nodes(nodes))


def _running(pods: Iterable[Pod], unready: set[str]) -> list[Pod]:
    return [
        p
        for p in pods
        if p.metadata.labels.get(ROLE) == "driver"  # first: one pod in a hundred
        and p.metadata.labels.get(APP_ID)
        and p.status.phase == "Running"
        and not p.metadata.deletion_timestamp
        and not p.kept  # a kept copy of a gone pod has no UI
        and p.spec.node_name not in unready
    ]


def read_views(
    api: Api, pods: Iterable[Pod], nodes: Iterable[Node] = ()
) -> dict[str, dict[str, Any]]:
    """{driver uid: {"executors": [...]} or {"note": why not}} for every running driver.

    Every reading command and the TUI read them the same way (``kubectl_spark.app.view``), so
    ``ls``, ``describe`` and the TUI count the executors Spark remembers and the cluster forgot.
    """
    return ViewReads(api).views(pods, nodes)


class ViewReads:
    """``read_views``, with drivers asked while the list of pods waits on the server.

    Asked after the last page, the drivers' round trips came on top of the list's. Here the
    drivers of each page kept (``drivers_listed``) are asked once the list has waited for a
    page longer than it took to keep the one before (``list_waited``, called by the list): the
    server is then what the list waits on, and the client's interpreter would only wait too.
    Asked as soon as listed, they took turns with the pages' decoding on the interpreter,
    which bounds the list nearby: 10,000 pods cost 8 % more against this machine's emulator.
    None is asked before the nodes are known (``nodes_listed``), as one on a node that is not
    Ready would only time out. ``views`` answers as ``read_views`` did: the drivers it chooses
    are chosen from all the pods and the nodes as read in the end, an early answer is taken
    only for the very pod it asked (a list started again lists new ones), and the others are
    asked then (docs/performance.md, ``benchmarks/spark_ui_overlap.py``).
    """

    def __init__(self, api: Api) -> None:
        self._api = api
        self._readers = Background(MAX_PARALLEL, FIRST_READERS)
        self._lock = threading.Lock()
        self._unready: set[str] | None = None  # None: the nodes are not known yet
        self._held: list[Pod] = []  # drivers listed, not asked yet
        self._asked: dict[str, tuple[Pod, Future[dict[str, Any]]]] = {}
        self._behind = False  # the list has waited on the server

    def drivers_listed(self, drivers: list[Pod]) -> None:
        with self._lock:
            self._held += drivers
            self._ask_held()

    def nodes_listed(self, listed: Future[Any]) -> None:
        """The node list's future, done (a callback)."""
        if listed.cancelled() or listed.exception() is not None:
            return  # the command fails on it where it waits for the list
        with self._lock:
            self._unready = unready_nodes(listed.result() or ())  # None: forbidden, as []
            self._ask_held()

    def list_waited(self) -> None:
        """The list waited on the server: from now on the drivers are asked as they come."""
        with self._lock:
            self._behind = True
            self._ask_held()

    def _ask_held(self) -> None:
        """Under the lock."""
        if self._behind and self._unready is not None:
            held, self._held = self._held, []
            self._ask(_running(held, self._unready))

    def views(self, pods: Iterable[Pod], nodes: Iterable[Node] = ()) -> dict[str, dict[str, Any]]:
        """``read_views``' answer: every running driver's, early or asked now."""
        drivers = running_drivers(pods, nodes)
        with self._lock:
            self._ask([d for d in drivers if self._asked.get(d.metadata.uid, (None,))[0] is not d])
            futures = [self._asked[d.metadata.uid][1] for d in drivers]
        return {d.metadata.uid: f.result() for d, f in zip(drivers, futures, strict=True)}

    def _ask(self, drivers: list[Pod]) -> None:
        """Under the lock."""
        for driver in drivers:
            self._asked[driver.metadata.uid] = (
                driver,
                self._readers.submit(partial(_read_view, self._api, driver)),
            )


def _read_view(api: Api, driver: Pod) -> dict[str, Any]:
    name, namespace = driver.metadata.name, driver.metadata.namespace
    path = (
        f"/api/v1/namespaces/{namespace}/pods/{name}:{ui_port(driver)}"
        f"/proxy/api/v1/applications/{driver.metadata.labels[APP_ID]}/allexecutors"
    )
    try:
        found = api.request(
            "GET",
            path,
            what=f"read Spark's executor list from {name}",
            timeout=TIMEOUT,
            retry=False,
            decode=summaries_from,
        )
    except errors.Forbidden as exc:
        if exc.reason == "Forbidden":  # the API server's own Status: RBAC refused the proxy
            return {
                "note": "Spark's executor list was not read: forbidden by the API server "
                "(needs get on pods/proxy)"
            }
        # The driver's UI answered 403 itself (its body passed through the proxy, not a
        # Status): Spark's view ACLs (spark.acls.enable, spark.ui.view.acls; HttpSecurityFilter)
        return {
            "note": "Spark's executor list was not read: the driver's UI refused it (403 from "
            "Spark's view ACLs: spark.acls.enable without this user in spark.ui.view.acls)"
        }
    except errors.KubectlSparkError as exc:
        return {
            "note": "Spark's executor list was not read: the driver's UI did not answer through "
            f"the pod proxy (UI disabled or driver unreachable): {exc.message}"
        }
    summaries = summaries_of(found)
    if summaries is None:
        return {"note": "Spark's executor list was not read: not a list"}
    expired = heartbeat_expiries(api, driver, summaries)
    return {"executors": summaries, **({"heartbeats": expired} if expired else {})}


# HeartbeatReceiver.expireDeadHosts logs this line before it kills the executor. On Kubernetes
# the kill is all Spark's list keeps ("Executor killed by driver.": doKillExecutors removes the
# executor with ExecutorKilled before the expiry's ExecutorProcessLost arrives), so the
# driver's own log is where a heartbeat expiry is told apart from a scale-down.
_EXPIRED = re.compile(
    r"Removing executor (\S+) with no recent heartbeats: \d+ ms exceeds timeout \d+ ms"
)
LOG_LOOKBACK = timedelta(seconds=60)  # the line comes seconds before the removal it causes
LOG_LIMIT_BYTES = 1 << 20
_EXPIRIES: dict[tuple[str, frozenset[str]], dict[str, str]] = {}  # asked once per kill set
_EXPIRIES_KEPT = 256


def heartbeat_expiries(api: Api, driver: Pod, summaries: list[Any]) -> dict[str, str]:
    """Executor id → the driver's log line that expired its heartbeats, of those Spark killed.

    Read once for each set of killed executors (the TUI polls): its log from a minute before the
    first such removal, at most 1 MiB; a log that cannot be read tells nothing.
    """
    killed = {
        str(s.get("id")): times.parse(str(s.get("removeTime") or ""))
        for s in summaries
        if isinstance(s, Mapping)
        and s.get("isActive") is False
        and str(s.get("removeReason") or "").startswith(KILLED_BY_DRIVER)
    }
    stamps = [t for t in killed.values() if t is not None]
    if not stamps:
        return {}
    key = (driver.metadata.uid, frozenset(killed))
    if key in _EXPIRIES:
        return _EXPIRIES[key]
    query: list[tuple[str, Any]] = [
        ("container", spark_container(driver).name or DRIVER_CONTAINER),
        ("sinceTime", times.rfc3339(min(stamps) - LOG_LOOKBACK)),
        ("limitBytes", LOG_LIMIT_BYTES),
    ]
    path = f"/api/v1/namespaces/{driver.metadata.namespace}/pods/{driver.metadata.name}/log"
    try:
        response = api.request(
            "GET",
            path,
            query=query,
            stream=True,
            what=f"read {driver.metadata.name}'s log for heartbeat expiries",
            timeout=TIMEOUT,
            retry=False,
        )
        try:
            text = b"".join(response.stream(65536)).decode("utf-8", "replace")
        finally:
            response.release_conn()
    except errors.KubectlSparkError:
        return {}  # no get on pods/log, or its node unreachable: Spark's word stands alone
    found = {
        m.group(1): line.strip()[:300]
        for line in text.splitlines()
        if (m := _EXPIRED.search(line)) and m.group(1) in killed
    }
    if len(_EXPIRIES) >= _EXPIRIES_KEPT:
        _EXPIRIES.clear()
    _EXPIRIES[key] = found
    return found
