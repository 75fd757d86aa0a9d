"""Writes: create (with generateName, namespace admission, cluster IPs), update, patch."""

from __future__ import annotations

import copy
import random
import uuid
from typing import TYPE_CHECKING, Any

from . import admission, kinds
from .errors import (
    STALE_OBJECT,
    already_exists,
    bad_request,
    conflict,
    invalid,
)
from .resources import ResourceType
from .selectors import validate_labels
from .storedata import (
    GENERATE_ALPHABET,
    Key,
    Storage,
    Stored,
)
from .watch import WatchEvent

if TYPE_CHECKING:
    from .store import Store


class Writes:
    """Create, update, patch and the server's own writes, with what each fills in and checks.

    It holds the store whose objects it writes (their versions, indexes, watch window) and
    the collaborators each write informs (the garbage collector, namespaces, Event expiry).
    """

    def __init__(self, store: Store) -> None:
        self.store = store
        self._next_cluster_ip = 10  # the service CIDR's next address

    def create(
        self, rt: ResourceType, namespace: str, body: dict[str, Any], *, dry_run: bool = False
    ) -> dict[str, Any]:
        self.store.catch_up()
        if not isinstance(body, dict):
            raise bad_request("the body of the request must be a JSON object")
        obj, meta, storage_rt = self._typed(rt, namespace, body)
        storage = self.store.storage(rt)
        name = meta.get("name") or self._generated_name(rt, namespace, meta)
        name = str(name)
        uid = str(uuid.uuid4())
        for stale in (
            "resourceVersion",
            "deletionTimestamp",
            "deletionGracePeriodSeconds",
            "selfLink",
            "managedFields",
        ):
            meta.pop(stale, None)
        meta["uid"] = uid
        meta["creationTimestamp"] = self.store.now_text()
        if storage_rt.has_status:
            # PrepareForCreate: a client cannot create an object with a status of its choosing.
            obj.pop("status", None)
        if "spec" in obj or rt.plural == "jobs":
            meta["generation"] = 1
        kinds.apply_defaults(rt if not rt.storage else storage_rt, obj, uid)
        causes = kinds.validate_name(storage_rt, name)
        causes += validate_labels(meta.get("labels"), "metadata.labels")
        causes += kinds.validate_create(storage_rt, obj)
        if causes:
            raise invalid(storage_rt.kind, storage_rt.group, name, causes)
        admission.check_policy(storage_rt, obj)
        key = self.store.key(rt, namespace, name)
        if key in storage.objects:
            raise already_exists(storage_rt.plural, storage_rt.group, name)
        admission.admit(
            self.store, admission.Request("CREATE", rt, namespace, name, "", obj, None, dry_run)
        )
        if rt.plural == "services":
            self._allocate_cluster_ip(obj)
        if dry_run:
            return kinds.from_storage(rt, obj)
        meta["resourceVersion"] = str(self.store.bump())
        stored = Stored(obj)
        storage.objects[key] = stored
        self.store.index(rt.key, key, obj, None)
        self.store.watches.record(storage, WatchEvent(self.store.rv, "ADDED", obj, None))
        if storage_rt.plural == "events":
            self.store.events.schedule(rt.key, key, self.store.rv)
        self.store.gc.collect_if_orphaned(rt.key, key)
        if storage_rt.plural == "namespaces":
            self._default_service_account(name)
        return kinds.from_storage(rt, obj)

    def _default_service_account(self, namespace: str) -> None:
        """The "default" ServiceAccount of a new namespace, as kube-controller-manager makes it.

        Pods run as it unless they name another; a TokenRequest needs it to exist.
        """
        accounts = self.store.registry.lookup("", "v1", "serviceaccounts")
        if accounts is not None:
            with admission.as_cluster():
                self.create(accounts, namespace, {"metadata": {"name": "default"}})
        # kube-controller-manager's root-ca-cert-publisher: the CA that pods trust the API server by.
        configmaps = self.store.registry.lookup("", "v1", "configmaps")
        if configmaps is not None and self.store.root_ca:
            with admission.as_cluster():
                self.create(
                    configmaps,
                    namespace,
                    {
                        "metadata": {"name": "kube-root-ca.crt"},
                        "data": {"ca.crt": self.store.root_ca},
                    },
                )

    def _typed(
        self, rt: ResourceType, namespace: str, body: dict[str, Any]
    ) -> tuple[dict[str, Any], dict[str, Any], ResourceType]:
        """The body as stored: its apiVersion, kind and namespace checked against the request's."""
        obj = kinds.to_storage(rt, copy.deepcopy(body))
        storage_rt = self.store.storage(rt).rt
        api_version = obj.get("apiVersion")
        if api_version and api_version != storage_rt.api_version:
            raise bad_request(
                f"the API version in the data ({api_version}) does not match the expected API "
                f"version ({storage_rt.api_version})"
            )
        if obj.get("kind") and obj["kind"] != storage_rt.kind:
            raise bad_request(
                f"the kind in the data ({obj['kind']}) does not match the expected kind "
                f"({storage_rt.kind})"
            )
        obj["apiVersion"] = storage_rt.api_version
        obj["kind"] = storage_rt.kind
        meta = obj.get("metadata")
        if not isinstance(meta, dict):
            meta = obj["metadata"] = {}
        if rt.namespaced:
            if meta.get("namespace") and meta["namespace"] != namespace:
                raise bad_request(
                    "the namespace of the provided object does not match the namespace sent on "
                    "the request"
                )
            meta["namespace"] = namespace
            self.store.namespaces.admit(
                rt, namespace, str(meta.get("name") or meta.get("generateName") or "")
            )
        else:
            meta.pop("namespace", None)
        return obj, meta, storage_rt

    def _generated_name(self, rt: ResourceType, namespace: str, meta: dict[str, Any]) -> str:
        """metadata.generateName plus five random characters (a free name, as the registry picks)."""
        base = meta.get("generateName")
        if not base:
            raise invalid(
                rt.kind,
                rt.group,
                "",
                [
                    (
                        "FieldValueRequired",
                        "metadata.name",
                        "Required value: name or generateName is required",
                    )
                ],
            )
        storage = self.store.storage(rt)
        name = ""
        for _ in range(8):
            name = str(base)[:58] + "".join(random.choices(GENERATE_ALPHABET, k=5))
            if self.store.key(rt, namespace, name) not in storage.objects:
                break
        meta["name"] = name
        return name

    def _allocate_cluster_ip(self, obj: dict[str, Any]) -> None:
        spec = obj.setdefault("spec", {})
        if spec.get("clusterIP") in (None, ""):
            n = self._next_cluster_ip
            self._next_cluster_ip += 1
            spec["clusterIP"] = f"10.96.{n // 256}.{n % 256}"
        spec.setdefault("clusterIPs", [spec["clusterIP"]])

    def update(
        self,
        rt: ResourceType,
        namespace: str,
        name: str,
        body: dict[str, Any],
        *,
        subresource: str | None = None,
        dry_run: bool = False,
    ) -> dict[str, Any]:
        self.store.catch_up()
        if not isinstance(body, dict):
            raise bad_request("the body of the request must be a JSON object")
        current = self.store.require(rt, namespace, name)
        new = kinds.to_storage(rt, copy.deepcopy(body))
        meta = new.get("metadata")
        if not isinstance(meta, dict):
            meta = new["metadata"] = {}
        if meta.get("name") and meta["name"] != name:
            raise bad_request(
                f"the name of the object ({meta['name']}) does not match the name on the URL ({name})"
            )
        rv = meta.get("resourceVersion")
        if not rv:
            if not rt.builtin:
                raise invalid(
                    rt.kind,
                    rt.group,
                    name,
                    [
                        (
                            "FieldValueInvalid",
                            "metadata.resourceVersion",
                            "Invalid value: 0x0: must be specified for an update",
                        )
                    ],
                )
        elif str(rv) != current.obj["metadata"]["resourceVersion"]:
            raise conflict(rt.plural, rt.group, name, STALE_OBJECT)
        return self._write(rt, current, new, subresource, dry_run)

    def patch(
        self,
        rt: ResourceType,
        namespace: str,
        name: str,
        apply: Any,
        *,
        subresource: str | None = None,
        dry_run: bool = False,
    ) -> dict[str, Any]:
        """Apply ``apply`` (a function of the current object) and write the result."""
        self.store.catch_up()
        current = self.store.require(rt, namespace, name)
        patched = apply(kinds.from_storage(rt, current.obj))
        if not isinstance(patched, dict):
            raise bad_request("the patch did not produce an object")
        new = kinds.to_storage(rt, patched)
        meta = new.get("metadata")
        if not isinstance(meta, dict):
            meta = new["metadata"] = {}
        rv = meta.get("resourceVersion")
        if rv and str(rv) != current.obj["metadata"]["resourceVersion"]:
            raise conflict(rt.plural, rt.group, name, STALE_OBJECT)
        uid = meta.get("uid")
        if uid and uid != current.obj["metadata"]["uid"]:
            # A uid in a patch is a precondition, as in kube-apiserver's patcher.
            raise conflict(
                rt.plural,
                rt.group,
                name,
                f"Precondition failed: UID in precondition: {uid}, UID in object meta: {current.obj['metadata']['uid']}",
            )
        if meta.get("name") != name:
            raise bad_request(
                f"the name of the object ({meta.get('name')}) does not match the name on the URL ({name})"
            )
        return self._write(rt, current, new, subresource, dry_run)

    def force_write(
        self,
        rt: ResourceType,
        namespace: str,
        name: str,
        change: Any,
        *,
        subresource: str | None = None,
    ) -> dict[str, Any]:
        """Write a change the server makes itself, skipping a client update's rules.

        A binding sets spec.nodeName, which no client update may change.
        """
        del subresource
        storage = self.store.storage(rt)
        current = self.store.require(rt, namespace, name)
        result = change(copy.deepcopy(current.obj))
        self.replace(storage, current, result)
        return kinds.from_storage(
            rt, self.after_write(storage, self.store.key(rt, namespace, name))
        )

    def _write(
        self,
        rt: ResourceType,
        current: Stored,
        new: dict[str, Any],
        subresource: str | None,
        dry_run: bool,
    ) -> dict[str, Any]:
        storage = self.store.storage(rt)
        srt = storage.rt
        old = current.obj
        result = _merged(srt, old, new, subresource)
        meta = result.setdefault("metadata", {})
        old_meta = old["metadata"]
        for fixed in (
            "uid",
            "creationTimestamp",
            "namespace",
            "name",
            "deletionTimestamp",
            "deletionGracePeriodSeconds",
            "generation",
        ):
            if fixed in old_meta:
                meta[fixed] = old_meta[fixed]
            else:
                meta.pop(fixed, None)
        if not srt.namespaced:
            meta.pop("namespace", None)
        if old_meta.get("deletionTimestamp"):
            added = set(meta.get("finalizers") or []) - set(old_meta.get("finalizers") or [])
            if added:
                raise invalid(
                    srt.kind,
                    srt.group,
                    old_meta["name"],
                    [
                        (
                            "FieldValueForbidden",
                            "metadata.finalizers",
                            (
                                "Forbidden: no new finalizers can be added if the object is being deleted, "
                                f"found new finalizers {sorted(added)}"
                            ),
                        )
                    ],
                )
        causes = validate_labels(meta.get("labels"), "metadata.labels")
        causes += kinds.validate_update(srt, old, result)
        if causes:
            raise invalid(srt.kind, srt.group, old_meta["name"], causes)
        admission.check_policy(srt, result)
        admission.admit(
            self.store,
            admission.Request(
                "UPDATE",
                rt,
                old_meta.get("namespace", ""),
                old_meta["name"],
                subresource or "",
                result,
                old,
                dry_run,
            ),
        )
        if "generation" in old_meta:
            strip = ("metadata", "status")
            if {k: v for k, v in old.items() if k not in strip} != {
                k: v for k, v in result.items() if k not in strip
            }:
                meta["generation"] = int(old_meta["generation"]) + 1
        meta["resourceVersion"] = old_meta["resourceVersion"]
        if result == old:
            return kinds.from_storage(rt, old)  # a no-op write: no new resourceVersion, no event
        if dry_run:
            return kinds.from_storage(rt, result)
        self.replace(storage, current, result)
        return kinds.from_storage(
            rt, self.after_write(storage, (meta.get("namespace", ""), meta["name"]))
        )

    def replace(self, storage: Storage, current: Stored, result: dict[str, Any]) -> Stored:
        key = (result["metadata"].get("namespace", ""), result["metadata"]["name"])
        result["metadata"]["resourceVersion"] = str(self.store.bump())
        stored = Stored(result)
        storage.objects[key] = stored
        self.store.index(storage.rt.key, key, result, current.obj)
        self.store.watches.record(
            storage, WatchEvent(self.store.rv, "MODIFIED", result, current.obj)
        )
        if storage.rt.plural == "events":
            self.store.events.schedule(storage.rt.key, key, self.store.rv)
        return stored

    def after_write(self, storage: Storage, key: Key) -> dict[str, Any]:
        """Finish deletions that a write made possible (last finalizer removed)."""
        stored = storage.objects[key]
        meta = stored.obj["metadata"]
        if meta.get("deletionTimestamp") and not meta.get("finalizers"):
            graceful = (
                storage.rt.plural == "pods" and int(meta.get("deletionGracePeriodSeconds") or 0) > 0
            )
            if not graceful:
                return self.store.remove(storage, key)
        if meta.get("deletionTimestamp"):
            self.store.gc.process_deleting(storage, key)
        return storage.objects[key].obj if key in storage.objects else stored.obj


def _merged(
    srt: ResourceType, old: dict[str, Any], new: dict[str, Any], subresource: str | None
) -> dict[str, Any]:
    """What a write stores, before metadata is fixed.

    The status subresource writes only status; the main resource writes all but status (and a
    namespace's spec).
    """
    if subresource == "status":
        result = copy.deepcopy(old)
        if "status" in new:
            result["status"] = new["status"]
        else:
            result.pop("status", None)
    else:
        result = new
        result["apiVersion"] = srt.api_version
        result["kind"] = srt.kind
        if srt.has_status:
            if "status" in old:
                result["status"] = copy.deepcopy(old["status"])
            else:
                result.pop("status", None)
        if srt.plural == "namespaces":
            result["spec"] = copy.deepcopy(old.get("spec", {}))
        if srt.plural == "pods" and isinstance(result.get("spec"), dict):
            # Defaulting runs as every write is decoded, so a replace with the manifest the
            # pod was created from compares equal to the stored (defaulted) spec.
            kinds.default_pod_spec(result["spec"])
    return result
