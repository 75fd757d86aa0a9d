"""A live view of the cluster: list, then watch, each resource the core reads.

One thread per resource keeps a dict of objects by uid current from a watch (resuming from the
last resourceVersion; re-listing on 410 Expired, so objects deleted meanwhile disappear and none
are duplicated; backing off and reporting "reconnecting" on errors). Objects are kept slim
(``core.slim``: the fields the core reads), which is what keeps 10,000 watched pods small.
``take_changes()`` hands the core what changed and a consistent snapshot, atomically. Nothing
here touches a UI: ``on_change`` is called (from a watch thread) when new changes are waiting.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from functools import partial
from typing import Any

from kubectl_spark import errors
from kubectl_spark.core import raw, slim
from kubectl_spark.core.incremental import Change
from kubectl_spark.core.inputs import Snapshot
from kubectl_spark.core.node import Node
from kubectl_spark.core.pod import Pod, kept_copy
from kubectl_spark.core.slim import pod_page
from kubectl_spark.knowledge.times import rfc3339

from . import resources
from .client import RETRIED, Api
from .snapshot import PodOwners, read_owners
from .sparkapi import MAX_PARALLEL, read_views, running_drivers

RESOURCES = tuple(
    (r.key, r.base, r.plural, r.namespaced, r.selector, r.fallbacks) for r in resources.ALL
)
OWNER_POLL_SECONDS = 10.0  # client-mode drivers in unlabelled pods: no watch selects them
SPARK_POLL_SECONDS = 10.0  # Spark's executor lists: a request per running driver
# A round's requests go out MAX_PARALLEL at a time, spread over this share of the interval:
# at 500 running drivers a round is 500 proxy requests (about 0.6 s of this process's CPU), which
# at once held the interpreter while the TUI's first analysis ran (issue 26).
SPARK_POLL_SPREAD = 0.5


class LiveCluster:
    def __init__(
        self,
        api_factory: Callable[[], Api],
        namespace: str | None,
        *,
        watch_timeout: int = 300,
        max_tombstones: int = 5000,
        clock: Callable[[], datetime] | None = None,
        pod_selector: str | None = None,
        spark_api: bool = True,
    ) -> None:
        self.api_factory = api_factory
        # ``ls -w -l …``: the pod watch selects these too (always only Spark's pods).
        self.pod_selector = pod_selector
        # Spark's executor lists from the running drivers, asked every SPARK_POLL_SECONDS
        # (``kube.sparkapi``): the same source ``ls`` and ``describe`` read.
        self.spark_api = spark_api
        self.spark_views: dict[str, dict[str, Any]] = {}
        # The time the analysis reads as now: the cluster's (this machine's, corrected by the
        # skew its answers' Date headers showed), or the demo's simulated one, so ages, churn
        # windows and timelines agree with the times the cluster stamps.
        self.skew = timedelta(0)
        self.clock = clock or (lambda: datetime.now(UTC) + self.skew)
        self.namespace = namespace
        self.watch_timeout = watch_timeout
        self.lock = threading.Lock()
        # The pods and nodes typed (``core.pod``, ``core.node``), the rest the API's JSON, slim.
        self.objects: dict[str, dict[str, Any]] = {key: {} for key, *_ in RESOURCES}
        self.version = 0  # bumped on every change
        self.state = "connecting"  # connecting, live, reconnecting, forbidden
        self.error = ""
        # Each watch's latest outcome (its error, "" when its last list or watch request was
        # answered): the state is derived from all of them, so a success clears what it ended.
        self.failures: dict[str, str] = {}
        self.denied = ""  # the pods list's refusal (RBAC): nothing to show without it
        self.last_event: float | None = None
        self.lists = 0  # lists made: one per resource, and one more after each lost watch
        self.stopping = threading.Event()
        self.threads: list[threading.Thread] = []
        # The watch threads' clients, by id (``stop`` cuts their streams).
        self._apis: dict[int, Api] = {}
        self.ready = threading.Event()
        self._listed: set[str] = set()
        # What changed since the last take_changes(), by resource key and uid; None after a
        # (re-)list, which replaces a whole kind: then everything is analyzed again.
        self.changes: dict[str, dict[str, Change]] | None = None
        self.on_change: Callable[[], None] | None = None
        # Deleted pods' last states (from the DELETED event), kept in the snapshot so a loss
        # stays explained after the driver deletes the pod; the oldest go beyond the bound.
        self.tombstones: dict[str, Pod] = {}
        self.kept_events: dict[str, dict[str, Any]] = {}  # from the history store
        self.max_tombstones = max_tombstones
        self._told = False  # on_change called since the last take_changes()
        self.forbidden: set[str] = set()  # kinds the list of which was refused
        self.owners: dict[str, Pod] = {}  # Snapshot.owners, by uid
        self.gone_owners: set[str] = set()  # owners that answered 404: not asked again
        self.pod_owners = PodOwners()  # the watched pods' owners, read as the pods change

    def seed(
        self,
        pods: list[tuple[dict[str, Any], str]],
        events: list[dict[str, Any]],
        source: str = "history",
    ) -> None:
        """Start with what a keeper kept (``source``: the history store or the recorder).

        Pods come with when they were last seen; whatever the cluster still has replaces them.
        """
        with self.lock:
            for found, seen in pods:
                pod = slim.pod(found)
                if pod.metadata.uid:
                    self.tombstones[pod.metadata.uid] = kept_copy(pod, source, seen)
            self.kept_events.update(
                {
                    str(e["metadata"]["uid"]): e
                    for e in events
                    if isinstance(e.get("metadata"), dict) and e["metadata"].get("uid")
                }
            )

    def seed_snapshot(self, snapshot: Snapshot) -> None:
        """Start from a snapshot already read (``ls -w``): its kept pods, Events, Spark views.

        The cluster's own objects are listed again by the watches; what only the history store
        or a watch kept would otherwise vanish from the rows ``ls`` printed first.
        """
        with self.lock:
            for pod in snapshot.pods:
                if pod.metadata.uid and pod.kept:
                    self.tombstones[pod.metadata.uid] = pod
            self.kept_events.update(
                {raw.uid(e): e for e in snapshot.events if isinstance(e, dict) and raw.uid(e)}
            )
            self.spark_views = {k: dict(v) for k, v in snapshot.spark_views.items()}

    def start(self) -> None:
        for spec in RESOURCES:
            thread = threading.Thread(
                target=self._run, args=spec, name=f"watch-{spec[0]}", daemon=True
            )
            thread.start()
            self.threads.append(thread)
        pollers = [(self._poll_owners, "owners")]
        if self.spark_api:
            pollers.append((self._poll_spark, "spark-views"))
        for target, name in pollers:
            thread = threading.Thread(target=target, name=name, daemon=True)
            thread.start()
            self.threads.append(thread)

    def stop(self, wait: float = 0.0) -> None:
        """Stop the watches; with ``wait``, cut their streams and wait that long for them.

        A process about to exit waits (``record``): no thread may be reading TLS while the
        interpreter and OpenSSL clean up (``Api.cut_streams``).
        """
        self.stopping.set()
        if wait <= 0:
            return
        with self.lock:
            apis = list(self._apis.values())
        for api in apis:
            api.cut_streams()
        end = time.monotonic() + wait
        for thread in self.threads:
            thread.join(max(end - time.monotonic(), 0.0))

    def take_changes(self) -> tuple[dict[str, dict[str, Change]] | None, Snapshot]:
        """(the changes — None: everything —, the snapshot they lead to), atomically."""
        with self.lock:
            result = (self.changes, self._snapshot_locked())
            self.changes, self._told = {}, False
        return result

    def snapshot(self) -> Snapshot:
        with self.lock:
            return self._snapshot_locked()

    def _snapshot_locked(self) -> Snapshot:
        # Built whole, not by ``Snapshot.of``: the pods and nodes are typed already, and
        # typing 50,000 again for every change the TUI draws cost it milliseconds each time.
        copies: dict[str, Any] = {key: list(items.values()) for key, items in self.objects.items()}
        copies["pods"] += [
            t for uid, t in self.tombstones.items() if uid not in self.objects["pods"]
        ]
        copies["events"] += [
            e for uid, e in self.kept_events.items() if uid not in self.objects["events"]
        ]
        copies["owners"] = list(self.owners.values())
        return Snapshot(
            **copies,
            now=self.clock(),
            unreadable=tuple(sorted(self.forbidden)),
            spark_views=dict(self.spark_views),
        )

    def _poll_spark(self) -> None:
        """Ask the running drivers for Spark's executor lists, now and then."""
        while not self.stopping.is_set():
            if "pods" not in self._listed or "nodes" not in self._listed:
                self.stopping.wait(0.2)
                continue
            with self.lock:
                pods = list(self.objects["pods"].values())
                nodes = list(self.objects["nodes"].values())
            views = self._read_spark_round(pods, nodes)
            if views is None:
                return  # stopped in the middle of a round
            if views != self.spark_views:
                with self.lock:
                    before, self.spark_views = self.spark_views, views
                    if self.changes is not None:  # named by driver: only its app changes
                        changed = self.changes.setdefault("spark_views", {})
                        for uid in before.keys() | views.keys():
                            if before.get(uid) != views.get(uid):
                                gone = uid not in views
                                changed[uid] = Change(before[uid] if gone else views[uid], gone)
                    self._changed()
                self._tell()
            self.stopping.wait(SPARK_POLL_SECONDS)

    def _read_spark_round(
        self, pods: list[Pod], nodes: list[Node]
    ) -> dict[str, dict[str, Any]] | None:
        """Every running driver's executor list, a few drivers at a time (None: stopped)."""
        drivers = running_drivers(pods, nodes)
        batches = [drivers[i : i + MAX_PARALLEL] for i in range(0, len(drivers), MAX_PARALLEL)]
        pause = SPARK_POLL_SECONDS * SPARK_POLL_SPREAD / max(len(batches), 1)
        views: dict[str, dict[str, Any]] = {}
        try:
            with self.api_factory() as api:
                for i, batch in enumerate(batches):
                    if i and self.stopping.wait(pause):
                        return None
                    views.update(read_views(api, batch))  # drivers chosen above: no nodes
        except (errors.KubectlSparkError, OSError, ValueError):
            return self.spark_views  # the pod watch reports the connection's state
        return views

    def _poll_owners(self) -> None:
        """Read the pods executors name as owner that the pod watch does not select, now and then.

        A client-mode driver in a pod of its own carries no spark-role label (``Snapshot.owners``).
        """
        while not self.stopping.is_set():
            if "pods" not in self._listed:
                self.stopping.wait(0.2)
                continue
            with self.lock:
                taken = self.pod_owners.take(self.objects["pods"])
            wanted = self.pod_owners.missing(taken, self.gone_owners)
            try:
                found: dict[str, Pod] = {}
                if wanted:  # connect only when there is something to ask
                    with self.api_factory() as api:
                        for owner in read_owners(api, wanted, self.gone_owners):
                            kept = slim.pod(owner)
                            found[kept.metadata.uid] = kept
            except (errors.KubectlSparkError, OSError, ValueError):
                found = self.owners  # the pod watch reports the connection's state
            if found != self.owners:
                with self.lock:
                    self.owners = found
                    self.changes = None  # drivers came or went: analyze everything again
                    self._changed()
                self._tell()
            self.stopping.wait(OWNER_POLL_SECONDS)

    def _bury(self, uid: str, pod: Pod, changes: dict[str, Change]) -> None:
        """Keep a deleted pod's last state (under the lock); forget the oldest beyond the bound."""
        stone = kept_copy(pod, "watch", rfc3339(self.clock()) or "")
        self.tombstones[uid] = stone
        changes[uid] = Change(stone)
        while len(self.tombstones) > self.max_tombstones:
            oldest = next(iter(self.tombstones))
            changes[oldest] = Change(self.tombstones.pop(oldest), deleted=True)

    def _apply(self, key: str, kind: str, obj: dict[str, Any]) -> None:
        """One watch event into the objects and the pending changes."""
        uid = str((obj.get("metadata") or {}).get("uid", ""))
        kept = _kept(key, obj)
        with self.lock:
            changes = self.changes.setdefault(key, {}) if self.changes is not None else {}
            if key == "pods":
                self.pod_owners.changed(uid)
            if kind == "DELETED":
                self.objects[key].pop(uid, None)
                changes[uid] = Change(kept, deleted=True)
                if isinstance(kept, Pod):
                    self._bury(uid, kept, changes)
            else:
                self.objects[key][uid] = kept
                changes[uid] = Change(kept)
            self._changed()
        self._tell()

    def _path(self, base: str, plural: str, namespaced: bool) -> str:
        return (
            f"{base}/namespaces/{self.namespace}/{plural}"
            if namespaced and self.namespace
            else f"{base}/{plural}"
        )

    def _changed(self) -> None:
        """Count a change (under the lock); the caller tells ``on_change`` after releasing it."""
        self.version += 1
        self.last_event = time.monotonic()

    def _tell(self) -> None:
        """Wake the reader once per batch of changes.

        A stopped cluster wakes nobody: its reader may be gone (the TUI's event loop closes
        right after it stops the watches).
        """
        if self.stopping.is_set():
            return
        if self.on_change is not None and not self._told:
            self._told = True
            self.on_change()

    def _outcome(self, key: str, error: str = "") -> None:
        """Record what ``key``'s last request met and say the state that follows from all."""
        with self.lock:
            self.failures[key] = error
            failing = next((e for e in self.failures.values() if e), "")
            if self.denied:
                self.state, self.error = "forbidden", self.denied
            elif failing:
                self.state, self.error = "reconnecting", failing
            elif len(self._listed) == len(RESOURCES):
                self.state, self.error = "live", ""
            else:
                self.state, self.error = "connecting", ""

    def _run(
        self,
        key: str,
        base: str,
        plural: str,
        namespaced: bool,
        selector: str | None,
        fallbacks: tuple[str, ...] = (),
    ) -> None:
        bases = (base, *fallbacks)
        served = 0  # which of the versions is asked: the next after a 404
        path = self._path(base, plural, namespaced)
        if key == "pods" and self.pod_selector:
            selector = f"{selector},{self.pod_selector}"
        backoff = 0.5
        while not self.stopping.is_set():
            try:
                with self.api_factory() as api, self._open(api):
                    items, rv = api.list(
                        path,
                        label_selector=selector,
                        what=f"list {plural}",
                        keep=partial(_kept, key),
                        # Pods decoded slim from each page's bytes, what they repeat held
                        # once, as ``ls`` reads them (``core.slim.pod_page``)
                        keep_page=partial(pod_page, shared={}) if key == "pods" else None,
                    )
                    with self.lock:
                        self.lists += 1
                        self.objects[key] = {uid: i for i in items if (uid := _uid(i))}
                        if key == "pods":
                            self.pod_owners.listed()
                        self.forbidden.discard(key)
                        self.skew = api.skew
                        # A (re-)list replaces a whole kind: no per-object change describes it.
                        self.changes = None
                        self._changed()
                    self._tell()
                    self._listed.add(key)
                    if key == "pods":
                        self.denied = ""
                    self._outcome(key)
                    if len(self._listed) == len(RESOURCES):
                        self.ready.set()
                    backoff = 0.5
                    self._watch(api, key, path, rv, selector)
            except errors.Forbidden as exc:
                self._listed.add(key)
                with self.lock:
                    self.forbidden.add(key)
                if key == "pods":
                    self.denied = exc.message
                self._outcome(key)
                if len(self._listed) == len(RESOURCES):
                    self.ready.set()
                self.stopping.wait(30)
            except errors.NotFound:
                served = (served + 1) % len(bases)
                path = self._path(bases[served], plural, namespaced)
                if served:
                    continue  # an older version of the CRD may be served
                self._listed.add(key)  # e.g. no spark-operator CRD
                self._outcome(key)
                if len(self._listed) == len(RESOURCES):
                    self.ready.set()
                self.stopping.wait(60)
            except (errors.KubectlSparkError, OSError, ValueError) as exc:
                # The connection was lost (or never made): list again once it answers. A server
                # that restarted may have lost its state, and kube-apiserver's watch cache
                # accepts a resourceVersion from before (apiserver storage/cacher
                # watch_cache.go: only a list waits for a fresh enough cache): resuming the
                # watch would keep showing what it no longer has.
                if not self.stopping.is_set():
                    self._outcome(key, getattr(exc, "message", str(exc)))
                self.stopping.wait(backoff)
                backoff = min(backoff * 2, 10.0)

    @contextlib.contextmanager
    def _open(self, api: Api) -> Iterator[None]:
        """``api`` known to ``stop`` while a watch thread uses it."""
        with self.lock:
            self._apis[id(api)] = api
        try:
            yield
        finally:
            with self.lock:
                self._apis.pop(id(api), None)

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
            # A watch ended by its server (its timeout, a cut without an error) resumes from the
            # last resourceVersion, and so does one the server answered 429 or 5xx (it is there,
            # with its state); a lost connection raises, and the caller lists again. The watch
            # request itself is never retried under us (Api.watch): a retry would resume.
            try:
                for batch in api.watch(
                    path, query, what=f"watch {key}", opened=lambda: self._outcome(key)
                ):
                    if self.stopping.is_set():
                        return
                    for event in batch:
                        kind = event.get("type")
                        obj = event.get("object") or {}
                        if kind == "ERROR":
                            return  # too old: the caller lists again
                        meta = obj.get("metadata") or {}
                        rv = str(meta.get("resourceVersion") or rv)
                        if kind != "BOOKMARK":
                            self._apply(key, str(kind), obj)
            except errors.ApiRequestError as exc:
                if exc.status not in RETRIED:
                    raise
                self._outcome(key, exc.message)
                self.stopping.wait(exc.retry_after or 1.0)


def _kept(key: str, obj: object) -> object:
    """What the view keeps of an object of ``key``'s kind: a pod or a node typed, the rest slim."""
    if key == resources.PODS.key:
        return slim.pod(obj)
    return Node.of(obj) if key == resources.NODES.key else slim.other(obj)


def _uid(kept: object) -> str:
    """What the view keys a kept object by ("" for one without: it is not kept)."""
    if isinstance(kept, Pod):
        return kept.metadata.uid
    return kept.uid if isinstance(kept, Node) else raw.uid(kept)
