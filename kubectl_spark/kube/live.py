"""A live view of the cluster: list, then watch, each resource the core reads.

One thread per resource keeps a dict of objects by uid current from a watch (resuming from the
last resourceVersion; re-listing on 410 Expired, so objects deleted meanwhile disappear and none
are duplicated; backing off and reporting "reconnecting" on errors). ``snapshot()`` hands the
core a consistent copy. Nothing here touches a UI: the TUI polls ``version`` and ``state``.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import orjson

from kubectl_spark import errors
from kubectl_spark.core.analyze import Snapshot

from .client import Api

RESOURCES = (
    ("pods", "/api/v1", "pods", True, "spark-role"),
    ("jobs", "/apis/batch/v1", "jobs", True, None),
    ("events", "/api/v1", "events", True, None),
    ("nodes", "/api/v1", "nodes", False, None),
    ("sparkapplications", "/apis/sparkoperator.k8s.io/v1beta2", "sparkapplications", True, None),
    ("volumeattachments", "/apis/storage.k8s.io/v1", "volumeattachments", False, None),
    ("pvcs", "/api/v1", "persistentvolumeclaims", True, None),
)


class LiveCluster:
    def __init__(
        self, api_factory: Callable[[], Api], namespace: str | None, *, watch_timeout: int = 300
    ) -> None:
        self.api_factory = api_factory
        self.namespace = namespace
        self.watch_timeout = watch_timeout
        self.lock = threading.Lock()
        self.objects: dict[str, dict[str, dict[str, Any]]] = {key: {} for key, *_ in RESOURCES}
        self.version = 0  # bumped on every change
        self.state = "connecting"  # connecting, live, reconnecting, forbidden
        self.error = ""
        self.last_event: float | None = None
        self.stopping = threading.Event()
        self.threads: list[threading.Thread] = []
        self.ready = threading.Event()
        self._listed: set[str] = set()
        # What changed since the last take_changes(): pod uids (directly, or through an Event
        # about them), and whether anything else changed (then everything is re-analyzed).
        self.changed_pods: set[str] = set()
        self.gone: dict[str, dict[str, Any]] = {}  # deleted pods, for their labels
        self.other_changed = True

    def start(self) -> None:
        for spec in RESOURCES:
            thread = threading.Thread(
                target=self._run, args=spec, name=f"watch-{spec[0]}", daemon=True
            )
            thread.start()
            self.threads.append(thread)

    def stop(self) -> None:
        self.stopping.set()

    def take_changes(self) -> tuple[bool, set[str], dict[str, dict[str, Any]], Snapshot]:
        """(everything?, changed pod uids, deleted pods, the snapshot they lead to), atomically."""
        with self.lock:
            result = (self.other_changed, self.changed_pods, self.gone, self._snapshot_locked())
            self.other_changed, self.changed_pods, self.gone = False, set(), {}
        return result

    def snapshot(self) -> Snapshot:
        with self.lock:
            return self._snapshot_locked()

    def _snapshot_locked(self) -> Snapshot:
        copies = {key: list(items.values()) for key, items in self.objects.items()}
        return Snapshot(
            pods=copies["pods"],
            jobs=copies["jobs"],
            events=copies["events"],
            nodes=copies["nodes"],
            sparkapplications=copies["sparkapplications"],
            volumeattachments=copies["volumeattachments"],
            pvcs=copies["pvcs"],
            now=datetime.now(UTC),
        )

    def _path(self, base: str, plural: str, namespaced: bool) -> str:
        return (
            f"{base}/namespaces/{self.namespace}/{plural}"
            if namespaced and self.namespace
            else f"{base}/{plural}"
        )

    def _changed(self) -> None:
        self.version += 1
        self.last_event = time.monotonic()

    def _run(
        self, key: str, base: str, plural: str, namespaced: bool, selector: str | None
    ) -> None:
        path = self._path(base, plural, namespaced)
        backoff = 0.5
        while not self.stopping.is_set():
            try:
                with self.api_factory() as api:
                    items, rv = api.list(path, label_selector=selector, what=f"list {plural}")
                    with self.lock:
                        self.objects[key] = {
                            i["metadata"]["uid"]: i
                            for i in items
                            if isinstance(i, dict) and "metadata" in i
                        }
                        # A (re-)list replaces a whole kind: no per-pod change can describe that.
                        self.other_changed = True
                        self._changed()
                    self._listed.add(key)
                    if len(self._listed) == len(RESOURCES):
                        self.state, self.error = "live", ""
                        self.ready.set()
                    backoff = 0.5
                    self._watch(api, key, path, rv, selector)
            except errors.Forbidden as exc:
                self._listed.add(key)
                if key == "pods":
                    self.state, self.error = "forbidden", exc.message
                if len(self._listed) == len(RESOURCES):
                    self.ready.set()
                self.stopping.wait(30)
            except errors.NotFound:
                self._listed.add(key)  # e.g. no spark-operator CRD
                if len(self._listed) == len(RESOURCES):
                    self.state = "live" if self.state != "forbidden" else self.state
                    self.ready.set()
                self.stopping.wait(60)
            except (errors.KubectlSparkError, OSError, ValueError) as exc:
                if not self.stopping.is_set():
                    self.state, self.error = "reconnecting", getattr(exc, "message", str(exc))
                self.stopping.wait(backoff)
                backoff = min(backoff * 2, 10.0)

    def _watch(self, api: Api, key: str, path: str, rv: str, selector: str | None) -> None:
        """Follow the watch until it ends; a 410 (or an ERROR event) means list again."""
        while not self.stopping.is_set():
            query: list[tuple[str, Any]] = [
                ("watch", "true"),
                ("resourceVersion", rv),
                ("allowWatchBookmarks", "true"),
                ("timeoutSeconds", self.watch_timeout),
            ]
            if selector:
                query.append(("labelSelector", selector))
            response = api.request("GET", path, query=query, stream=True, what=f"watch {key}")
            buffer = b""
            for chunk in response.stream(65536):
                if self.stopping.is_set():
                    response.release_conn()
                    return
                buffer += chunk
                *lines, buffer = buffer.split(b"\n")
                for line in lines:
                    if not line.strip():
                        continue
                    event = orjson.loads(line)
                    kind = event.get("type")
                    obj = event.get("object") or {}
                    if kind == "ERROR":
                        return  # too old: the caller lists again
                    meta = obj.get("metadata") or {}
                    rv = str(meta.get("resourceVersion") or rv)
                    if kind == "BOOKMARK":
                        continue
                    with self.lock:
                        uid = meta.get("uid", "")
                        if kind == "DELETED":
                            self.objects[key].pop(uid, None)
                        else:
                            self.objects[key][uid] = obj
                        if key == "pods":
                            self.changed_pods.add(uid)
                            if kind == "DELETED":
                                self.gone[uid] = obj
                        elif key == "events":
                            involved = obj.get("involvedObject") or {}
                            if involved.get("kind") == "Pod" and involved.get("uid"):
                                self.changed_pods.add(str(involved["uid"]))
                            else:
                                self.other_changed = True
                        else:
                            self.other_changed = True
                        self._changed()
            if self.state == "reconnecting":
                self.state = "live"
