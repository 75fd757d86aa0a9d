"""Namespaces that terminate: the NamespaceLifecycle admission and the namespace controller.

kube-apiserver answers a namespace DELETE with the object Terminating, and the namespace
controller (pkg/controller/namespace) deletes its content, then removes it once emptied, a
moment later. Until then creating in it is Forbidden (NamespaceTerminating), as the admission
plugin (plugin/pkg/admission/namespace/lifecycle) says.
"""

from __future__ import annotations

import copy
import time
from typing import TYPE_CHECKING, Any

from . import admission
from .errors import ApiError, not_found
from .resources import ResourceType
from .storedata import NAMESPACE_FINISH_SECONDS, DeleteOptions, Storage, Stored

if TYPE_CHECKING:
    from .store import Store


class NamespaceLifecycle:
    def __init__(self, store: Store) -> None:
        self.store = store
        # Namespaces deleted and not yet removed, with the monotonic time they may go.
        self.held: dict[str, float] = {}

    def admit(self, rt: ResourceType, namespace: str, name: str) -> None:
        """A create in ``namespace``: refused when it is missing or terminating."""
        ns_rt = self.store.registry.lookup("", "v1", "namespaces")
        assert ns_rt is not None
        ns = self.store.storage(ns_rt).objects.get(("", namespace))
        if ns is None:
            raise not_found("namespaces", "", namespace)
        if ns.obj["metadata"].get("deletionTimestamp"):
            err = ApiError(
                403,
                "Forbidden",
                f'{rt.plural if not rt.group else rt.plural + "." + rt.group} "{name}" is '
                f"forbidden: unable to create new content in namespace {namespace} because it "
                "is being terminated",
                {
                    "name": name,
                    "kind": rt.plural,
                    "causes": [
                        {
                            "reason": "NamespaceTerminating",
                            "message": f"namespace {namespace} is being terminated",
                            "field": "metadata.namespace",
                        }
                    ],
                },
            )
            if rt.group:
                assert err.details is not None
                err.details["group"] = rt.group
            raise err

    def delete(self, storage: Storage, current: Stored) -> dict[str, Any]:
        """Mark the namespace Terminating and delete what it holds."""
        name = current.obj["metadata"]["name"]
        self.held[name] = time.monotonic() + NAMESPACE_FINISH_SECONDS
        if not current.obj["metadata"].get("deletionTimestamp"):
            result = copy.deepcopy(current.obj)
            result["metadata"]["deletionTimestamp"] = self.store.now_text()
            result["metadata"]["deletionGracePeriodSeconds"] = 0
            result.setdefault("status", {})["phase"] = "Terminating"
            self.store.writes.replace(storage, current, result)
        for other in self.store.storages.values():
            if not other.rt.namespaced:
                continue
            for key in [k for k in other.objects if k[0] == name]:
                stored = other.objects.get(key)
                if stored is None or stored.obj["metadata"].get("deletionTimestamp"):
                    continue
                with admission.as_cluster():  # the namespace controller's
                    self.store.delete(other.rt, name, key[1], DeleteOptions())
        return storage.objects[("", name)].obj

    def finish_held(self) -> None:
        """The namespace controller's last step: remove the emptied namespaces that are due."""
        if not self.held:
            return
        now = time.monotonic()
        due = [name for name, at in self.held.items() if at <= now]
        storage = self.store.storages["namespaces."]
        for name in due:
            del self.held[name]
            self.finish(storage, name)

    def on_removed(self, storage: Storage, final: dict[str, Any]) -> None:
        """An object of a terminating namespace left: the namespace may go now."""
        ns = final["metadata"].get("namespace")
        if ns and storage.rt.plural != "namespaces":
            ns_storage = self.store.storages["namespaces."]
            ns_obj = ns_storage.objects.get(("", ns))
            if ns_obj is not None and ns_obj.obj["metadata"].get("deletionTimestamp"):
                self.finish(ns_storage, ns)

    def finish(self, storage: Storage, name: str) -> None:
        if name in self.held:
            return
        if any(
            k[0] == name for s in self.store.storages.values() if s.rt.namespaced for k in s.objects
        ):
            return
        if ("", name) in storage.objects:
            self.store.remove(storage, ("", name))
