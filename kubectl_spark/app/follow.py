"""Following a cluster, the one way ``ls -w``, ``kubectl spark record`` and the TUI do it.

A ``Follow`` lists, then watches, each resource the core reads (``kube.live.LiveCluster``: one
watch per resource, listing again on 410, reconnecting with backoff), starting from what the
caller already has: the snapshot ``ls`` printed (``seed_snapshot``), or what the local store and
the in-cluster recorder kept (``seed_kept``). The caller takes each batch (``take_changes``) and
analyzes it. When asked (``keep_into``), every batch is also written to the local history store
and the last lines of containers that stopped are asked for (``Keeping``), so a loss stays
explained after the cluster forgets its pod.
"""

from __future__ import annotations

import queue
import sqlite3
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from kubectl_spark.core.incremental import Changes
from kubectl_spark.core.inputs import Snapshot
from kubectl_spark.core.pod import Pod
from kubectl_spark.errors import KubectlSparkError, LocalStoreError
from kubectl_spark.kube import recorder_api
from kubectl_spark.kube.client import Api, Connection, connect, history_scope
from kubectl_spark.kube.incluster import Discovery
from kubectl_spark.kube.live import LiveCluster
from kubectl_spark.kube.logtails import LogKeeper
from kubectl_spark.kube.recorder_api import RecorderRef
from kubectl_spark.kube.snapshot import check_credentials, check_namespace
from kubectl_spark.kube.store_writer import StoreWriter
from kubectl_spark.localstore import LocalStore, Scope

__all__ = ["Follow", "Keeping", "KeptSeeds", "Opening", "RecorderRef", "open_cluster"]

# (pod, seen at, "history" or "recorder"), and the Events: what ``app.view.kept`` returns
KeptSeeds = tuple[list[tuple[dict[str, Any], str, str]], list[dict[str, Any]]]


@dataclass(frozen=True)
class Opening:
    """What is learned on connecting, before following: where, whose, and what was kept."""

    context: str
    namespace: str | None  # None: every namespace
    scope: Scope  # whose objects the history store files
    seeds: KeptSeeds
    recorder: RecorderRef | None  # the in-cluster recorder found, when one was asked for


def open_cluster(
    connection: Connection,
    *,
    all_namespaces: bool,
    history: Path | None = None,
    cluster_recorder: str | None = None,
) -> Opening:
    """Connect once and check before following: credentials, the namespace, what was kept.

    A rejected credential is named by the pods list (``check_credentials``), an unknown
    namespace is said as ``ls -n`` says it (not followed as an empty one), and a local store
    that cannot be read seeds nothing: the view works without it (``ls`` says why).
    """
    from kubectl_spark.app.view import kept

    with connect(connection) as api:
        namespace = None if all_namespaces else api.namespace
        check_credentials(api, namespace)
        scope = history_scope(api)
        if namespace is not None:
            check_namespace(api, namespace)
        found = Discovery(api)  # one Services list for both reads below
        try:
            seeds = kept(api, namespace, history, cluster_recorder, found)
        except LocalStoreError:
            seeds = kept(api, namespace, None, cluster_recorder, found)
        ref = recorder_api.find(api, cluster_recorder, found) if cluster_recorder else None
        return Opening(api.resolved.context, namespace, scope, seeds, ref)


class Keeping:
    """Each batch written to the local store; the stopped containers' last lines asked for.

    Asked for at once (``record``: Spark deletes a lost executor's pod, and its log, within a
    second), or in a thread of its own (the TUI: a burst of failures must not hold up the
    analysis).
    """

    def __init__(
        self,
        store: LocalStore,
        scope: Scope,
        connect_api: Callable[[], Api],
        *,
        logs_in_background: bool,
    ) -> None:
        self.store = store
        self.scope = scope
        self.writer = StoreWriter(store, scope)
        self.logs: LogKeeper | None = None
        self._api: Api | None = None
        self._connect = connect_api
        # In the background: batches of (pod, gone?) and whether they were listed; None ends.
        self._queue: queue.Queue[tuple[list[tuple[Pod, bool]], bool] | None] | None = (
            queue.Queue() if logs_in_background else None
        )
        self._thread: threading.Thread | None = None
        if logs_in_background:
            self._thread = threading.Thread(target=self._keep_logs, name="keep-logs", daemon=True)
            self._thread.start()
        else:
            self._api = connect_api()
            self.logs = LogKeeper(self._api, store, scope)

    def write(self, changes: Changes | None, snapshot: Snapshot) -> None:
        """One batch (``None`` changes: everything was listed), then its stopped containers."""
        pods = self.writer.write(changes, snapshot)
        if self._queue is not None:
            self._queue.put((pods, changes is None))
        elif self.logs is not None:
            self.logs.keep(pods, listed=changes is None)

    @property
    def logs_forbidden(self) -> bool:
        """The API refused the logs (RBAC): not asked for again."""
        return self.logs is not None and self.logs.forbidden

    @property
    def logs_kept(self) -> int:
        return self.logs.kept if self.logs is not None else 0

    def _keep_logs(self) -> None:
        """The thread: ask for the last lines of containers that stopped, as batches tell."""
        assert self._queue is not None
        try:
            with self._connect() as api:
                self.logs = LogKeeper(api, self.store, self.scope)
                while True:
                    try:
                        batch = self._queue.get(timeout=0.2 if self.logs.pending else None)
                    except queue.Empty:
                        batch = ([], False)  # drain what waits, a few at a time
                    if batch is None:
                        return
                    self.logs.keep(batch[0], listed=batch[1])
        except (KubectlSparkError, sqlite3.Error):
            # No connection (the watches say so) or a store that cannot be written (the
            # recorder says so): the lines are a bonus, never a crash.
            return

    def close(self) -> None:
        if self._thread is not None and self._queue is not None:
            self._queue.put(None)
            self._thread.join(timeout=10)  # a log being read ends within its 5 s timeout
            self._thread = None
        if self._api is not None:
            self._api.close()
        self.store.close()


class Follow:
    """One cluster followed by watches; what it was seeded with stays until the cluster says more."""

    def __init__(
        self,
        connection: Connection,
        namespace: str | None,
        *,
        clock: Callable[[], datetime] | None = None,
    ) -> None:
        self.connection = connection
        self.namespace = namespace
        self.live = LiveCluster(self.connect, namespace, clock=clock)
        self.keeping: Keeping | None = None

    def connect(self) -> Api:
        """A client of its own (each watch has one; a plan or a log view another)."""
        return connect(self.connection)

    def seed_snapshot(self, snapshot: Snapshot) -> None:
        """Start from what ``ls`` printed: its kept pods and Events stay in the rows."""
        self.live.seed_snapshot(snapshot)

    def seed_kept(self, seeds: KeptSeeds) -> None:
        """Start from what the local store and the in-cluster recorder kept."""
        pods, events = seeds
        for source in ("history", "recorder"):
            self.live.seed([(p, seen) for p, seen, s in pods if s == source], [], source)
        self.live.seed([], events)

    def keep_into(self, path: Path, scope: Scope, *, logs_in_background: bool) -> None:
        """Write every batch to the local store at ``path`` (``LocalStoreError`` if it cannot be)."""
        self.keeping = Keeping(
            LocalStore(path), scope, self.connect, logs_in_background=logs_in_background
        )

    def start(self, on_change: Callable[[], None] | None) -> None:
        """Watch; ``on_change`` is called from a watch thread when a batch is waiting."""
        self.live.on_change = on_change
        self.live.start()

    def take_changes(self) -> tuple[Changes | None, Snapshot]:
        """The changes since the last call (None: everything) and the cluster as it is now."""
        return self.live.take_changes()

    def keep(self, changes: Changes | None, snapshot: Snapshot) -> None:
        """Write a batch taken, when keeping (the caller decides when: a standby does not)."""
        if self.keeping is not None:
            self.keeping.write(changes, snapshot)

    def stop(self, wait: float = 0.0) -> None:
        """Stop watching (``wait``: cut the streams, wait that long for the threads)."""
        self.live.stop(wait)

    def close(self) -> None:
        """Stop keeping: the log thread ends, the store closes."""
        if self.keeping is not None:
            self.keeping.close()
            self.keeping = None

    # What the watches say: the status bar's and stderr's words.
    @property
    def state(self) -> str:
        """connecting, live, reconnecting or forbidden."""
        return self.live.state

    @property
    def error(self) -> str:
        return self.live.error

    @property
    def ready(self) -> threading.Event:
        """Set once every resource was listed."""
        return self.live.ready

    @property
    def version(self) -> int:
        return self.live.version

    @property
    def last_event(self) -> float | None:
        return self.live.last_event

    @property
    def lists(self) -> int:
        return self.live.lists

    def now(self) -> datetime:
        """The time by the cluster's clock, as the watches have learned it."""
        return self.live.clock()
