"""The garbage collector: dependents of a removed owner, and the orphan and foreground finalizers.

kube-controller-manager's garbage collector (pkg/controller/garbagecollector) watches every
resource and acts a moment after each change; here it acts at once, inside the change, which a
client observes as the same sequence of events. The simulator may pause it (``set_enabled``)
to play a cluster whose collector is behind.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any

from . import admission
from .storedata import DeleteOptions, Key, Storage

if TYPE_CHECKING:
    from .store import Store


class GarbageCollector:
    def __init__(self, store: Store) -> None:
        self.store = store  # the objects it reads and the deletes and writes it makes
        self.enabled = True

    def set_enabled(self, enabled: bool) -> None:
        """Pause or resume the collector; resuming catches up on what it missed."""
        self.enabled = enabled
        if not enabled:
            return
        for storage_key, storage in list(self.store.storages.items()):
            for key in list(storage.objects):
                if key in storage.objects:
                    self.collect_if_orphaned(storage_key, key)
                if key in storage.objects and storage.objects[key].obj["metadata"].get(
                    "deletionTimestamp"
                ):
                    self.process_deleting(storage, key)

    def owner_alive(self, ref: dict[str, Any]) -> bool:
        if self.store.by_uid_get(str(ref.get("uid"))) is not None:
            return True
        group = str(ref.get("apiVersion", "")).rpartition("/")[0]
        # An owner of a kind this server does not serve cannot be checked: leave its dependents.
        return self.store.registry.by_kind_any_version(str(ref.get("kind")), group) is None

    def collect_if_orphaned(self, storage_key: str, key: Key) -> None:
        """An object whose owners are all gone is deleted; the gone ones are dropped otherwise."""
        if not self.enabled:
            return
        storage = self.store.storages[storage_key]
        stored = storage.objects.get(key)
        if stored is None:
            return
        refs = stored.obj["metadata"].get("ownerReferences") or []
        if not refs:
            return
        alive = [r for r in refs if self.owner_alive(r)]
        if alive:
            if len(alive) != len(refs):
                result = copy.deepcopy(stored.obj)
                result["metadata"]["ownerReferences"] = alive
                self.store.writes.replace(storage, stored, result)
            return
        if stored.obj["metadata"].get("deletionTimestamp"):
            return
        meta = stored.obj["metadata"]
        with admission.as_cluster():  # the garbage collector's delete, not the requester's
            self.store.delete(
                storage.rt,
                meta.get("namespace", ""),
                meta["name"],
                DeleteOptions(propagation_policy="Background"),
            )

    def on_removed(self, final: dict[str, Any]) -> None:
        """An object left: its dependents are looked at, and owners waiting on it go on."""
        if not self.enabled:
            return
        meta = final["metadata"]
        for dep in sorted(self.store.dependents.pop(meta["uid"], set())):
            self.collect_if_orphaned(*dep)
        # Owners waiting in foreground deletion for this dependent.
        for ref in meta.get("ownerReferences") or []:
            found = self.store.by_uid_get(str(ref.get("uid")))
            if found is not None:
                owner_storage, owner = found
                okey = (
                    owner.obj["metadata"].get("namespace", ""),
                    owner.obj["metadata"]["name"],
                )
                self.process_deleting(owner_storage, okey)

    def process_deleting(self, storage: Storage, key: Key) -> None:
        """Run the orphan and foreground finalizers of an object being deleted."""
        if not self.enabled or key not in storage.objects:
            return
        stored = storage.objects[key]
        meta = stored.obj["metadata"]
        finalizers = list(meta.get("finalizers") or [])
        uid = meta["uid"]
        deps = sorted(self.store.dependents.get(uid, set()))
        if "orphan" in finalizers:
            self._orphan(uid, deps)
            finalizers.remove("orphan")
        elif "foregroundDeletion" in finalizers:
            if self._blocked_in_foreground(uid, deps):
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
        self.store.writes.replace(storage, stored, result)
        self.store.writes.after_write(storage, key)

    def _orphan(self, uid: str, deps: list[tuple[str, Key]]) -> None:
        """The dependents lose their reference to ``uid`` and stay."""
        for dep_key, dkey in deps:
            dstorage = self.store.storages[dep_key]
            dep = dstorage.objects.get(dkey)
            if dep is None:
                continue
            result = copy.deepcopy(dep.obj)
            result["metadata"]["ownerReferences"] = [
                r for r in result["metadata"].get("ownerReferences") or [] if r.get("uid") != uid
            ] or None
            if result["metadata"]["ownerReferences"] is None:
                del result["metadata"]["ownerReferences"]
            self.store.writes.replace(dstorage, dep, result)

    def _blocked_in_foreground(self, uid: str, deps: list[tuple[str, Key]]) -> bool:
        """The dependents are deleted; whether one that blocks its owner's deletion is left."""
        blocking = False
        for dep_key, dkey in deps:
            dstorage = self.store.storages[dep_key]
            dep = dstorage.objects.get(dkey)
            if dep is None:
                continue
            dmeta = dep.obj["metadata"]
            if not dmeta.get("deletionTimestamp"):
                with admission.as_cluster():
                    self.store.delete(
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
        return blocking
