"""Deletion: graceful delete with preconditions, finalizers, garbage collection by ownerReferences, namespaces that terminate, Events that expire."""

from __future__ import annotations

import copy
import heapq
import time
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from kubectl_spark.knowledge.times import rfc3339

from . import admission, kinds
from .errors import (
    conflict,
    invalid,
)
from .resources import ResourceType
from .selectors import FieldSelector, LabelSelector
from .storedata import (
    NAMESPACE_FINISH_SECONDS,
    DeleteOptions,
    Key,
    Storage,
    Stored,
)
from .watch import WatchEvent

if TYPE_CHECKING:
    from .store import Store


def delete(
    self: Store, rt: ResourceType, namespace: str, name: str, opts: DeleteOptions
) -> tuple[dict[str, Any], bool]:
    """Delete; return (the object in its last or pending state, whether it is gone)."""
    self.expire_events()
    storage = self.storage(rt)
    current = self._require(rt, namespace, name)
    key = self._key(rt, namespace, name)
    meta = current.obj["metadata"]
    policy = _checked_policy(rt, storage.rt, meta, name, opts)
    grace = kinds.grace_period_for_delete(storage.rt, current.obj, opts.grace_period_seconds)
    admission.admit(
        self,
        admission.Request("DELETE", rt, namespace, name, "", None, current.obj, opts.dry_run),
    )
    if opts.dry_run:
        return kinds.from_storage(rt, current.obj), False
    if storage.rt.plural == "namespaces":
        return self._delete_namespace(storage, current), False
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
            self._replace(storage, current, result)
            if grace == 0 and not finalizers:
                return kinds.from_storage(rt, self._remove(storage, key)), True
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
        self._replace(storage, current, result)
        self._process_deleting(storage, key)
        if key in storage.objects:
            return kinds.from_storage(rt, storage.objects[key].obj), False
        return kinds.from_storage(rt, result), True
    if storage.rt.plural == "pods":
        # The pod strategy's CheckGracefulDelete makes this a graceful deletion of 0 seconds:
        # kube-apiserver writes the mark (a MODIFIED event) before it deletes, so watchers
        # see a pending pod deleted, or a forced deletion, as deleted, not as vanished.
        result = copy.deepcopy(current.obj)
        result["metadata"]["deletionTimestamp"] = rfc3339(now)
        result["metadata"]["deletionGracePeriodSeconds"] = 0
        self._replace(storage, current, result)
    return kinds.from_storage(rt, self._remove(storage, key)), True


def _checked_policy(
    rt: ResourceType, stored_rt: ResourceType, meta: dict[str, Any], name: str, opts: DeleteOptions
) -> str:
    """The preconditions, then the propagation policy (the kind's default when not given)."""
    # rest.BeforeDelete checks the preconditions first, naming the Kind, not the resource
    # (staging/src/k8s.io/apiserver/pkg/registry/rest/delete.go).
    if opts.precondition_uid and opts.precondition_uid != meta["uid"]:
        raise conflict(
            rt.kind,
            rt.group,
            name,
            f"the UID in the precondition ({opts.precondition_uid}) does not match the UID in record ({meta['uid']}). The object might have been deleted and then recreated",
        )
    if opts.precondition_rv and opts.precondition_rv != meta["resourceVersion"]:
        raise conflict(
            rt.kind,
            rt.group,
            name,
            f"the ResourceVersion in the precondition ({opts.precondition_rv}) does not match the ResourceVersion in record ({meta['resourceVersion']}). The object might have been modified",
        )
    if opts.propagation_policy and opts.orphan_dependents is not None:
        raise invalid(
            "DeleteOptions",
            "meta.k8s.io",
            "",
            [
                (
                    "FieldValueInvalid",
                    "propagationPolicy",
                    "Invalid value: orphanDependents and deletionPropagation cannot be both set",
                )
            ],
        )
    policy = opts.propagation_policy
    if policy is None and opts.orphan_dependents is not None:
        policy = "Orphan" if opts.orphan_dependents else "Background"
    policy = policy or kinds.default_propagation(stored_rt)
    if policy not in ("Orphan", "Background", "Foreground"):
        raise invalid(
            "DeleteOptions",
            "meta.k8s.io",
            "",
            [
                (
                    "FieldValueNotSupported",
                    "propagationPolicy",
                    f'Unsupported value: "{policy}": supported values: "Foreground", "Background", "Orphan", "nil"',
                )
            ],
        )
    return policy


def delete_collection(
    self: Store,
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


def _remove(self: Store, storage: Storage, key: Key) -> dict[str, Any]:
    current = storage.objects.pop(key)
    final = copy.deepcopy(current.obj)
    final["metadata"]["resourceVersion"] = str(self._bump())
    self._unindex(storage.rt.key, key, current.obj)
    self.watches.record(storage, WatchEvent(self.rv, "DELETED", final, current.obj))
    self._on_removed(storage, final)
    return final


def _owner_alive(self: Store, ref: dict[str, Any]) -> bool:
    if self.by_uid_get(str(ref.get("uid"))) is not None:
        return True
    group = str(ref.get("apiVersion", "")).rpartition("/")[0]
    # An owner of a kind this server does not serve cannot be checked: leave its dependents.
    return self.registry.by_kind_any_version(str(ref.get("kind")), group) is None


def _collect_if_orphaned(self: Store, storage_key: str, key: Key) -> None:
    if not self.gc_enabled:
        return
    storage = self.storages[storage_key]
    stored = storage.objects.get(key)
    if stored is None:
        return
    refs = stored.obj["metadata"].get("ownerReferences") or []
    if not refs:
        return
    alive = [r for r in refs if self._owner_alive(r)]
    if alive:
        if len(alive) != len(refs):
            result = copy.deepcopy(stored.obj)
            result["metadata"]["ownerReferences"] = alive
            self._replace(storage, stored, result)
        return
    if stored.obj["metadata"].get("deletionTimestamp"):
        return
    meta = stored.obj["metadata"]
    with admission.as_cluster():  # the garbage collector's delete, not the requester's
        self.delete(
            storage.rt,
            meta.get("namespace", ""),
            meta["name"],
            DeleteOptions(propagation_policy="Background"),
        )


def _on_removed(self: Store, storage: Storage, final: dict[str, Any]) -> None:
    meta = final["metadata"]
    uid = meta["uid"]
    if self.gc_enabled:
        for dep in sorted(self.dependents.pop(uid, set())):
            self._collect_if_orphaned(*dep)
        # Owners waiting in foreground deletion for this dependent.
        for ref in meta.get("ownerReferences") or []:
            found = self.by_uid_get(str(ref.get("uid")))
            if found is not None:
                owner_storage, owner = found
                okey = (
                    owner.obj["metadata"].get("namespace", ""),
                    owner.obj["metadata"]["name"],
                )
                self._process_deleting(owner_storage, okey)
    ns = meta.get("namespace")
    if ns and storage.rt.plural != "namespaces":
        ns_storage = self.storages["namespaces."]
        ns_obj = ns_storage.objects.get(("", ns))
        if ns_obj is not None and ns_obj.obj["metadata"].get("deletionTimestamp"):
            self._finish_namespace(ns_storage, ns)


def _process_deleting(self: Store, storage: Storage, key: Key) -> None:
    """Run the GC's orphan and foreground finalizers for an object being deleted."""
    if not self.gc_enabled or key not in storage.objects:
        return
    stored = storage.objects[key]
    meta = stored.obj["metadata"]
    finalizers = list(meta.get("finalizers") or [])
    uid = meta["uid"]
    deps = sorted(self.dependents.get(uid, set()))
    if "orphan" in finalizers:
        for dep_key, dkey in deps:
            dstorage = self.storages[dep_key]
            dep = dstorage.objects.get(dkey)
            if dep is None:
                continue
            result = copy.deepcopy(dep.obj)
            result["metadata"]["ownerReferences"] = [
                r for r in result["metadata"].get("ownerReferences") or [] if r.get("uid") != uid
            ] or None
            if result["metadata"]["ownerReferences"] is None:
                del result["metadata"]["ownerReferences"]
            self._replace(dstorage, dep, result)
        finalizers.remove("orphan")
    elif "foregroundDeletion" in finalizers:
        blocking = False
        for dep_key, dkey in deps:
            dstorage = self.storages[dep_key]
            dep = dstorage.objects.get(dkey)
            if dep is None:
                continue
            dmeta = dep.obj["metadata"]
            if not dmeta.get("deletionTimestamp"):
                with admission.as_cluster():
                    self.delete(
                        dstorage.rt,
                        dmeta.get("namespace", ""),
                        dmeta["name"],
                        DeleteOptions(propagation_policy="Background"),
                    )
            if dkey in dstorage.objects and any(
                r.get("uid") == uid and r.get("blockOwnerDeletion")
                for r in dmeta.get("ownerReferences") or []
            ):
                blocking = True
        if blocking:
            return
        finalizers.remove("foregroundDeletion")
    else:
        return
    if key not in storage.objects:
        return
    stored = storage.objects[key]
    result = copy.deepcopy(stored.obj)
    if finalizers:
        result["metadata"]["finalizers"] = finalizers
    else:
        result["metadata"].pop("finalizers", None)
    self._replace(storage, stored, result)
    self._after_write(storage, key)


def set_gc_enabled(self: Store, enabled: bool) -> None:
    """Pause or resume the garbage collector; resuming catches up on what it missed."""
    self.gc_enabled = enabled
    if not enabled:
        return
    for storage_key, storage in list(self.storages.items()):
        for key in list(storage.objects):
            if key in storage.objects:
                self._collect_if_orphaned(storage_key, key)
            if key in storage.objects and storage.objects[key].obj["metadata"].get(
                "deletionTimestamp"
            ):
                self._process_deleting(storage, key)


def _delete_namespace(self: Store, storage: Storage, current: Stored) -> dict[str, Any]:
    name = current.obj["metadata"]["name"]
    self._namespaces_held[name] = time.monotonic() + NAMESPACE_FINISH_SECONDS
    if not current.obj["metadata"].get("deletionTimestamp"):
        result = copy.deepcopy(current.obj)
        result["metadata"]["deletionTimestamp"] = self._now()
        result["metadata"]["deletionGracePeriodSeconds"] = 0
        result.setdefault("status", {})["phase"] = "Terminating"
        self._replace(storage, current, result)
    for other in self.storages.values():
        if not other.rt.namespaced:
            continue
        for key in [k for k in other.objects if k[0] == name]:
            stored = other.objects.get(key)
            if stored is None or stored.obj["metadata"].get("deletionTimestamp"):
                continue
            with admission.as_cluster():  # the namespace controller's
                self.delete(other.rt, name, key[1], DeleteOptions())
    return storage.objects[("", name)].obj


def _finish_held_namespaces(self: Store) -> None:
    """The namespace controller's last step: remove the emptied namespaces that are due."""
    now = time.monotonic()
    due = [name for name, at in self._namespaces_held.items() if at <= now]
    storage = self.storages["namespaces."]
    for name in due:
        del self._namespaces_held[name]
        self._finish_namespace(storage, name)


def _finish_namespace(self: Store, storage: Storage, name: str) -> None:
    if name in self._namespaces_held:
        return
    if any(k[0] == name for s in self.storages.values() if s.rt.namespaced for k in s.objects):
        return
    if ("", name) in storage.objects:
        self._remove(storage, ("", name))


def _schedule_expiry(self: Store, storage_key: str, key: Key, rv: int) -> None:
    expires = self.clock.now().timestamp() + self.event_ttl_seconds
    heapq.heappush(self._event_expiry, (expires, storage_key, key, rv))


def expire_events(self: Store) -> None:
    """Drop Events older than --event-ttl (1 h by default), as etcd's lease expiry does.

    Called first by every operation, it also finishes the namespaces deleted before it.
    """
    if self._namespaces_held:
        self._finish_held_namespaces()
    if not self._event_expiry:
        return
    now = self.clock.now().timestamp()
    while self._event_expiry and self._event_expiry[0][0] <= now:
        _, storage_key, key, rv = heapq.heappop(self._event_expiry)
        storage = self.storages[storage_key]
        stored = storage.objects.get(key)
        if stored is not None and stored.rv == rv:
            self._remove(storage, key)
