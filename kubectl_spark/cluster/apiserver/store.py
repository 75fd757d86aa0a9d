"""The object store: kube-apiserver's registry and etcd, reduced to what clients can observe.

Everything runs on the server's event loop thread, so there are no locks: each operation is a
synchronous function that completes before the next request is looked at. Stored objects are
never mutated after they are stored (every write stores a fresh dict), which lets list
snapshots and watch history share them safely and lets their JSON be cached.
"""

from __future__ import annotations

import copy
import time
from datetime import timedelta
from typing import Any

from kubectl_spark.knowledge.clock import Clock
from kubectl_spark.knowledge.times import rfc3339

from . import admission, kinds
from .continuation import Continuations
from .errors import ApiError, bad_request, expired, invalid, not_found
from .eventttl import EventExpiry
from .garbage import GarbageCollector
from .namespaces import NamespaceLifecycle
from .resources import Registry, ResourceType
from .selectors import FieldSelector, LabelSelector
from .store_writes import Writes
from .storedata import (
    SYSTEM_NAMESPACES,
    DeleteOptions,
    Key,
    ListResult,
    Snapshot,
    Storage,
    Stored,
    checked_policy,
    list_order,
    selected,
)
from .watch import Watcher, WatchEvent
from .watchhub import WatchHub


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
        self.watches = WatchHub(history_size)
        self.continuations = Continuations(snapshot_ttl_seconds, max_snapshots)
        #: The CA the API server's certificate is signed by, which each namespace's
        #: ``kube-root-ca.crt`` ConfigMap holds ("" without TLS: no ConfigMap).
        self.root_ca = ""
        self.storages: dict[str, Storage] = {}
        for rt in registry.types:
            if rt.stored and rt.key not in self.storages:
                self.storages[rt.key] = Storage(rt)
        self.by_uid: dict[str, tuple[str, Key]] = {}
        self.dependents: dict[str, set[tuple[str, Key]]] = {}
        # The controllers and timers that act inside a change, each holding this store.
        self.gc = GarbageCollector(self)
        self.namespaces = NamespaceLifecycle(self)
        self.events = EventExpiry(self, event_ttl_seconds)
        self.writes = Writes(self)
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

    def now_text(self) -> str:
        return rfc3339(self.clock.now())

    def bump(self) -> int:
        self.rv += 1
        return self.rv

    def key(self, rt: ResourceType, namespace: str, name: str) -> Key:
        return (namespace if rt.namespaced else "", name)

    def lookup(self, rt: ResourceType, namespace: str, name: str) -> Stored | None:
        return self.storage(rt).objects.get(self.key(rt, namespace, name))

    def require(self, rt: ResourceType, namespace: str, name: str) -> Stored:
        stored = self.lookup(rt, namespace, name)
        if stored is None:
            raise not_found(rt.plural, rt.group, name)
        return stored

    def compact(self) -> None:
        """Forget all watch history, as etcd compaction does: older watches then get 410."""
        self.watches.compact(self.storages.values(), self.rv)

    def index(
        self, storage_key: str, key: Key, obj: dict[str, Any], old: dict[str, Any] | None
    ) -> None:
        if old is not None:
            for ref in old["metadata"].get("ownerReferences") or []:
                self.dependents.get(str(ref.get("uid")), set()).discard((storage_key, key))
        uid = obj["metadata"]["uid"]
        self.by_uid[uid] = (storage_key, key)
        for ref in obj["metadata"].get("ownerReferences") or []:
            self.dependents.setdefault(str(ref.get("uid")), set()).add((storage_key, key))

    def unindex(self, storage_key: str, key: Key, obj: dict[str, Any]) -> None:
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
    def create(
        self, rt: ResourceType, namespace: str, body: dict[str, Any], *, dry_run: bool = False
    ) -> dict[str, Any]:
        return self.writes.create(rt, namespace, body, dry_run=dry_run)

    def catch_up(self) -> None:
        """What is due before any operation: emptied namespaces removed, expired Events dropped."""
        self.namespaces.finish_held()
        self.events.expire()

    # --------------------------------------------------------------------------------- read
    def get(self, rt: ResourceType, namespace: str, name: str) -> dict[str, Any]:
        self.catch_up()
        return kinds.from_storage(rt, self.require(rt, namespace, name).obj)

    def get_stored(self, rt: ResourceType, namespace: str, name: str) -> Stored:
        self.catch_up()
        return self.require(rt, namespace, name)

    def matching(
        self, rt: ResourceType, namespace: str, labels: LabelSelector, fields: FieldSelector
    ) -> list[Stored]:
        """The objects a list of ``namespace`` with these selectors holds, in no order."""
        getters = kinds.field_getters(self.storage(rt).rt)
        return [
            stored
            for stored in self.storage(rt).objects.values()
            if selected(rt, stored.obj, namespace, labels, fields, getters)
        ]

    def list_objects(
        self,
        rt: ResourceType,
        namespace: str,
        labels: LabelSelector,
        fields: FieldSelector,
        *,
        limit: int | None = None,
        continue_token: str | None = None,
        resource_version: str | None = None,
        resource_version_match: str | None = None,
    ) -> ListResult:
        self.catch_up()
        storage = self.storage(rt)
        if continue_token:
            if resource_version not in (None, "", "0"):
                raise bad_request("specifying resource version is not allowed when using continue")
            snapshot, start = self.continuations.resume(continue_token, storage, self.rv)
        else:
            self._check_list_rv(storage, resource_version, resource_version_match, limit)
            items = sorted(storage.objects.values(), key=list_order)
            snapshot = Snapshot(self.rv, rt.key, items, time.monotonic())
            start = 0
        out: list[Stored | dict[str, Any]] = []
        items = snapshot.items
        total = len(items)
        getters = kinds.field_getters(storage.rt)
        index = start
        has_more = False
        while index < total:
            stored = items[index]
            if not selected(rt, stored.obj, namespace, labels, fields, getters):
                index += 1
                continue
            if limit and len(out) >= limit:
                has_more = True
                break
            out.append(kinds.from_storage(rt, stored.obj) if rt.storage else stored)
            index += 1
        token = ""
        remaining: int | None = None
        if has_more:
            token = self.continuations.remember(snapshot, index)
            if labels.empty and fields.empty and not namespace:
                remaining = total - index
        return ListResult(out, snapshot.rv, token, remaining)

    def _check_list_rv(
        self, storage: Storage, rv: str | None, match: str | None, limit: int | None
    ) -> None:
        if match and not rv:
            raise _bad_match(
                "FieldValueForbidden",
                "Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided",
            )
        if match and match not in ("Exact", "NotOlderThan"):
            raise _bad_match(
                "FieldValueNotSupported",
                f'Unsupported value: "{match}": supported values: "Exact", "NotOlderThan"',
            )
        if not rv or rv == "0":
            if match == "Exact":
                raise _bad_match(
                    "FieldValueForbidden",
                    'Forbidden: resourceVersionMatch "exact" is forbidden for resourceVersion "0"',
                )
            return
        wanted = self.check_fresh(rv)
        exact = match == "Exact" or (match is None and limit)
        if exact and wanted < storage.last_write_rv:
            # Only the current state is kept; it equals the state at `wanted` only if nothing
            # of this resource changed since.
            raise expired("The resourceVersion for the provided list is too old.")

    def check_fresh(self, rv: str) -> int:
        """A read at resourceVersion ``rv`` (not older than it): the store must have reached it.

        kube-apiserver waits up to 3 s for its watch cache to get there, then answers 504 "Too
        large resource version" (apiserver storage/cacher/watch_cache.go
        ``waitUntilFreshAndBlock``), for a list and a get alike; a watch from such a version is
        accepted (it just sees nothing older).
        """
        try:
            wanted = int(rv)
        except ValueError as exc:
            raise bad_request(f'invalid resource version "{rv}"') from exc
        if wanted > self.rv:
            raise ApiError(
                504,
                "Timeout",
                f"Timeout: Too large resource version: {wanted}, current: {self.rv}",
                {
                    "causes": [
                        {
                            "reason": "ResourceVersionTooLarge",
                            "message": "Too large resource version",
                        }
                    ],
                    "retryAfterSeconds": 1,
                },
            )
        return wanted

    def expire_continue_tokens(self) -> None:
        self.continuations.clear()

    def watch(
        self,
        rt: ResourceType,
        namespace: str,
        labels: LabelSelector,
        fields: FieldSelector,
        resource_version: str | None,
        *,
        send_initial_events: bool = False,
        allow_bookmarks: bool = False,
    ) -> Watcher:
        self.catch_up()
        return self.watches.watch(
            self.storage(rt),
            rt,
            namespace,
            labels,
            fields,
            resource_version,
            self.rv,
            send_initial_events=send_initial_events,
            allow_bookmarks=allow_bookmarks,
        )

    def unwatch(self, watcher: Watcher) -> None:
        self.storage(watcher.rt).watchers.discard(watcher)

    def close_watches(self) -> None:
        self.watches.close(self.storages.values())

    # ------------------------------------------------------------------------------ delete
    def delete(
        self, rt: ResourceType, namespace: str, name: str, opts: DeleteOptions
    ) -> tuple[dict[str, Any], bool]:
        """Delete; return (the object in its last or pending state, whether it is gone)."""
        self.catch_up()
        storage = self.storage(rt)
        current = self.require(rt, namespace, name)
        key = self.key(rt, namespace, name)
        meta = current.obj["metadata"]
        policy = checked_policy(rt, storage.rt, meta, name, opts)
        grace = kinds.grace_period_for_delete(storage.rt, current.obj, opts.grace_period_seconds)
        admission.admit(
            self,
            admission.Request("DELETE", rt, namespace, name, "", None, current.obj, opts.dry_run),
        )
        if opts.dry_run:
            return kinds.from_storage(rt, current.obj), False
        if storage.rt.plural == "namespaces":
            return self.namespaces.delete(storage, current), False
        finalizers = list(meta.get("finalizers") or [])
        wanted = {"Orphan": "orphan", "Foreground": "foregroundDeletion"}.get(policy)
        if wanted and wanted not in finalizers and not meta.get("deletionTimestamp"):
            finalizers.append(wanted)
        now = self.clock.now()
        if meta.get("deletionTimestamp"):
            current_grace = int(meta.get("deletionGracePeriodSeconds") or 0)
            if storage.rt.plural == "pods" and grace < current_grace:
                result = copy.deepcopy(current.obj)
                result["metadata"]["deletionTimestamp"] = rfc3339(now + timedelta(seconds=grace))
                result["metadata"]["deletionGracePeriodSeconds"] = grace
                self.writes.replace(storage, current, result)
                if grace == 0 and not finalizers:
                    return kinds.from_storage(rt, self.remove(storage, key)), True
                return kinds.from_storage(rt, storage.objects[key].obj), False
            return kinds.from_storage(rt, current.obj), False
        if grace > 0 or finalizers:
            result = copy.deepcopy(current.obj)
            result["metadata"]["deletionTimestamp"] = rfc3339(now + timedelta(seconds=grace))
            result["metadata"]["deletionGracePeriodSeconds"] = grace
            if finalizers:
                result["metadata"]["finalizers"] = finalizers
            if "generation" in result["metadata"]:
                result["metadata"]["generation"] = int(result["metadata"]["generation"]) + 1
            self.writes.replace(storage, current, result)
            self.gc.process_deleting(storage, key)
            if key in storage.objects:
                return kinds.from_storage(rt, storage.objects[key].obj), False
            # Its finalizers ran at once here; kube-apiserver answers before its collector runs
            # them (registry/generic/registry/store.go: pending finalizers, the object is
            # returned), so the answer is the object marked for deletion, as it was written.
            return kinds.from_storage(rt, result), not finalizers
        if storage.rt.plural == "pods":
            # The pod strategy's CheckGracefulDelete makes this a graceful deletion of 0 seconds:
            # kube-apiserver writes the mark (a MODIFIED event) before it deletes, so watchers
            # see a pending pod deleted, or a forced deletion, as deleted, not as vanished.
            result = copy.deepcopy(current.obj)
            result["metadata"]["deletionTimestamp"] = rfc3339(now)
            result["metadata"]["deletionGracePeriodSeconds"] = 0
            self.writes.replace(storage, current, result)
        return kinds.from_storage(rt, self.remove(storage, key)), True

    def delete_collection(
        self,
        rt: ResourceType,
        namespace: str,
        labels: LabelSelector,
        fields: FieldSelector,
        opts: DeleteOptions,
    ) -> list[dict[str, Any]]:
        victims = [s.obj for s in self.matching(rt, namespace, labels, fields)]
        out = []
        for obj in victims:
            meta = obj["metadata"]
            if self.lookup(rt, meta.get("namespace", ""), meta["name"]) is None:
                continue
            out.append(self.delete(rt, meta.get("namespace", ""), meta["name"], opts)[0])
        return out

    def remove(self, storage: Storage, key: Key) -> dict[str, Any]:
        current = storage.objects.pop(key)
        final = copy.deepcopy(current.obj)
        final["metadata"]["resourceVersion"] = str(self.bump())
        self.unindex(storage.rt.key, key, current.obj)
        self.watches.record(storage, WatchEvent(self.rv, "DELETED", final, current.obj))
        self.gc.on_removed(final)
        self.namespaces.on_removed(storage, final)
        return final


def _bad_match(reason: str, message: str) -> ApiError:
    """A list's resourceVersionMatch refused, as kube-apiserver's ListOptions validation says."""
    return invalid("ListOptions", "meta.k8s.io", "", [(reason, "resourceVersionMatch", message)])
