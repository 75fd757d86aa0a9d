"""The object store: kube-apiserver's registry and etcd, reduced to what clients can observe.

Everything runs on the server's event loop thread, so there are no locks: each operation is a
synchronous function that completes before the next request is looked at. Stored objects are
never mutated after they are stored (every write stores a fresh dict), which lets list
snapshots and watch history share them safely and lets their JSON be cached.
"""

from __future__ import annotations

import copy
from collections import OrderedDict
from typing import Any

from kubectl_spark.knowledge.clock import Clock
from kubectl_spark.knowledge.times import rfc3339

from . import admission
from . import store_deletion as _store_deletion
from . import store_reads as _store_reads
from . import store_writes as _store_writes
from .errors import (
    not_found,
)
from .resources import Registry, ResourceType
from .storedata import (
    SYSTEM_NAMESPACES,
    Key,
    Snapshot,
    Storage,
    Stored,
)
from .watch import WatchEvent


class Store:
    def __init__(
        self,
        registry: Registry,
        clock: Clock,
        *,
        history_size: int = 20000,
        event_ttl_seconds: float = 3600.0,
        snapshot_ttl_seconds: float = 300.0,
        max_snapshots: int = 256,
    ) -> None:
        self.registry = registry
        self.clock = clock
        self.rv = 1
        self.history_size = history_size
        self.event_ttl_seconds = event_ttl_seconds
        self.snapshot_ttl_seconds = snapshot_ttl_seconds
        self.max_snapshots = max_snapshots
        self.gc_enabled = True
        #: The CA the API server's certificate is signed by, which each namespace's
        #: ``kube-root-ca.crt`` ConfigMap holds ("" without TLS: no ConfigMap).
        self.root_ca = ""
        self.storages: dict[str, Storage] = {}
        for rt in registry.types:
            if rt.stored and rt.key not in self.storages:
                self.storages[rt.key] = Storage(rt)
        self.by_uid: dict[str, tuple[str, Key]] = {}
        self.dependents: dict[str, set[tuple[str, Key]]] = {}
        self.snapshots: OrderedDict[str, Snapshot] = OrderedDict()
        self._event_expiry: list[tuple[float, str, Key, int]] = []
        # Namespaces deleted and not yet removed, with the monotonic time they may go: kube-
        # apiserver answers a namespace DELETE with the object Terminating, and the namespace
        # controller (pkg/controller/namespace) removes it once emptied, a moment later. Until
        # then creating in it is Forbidden (NamespaceTerminating), as the admission says.
        self._namespaces_held: dict[str, float] = {}
        self._next_cluster_ip = 10
        namespaces = self.registry.lookup("", "v1", "namespaces")
        assert namespaces is not None
        for ns in SYSTEM_NAMESPACES:
            self.create(namespaces, "", {"metadata": {"name": ns}})
        # kube-apiserver's watch cache starts from a list at its start: a watch from before it
        # is too old (410), as a watch from resourceVersion 1 on a new cluster is.
        for storage in self.storages.values():
            storage.compacted_rv = self.rv

    def publish_root_ca(self, pem: str) -> None:
        """The API server's CA in every namespace's ``kube-root-ca.crt``, now and from now on.

        kube-controller-manager's root-ca-cert-publisher does this on a real cluster; pods
        read it through the service account volume that admission mounts.
        """
        self.root_ca = pem
        configmaps = self.registry.lookup("", "v1", "configmaps")
        namespaces = self.registry.lookup("", "v1", "namespaces")
        if configmaps is None or namespaces is None:
            return
        body = {"metadata": {"name": "kube-root-ca.crt"}, "data": {"ca.crt": pem}}
        for key in list(self.storage(namespaces).objects):
            namespace = key[1]
            with admission.as_cluster():
                self.create(configmaps, namespace, copy.deepcopy(body))

    # ------------------------------------------------------------------------------ helpers
    def storage(self, rt: ResourceType) -> Storage:
        return self.storages[rt.key]

    def _now(self) -> str:
        return rfc3339(self.clock.now())

    def _bump(self) -> int:
        self.rv += 1
        return self.rv

    def _key(self, rt: ResourceType, namespace: str, name: str) -> Key:
        return (namespace if rt.namespaced else "", name)

    def lookup(self, rt: ResourceType, namespace: str, name: str) -> Stored | None:
        return self.storage(rt).objects.get(self._key(rt, namespace, name))

    def _require(self, rt: ResourceType, namespace: str, name: str) -> Stored:
        stored = self.lookup(rt, namespace, name)
        if stored is None:
            raise not_found(rt.plural, rt.group, name)
        return stored

    def _record(self, storage: Storage, event: WatchEvent) -> None:
        storage.last_write_rv = event.rv
        storage.history.append(event)
        while len(storage.history) > self.history_size:
            dropped = storage.history.popleft()
            storage.compacted_rv = max(storage.compacted_rv, dropped.rv)
        for watcher in list(storage.watchers):
            watcher.offer(event)

    def compact(self) -> None:
        """Forget all watch history, as etcd compaction does: older watches then get 410."""
        for storage in self.storages.values():
            storage.history.clear()
            storage.compacted_rv = self.rv

    def _index(
        self, storage_key: str, key: Key, obj: dict[str, Any], old: dict[str, Any] | None
    ) -> None:
        if old is not None:
            for ref in old["metadata"].get("ownerReferences") or []:
                self.dependents.get(str(ref.get("uid")), set()).discard((storage_key, key))
        uid = obj["metadata"]["uid"]
        self.by_uid[uid] = (storage_key, key)
        for ref in obj["metadata"].get("ownerReferences") or []:
            self.dependents.setdefault(str(ref.get("uid")), set()).add((storage_key, key))

    def _unindex(self, storage_key: str, key: Key, obj: dict[str, Any]) -> None:
        self.by_uid.pop(obj["metadata"]["uid"], None)
        for ref in obj["metadata"].get("ownerReferences") or []:
            deps = self.dependents.get(str(ref.get("uid")))
            if deps is not None:
                deps.discard((storage_key, key))
                if not deps:
                    del self.dependents[str(ref.get("uid"))]

    def by_uid_get(self, uid: str) -> tuple[Storage, Stored] | None:
        loc = self.by_uid.get(uid)
        if loc is None:
            return None
        storage = self.storages[loc[0]]
        stored = storage.objects.get(loc[1])
        return (storage, stored) if stored is not None else None

    # ------------------------------------------------------------------------------- create
    create = _store_writes.create
    _admit_namespace = _store_writes._admit_namespace
    _allocate_cluster_ip = _store_writes._allocate_cluster_ip
    update = _store_writes.update
    patch = _store_writes.patch
    force_write = _store_writes.force_write
    _write = _store_writes._write
    _replace = _store_writes._replace
    _after_write = _store_writes._after_write

    # --------------------------------------------------------------------------------- read
    get = _store_reads.get
    get_stored = _store_reads.get_stored
    _selected = staticmethod(_store_reads._selected)
    _matching = _store_reads._matching
    list_objects = _store_reads.list_objects
    _check_list_rv = _store_reads._check_list_rv
    check_fresh = _store_reads.check_fresh
    _remember = _store_reads._remember
    _prune_snapshots = _store_reads._prune_snapshots
    expire_continue_tokens = _store_reads.expire_continue_tokens
    _resume = _store_reads._resume
    watch = _store_reads.watch
    unwatch = _store_reads.unwatch
    close_watches = _store_reads.close_watches

    # ------------------------------------------------------------------------------- watch

    # ------------------------------------------------------------------------------ update

    # ------------------------------------------------------------------------------ delete
    delete = _store_deletion.delete
    delete_collection = _store_deletion.delete_collection
    _remove = _store_deletion._remove
    _owner_alive = _store_deletion._owner_alive
    _collect_if_orphaned = _store_deletion._collect_if_orphaned
    _on_removed = _store_deletion._on_removed
    _process_deleting = _store_deletion._process_deleting
    set_gc_enabled = _store_deletion.set_gc_enabled
    _delete_namespace = _store_deletion._delete_namespace
    _finish_held_namespaces = _store_deletion._finish_held_namespaces
    _finish_namespace = _store_deletion._finish_namespace
    _schedule_expiry = _store_deletion._schedule_expiry
    expire_events = _store_deletion.expire_events

    # ---------------------------------------------------------------- garbage collection

    # --------------------------------------------------------------------------- namespaces

    # ------------------------------------------------------------------------------ events
