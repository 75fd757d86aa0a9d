"""The object store: kube-apiserver's registry and etcd, reduced to what clients can observe.

Everything runs on the server's event loop thread, so there are no locks: each operation is a
synchronous function that completes before the next request is looked at. Stored objects are
never mutated after they are stored (every write stores a fresh dict), which lets list
snapshots and watch history share them safely and lets their JSON be cached.
"""

from __future__ import annotations

import base64
import binascii
import copy
import heapq
import random
import time
import uuid
from collections import OrderedDict, deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import orjson

from kubectl_spark.knowledge.clock import Clock
from kubectl_spark.knowledge.times import rfc3339

from . import kinds
from .errors import (
    STALE_OBJECT,
    ApiError,
    already_exists,
    bad_request,
    conflict,
    expired,
    invalid,
    not_found,
)
from .resources import Registry, ResourceType
from .selectors import FieldSelector, LabelSelector, validate_labels
from .watch import Watcher, WatchEvent

Key = tuple[str, str]  # (namespace, name); namespace is "" for cluster-scoped objects
GENERATE_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
CONTINUE_TOO_OLD = (
    "The provided continue parameter is too old to display a consistent list result. You can "
    "start a new list without the continue parameter, or use the continue token in this response "
    "to retrieve the remainder of the results. Continuing with the provided token results in an "
    "inconsistent list - objects that were created, modified, or deleted between the time the "
    "first chunk was returned and now may show up in the list."
)
SYSTEM_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")
# How long a deleted namespace stays Terminating after it is emptied (the namespace controller's
# pass; a real one takes a fraction of a second to a few).
NAMESPACE_FINISH_SECONDS = 1.0


def without_type_meta(obj: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in obj.items() if k not in ("apiVersion", "kind")}


@dataclass
class Stored:
    obj: dict[str, Any]
    _raw: bytes | None = None
    _list_raw: bytes | None = None

    @property
    def raw(self) -> bytes:
        if self._raw is None:
            self._raw = orjson.dumps(self.obj)
        return self._raw

    @property
    def list_raw(self) -> bytes:
        """As a built-in list's item, without apiVersion and kind.

        kube-apiserver encodes a typed list's items without their TypeMeta; custom resources
        keep theirs.
        """
        if self._list_raw is None:
            self._list_raw = orjson.dumps(without_type_meta(self.obj))
        return self._list_raw

    @property
    def rv(self) -> int:
        return int(self.obj["metadata"]["resourceVersion"])


@dataclass
class Storage:
    """All objects of one storage key (e.g. every core Event, whichever API version reads it)."""

    rt: ResourceType
    objects: dict[Key, Stored] = field(default_factory=dict)
    history: deque[WatchEvent] = field(default_factory=deque)
    compacted_rv: int = 0
    last_write_rv: int = 0
    watchers: set[Watcher] = field(default_factory=set)


@dataclass
class Snapshot:
    rv: int
    storage_key: str
    items: list[Stored]
    created: float


@dataclass
class ListResult:
    items: list[Stored | dict[str, Any]]
    rv: int
    continue_token: str
    remaining: int | None


@dataclass
class DeleteOptions:
    grace_period_seconds: int | None = None
    propagation_policy: str | None = None
    orphan_dependents: bool | None = None
    precondition_uid: str | None = None
    precondition_rv: str | None = None
    dry_run: bool = False

    @classmethod
    def from_body(cls, body: dict[str, Any] | None, query: dict[str, str]) -> DeleteOptions:
        body = body or {}
        pre = body.get("preconditions") or {}
        grace = body.get("gracePeriodSeconds", query.get("gracePeriodSeconds"))
        orphan = body.get("orphanDependents", query.get("orphanDependents"))
        dry = body.get("dryRun") or query.get("dryRun")
        try:
            grace_int = None if grace is None else int(grace)
        except (TypeError, ValueError) as exc:
            raise bad_request(f"invalid gracePeriodSeconds: {grace!r}") from exc
        return cls(
            grace_period_seconds=grace_int,
            propagation_policy=body.get("propagationPolicy") or query.get("propagationPolicy"),
            orphan_dependents=None if orphan is None else str(orphan).lower() not in ("0", "false"),
            precondition_uid=pre.get("uid"),
            precondition_rv=pre.get("resourceVersion"),
            dry_run=bool(dry) and (dry == "All" or (isinstance(dry, list) and "All" in dry)),
        )


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
    def create(
        self, rt: ResourceType, namespace: str, body: dict[str, Any], *, dry_run: bool = False
    ) -> dict[str, Any]:
        self.expire_events()
        if not isinstance(body, dict):
            raise bad_request("the body of the request must be a JSON object")
        obj = kinds.to_storage(rt, copy.deepcopy(body))
        storage_rt = self.storage(rt).rt
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
            self._admit_namespace(
                rt, namespace, str(meta.get("name") or meta.get("generateName") or "")
            )
        else:
            meta.pop("namespace", None)
        storage = self.storage(rt)
        name = meta.get("name")
        if not name:
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
            for _ in range(8):
                name = str(base)[:58] + "".join(random.choices(GENERATE_ALPHABET, k=5))
                if self._key(rt, namespace, name) not in storage.objects:
                    break
            meta["name"] = name
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
        meta["creationTimestamp"] = self._now()
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
        key = self._key(rt, namespace, name)
        if key in storage.objects:
            raise already_exists(storage_rt.plural, storage_rt.group, name)
        if rt.plural == "services":
            self._allocate_cluster_ip(obj)
        if dry_run:
            return kinds.from_storage(rt, obj)
        meta["resourceVersion"] = str(self._bump())
        stored = Stored(obj)
        storage.objects[key] = stored
        self._index(rt.key, key, obj, None)
        self._record(storage, WatchEvent(self.rv, "ADDED", obj, None))
        if storage_rt.plural == "events":
            self._schedule_expiry(rt.key, key, self.rv)
        self._collect_if_orphaned(rt.key, key)
        return kinds.from_storage(rt, obj)

    def _admit_namespace(self, rt: ResourceType, namespace: str, name: str) -> None:
        """The NamespaceLifecycle admission plugin."""
        ns_rt = self.registry.lookup("", "v1", "namespaces")
        assert ns_rt is not None
        ns = self.storage(ns_rt).objects.get(("", namespace))
        if ns is None:
            raise not_found("namespaces", "", namespace)
        if ns.obj["metadata"].get("deletionTimestamp"):
            err = ApiError(
                403,
                "Forbidden",
                f'{rt.plural if not rt.group else rt.plural + "." + rt.group} "{name}" is forbidden: '
                f"unable to create new content in namespace {namespace} because it is being terminated",
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

    def _allocate_cluster_ip(self, obj: dict[str, Any]) -> None:
        spec = obj.setdefault("spec", {})
        if spec.get("clusterIP") in (None, ""):
            n = self._next_cluster_ip
            self._next_cluster_ip += 1
            spec["clusterIP"] = f"10.96.{n // 256}.{n % 256}"
        spec.setdefault("clusterIPs", [spec["clusterIP"]])

    # --------------------------------------------------------------------------------- read
    def get(self, rt: ResourceType, namespace: str, name: str) -> dict[str, Any]:
        self.expire_events()
        return kinds.from_storage(rt, self._require(rt, namespace, name).obj)

    def get_stored(self, rt: ResourceType, namespace: str, name: str) -> Stored:
        self.expire_events()
        return self._require(rt, namespace, name)

    @staticmethod
    def _selected(
        rt: ResourceType,
        obj: dict[str, Any],
        namespace: str,
        labels: LabelSelector,
        fields: FieldSelector,
        getters: dict[str, Any],
    ) -> bool:
        meta = obj["metadata"]
        if rt.namespaced and namespace and meta.get("namespace") != namespace:
            return False
        if not labels.empty and not labels.matches(meta.get("labels")):
            return False
        return fields.empty or fields.matches(obj, getters)

    def _matching(
        self,
        rt: ResourceType,
        items: Iterable[Stored],
        namespace: str,
        labels: LabelSelector,
        fields: FieldSelector,
    ) -> Iterator[Stored]:
        getters = kinds.field_getters(self.storage(rt).rt)
        for stored in items:
            if self._selected(rt, stored.obj, namespace, labels, fields, getters):
                yield stored

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
        self.expire_events()
        storage = self.storage(rt)
        if continue_token:
            if resource_version not in (None, "", "0"):
                raise bad_request("specifying resource version is not allowed when using continue")
            snapshot, start = self._resume(continue_token, storage)
        else:
            self._check_list_rv(storage, resource_version, resource_version_match, limit)
            items = sorted(
                storage.objects.values(),
                key=lambda s: (s.obj["metadata"].get("namespace", ""), s.obj["metadata"]["name"]),
            )
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
            if not self._selected(rt, stored.obj, namespace, labels, fields, getters):
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
            token = self._remember(snapshot, index)
            if labels.empty and fields.empty and not namespace:
                remaining = total - index
        return ListResult(out, snapshot.rv, token, remaining)

    def _check_list_rv(
        self, storage: Storage, rv: str | None, match: str | None, limit: int | None
    ) -> None:
        if match and not rv:
            raise invalid(
                "ListOptions",
                "meta.k8s.io",
                "",
                [
                    (
                        "FieldValueForbidden",
                        "resourceVersionMatch",
                        "Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided",
                    )
                ],
            )
        if match and match not in ("Exact", "NotOlderThan"):
            raise invalid(
                "ListOptions",
                "meta.k8s.io",
                "",
                [
                    (
                        "FieldValueNotSupported",
                        "resourceVersionMatch",
                        f'Unsupported value: "{match}": supported values: "Exact", "NotOlderThan"',
                    )
                ],
            )
        if not rv or rv == "0":
            if match == "Exact":
                raise invalid(
                    "ListOptions",
                    "meta.k8s.io",
                    "",
                    [
                        (
                            "FieldValueForbidden",
                            "resourceVersionMatch",
                            'Forbidden: resourceVersionMatch "exact" is forbidden for resourceVersion "0"',
                        )
                    ],
                )
            return
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
        exact = match == "Exact" or (match is None and limit)
        if exact and wanted < storage.last_write_rv:
            # Only the current state is kept; it equals the state at `wanted` only if nothing
            # of this resource changed since.
            raise expired("The resourceVersion for the provided list is too old.")

    def _remember(self, snapshot: Snapshot, index: int) -> str:
        snap_id = uuid.uuid4().hex[:16]
        self.snapshots[snap_id] = snapshot
        self._prune_snapshots()
        last = snapshot.items[index - 1].obj["metadata"]
        start = f"{last.get('namespace', '')}/{last['name']}\x00"
        doc = {"v": "meta.k8s.io/v1", "rv": snapshot.rv, "start": start, "id": snap_id, "i": index}
        return base64.urlsafe_b64encode(orjson.dumps(doc)).decode().rstrip("=")

    def _prune_snapshots(self) -> None:
        now = time.monotonic()
        while self.snapshots:
            oldest_id, oldest = next(iter(self.snapshots.items()))
            if (
                len(self.snapshots) > self.max_snapshots
                or now - oldest.created > self.snapshot_ttl_seconds
            ):
                del self.snapshots[oldest_id]
            else:
                break

    def expire_continue_tokens(self) -> None:
        self.snapshots.clear()

    def _resume(self, token: str, storage: Storage) -> tuple[Snapshot, int]:
        try:
            doc = orjson.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
            snap_id, index, rv = str(doc["id"]), int(doc["i"]), int(doc["rv"])
        except (ValueError, KeyError, TypeError, binascii.Error, orjson.JSONDecodeError) as exc:
            raise bad_request(f"invalid continue token: continue key is not valid: {exc}") from exc
        self._prune_snapshots()
        snapshot = self.snapshots.get(snap_id)
        if snapshot is None or snapshot.storage_key != storage.rt.key:
            # Like kube-apiserver: 410 Expired, with a token to continue inconsistently.
            items = sorted(
                storage.objects.values(),
                key=lambda s: (s.obj["metadata"].get("namespace", ""), s.obj["metadata"]["name"]),
            )
            fresh = Snapshot(self.rv, storage.rt.key, items, time.monotonic())
            start_key = str(doc.get("start", "")).rstrip("\x00")
            position = sum(
                1
                for s in items
                if f"{s.obj['metadata'].get('namespace', '')}/{s.obj['metadata']['name']}"
                <= start_key
            )
            err = expired(CONTINUE_TOO_OLD)
            err.continue_token = (
                self._remember(fresh, position) if 0 < position < len(items) else ""
            )
            raise err
        del rv
        return snapshot, index

    # ------------------------------------------------------------------------------- watch
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
        self.expire_events()
        storage = self.storage(rt)
        watcher = Watcher(
            rt, namespace, labels, fields, kinds.field_getters(storage.rt), allow_bookmarks
        )
        if resource_version in (None, "", "0") or send_initial_events:
            for stored in self._matching(
                rt, sorted(storage.objects.values(), key=lambda s: s.rv), namespace, labels, fields
            ):
                watcher.push_initial(stored)
            if send_initial_events:
                watcher.push_initial_end(self.rv)
        else:
            try:
                wanted = int(str(resource_version))
            except ValueError as exc:
                raise bad_request(f'invalid resource version "{resource_version}"') from exc
            if wanted < storage.compacted_rv:
                watcher.push_error(
                    expired(f"too old resource version: {wanted} ({storage.compacted_rv})")
                )
                return watcher
            for event in storage.history:
                if event.rv > wanted:
                    watcher.offer(event)
        storage.watchers.add(watcher)
        return watcher

    def unwatch(self, watcher: Watcher) -> None:
        self.storage(watcher.rt).watchers.discard(watcher)

    def close_watches(self) -> None:
        for storage in self.storages.values():
            for watcher in list(storage.watchers):
                watcher.close()
            storage.watchers.clear()

    # ------------------------------------------------------------------------------ update
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
        self.expire_events()
        if not isinstance(body, dict):
            raise bad_request("the body of the request must be a JSON object")
        current = self._require(rt, namespace, name)
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
        self.expire_events()
        current = self._require(rt, namespace, name)
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
        storage = self.storage(rt)
        current = self._require(rt, namespace, name)
        result = change(copy.deepcopy(current.obj))
        self._replace(storage, current, result)
        return kinds.from_storage(rt, self._after_write(storage, self._key(rt, namespace, name)))

    def _write(
        self,
        rt: ResourceType,
        current: Stored,
        new: dict[str, Any],
        subresource: str | None,
        dry_run: bool,
    ) -> dict[str, Any]:
        storage = self.storage(rt)
        srt = storage.rt
        old = current.obj
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
        self._replace(storage, current, result)
        return kinds.from_storage(
            rt, self._after_write(storage, (meta.get("namespace", ""), meta["name"]))
        )

    def _replace(self, storage: Storage, current: Stored, result: dict[str, Any]) -> Stored:
        key = (result["metadata"].get("namespace", ""), result["metadata"]["name"])
        result["metadata"]["resourceVersion"] = str(self._bump())
        stored = Stored(result)
        storage.objects[key] = stored
        self._index(storage.rt.key, key, result, current.obj)
        self._record(storage, WatchEvent(self.rv, "MODIFIED", result, current.obj))
        if storage.rt.plural == "events":
            self._schedule_expiry(storage.rt.key, key, self.rv)
        return stored

    def _after_write(self, storage: Storage, key: Key) -> dict[str, Any]:
        """Finish deletions that a write made possible (last finalizer removed)."""
        stored = storage.objects[key]
        meta = stored.obj["metadata"]
        if meta.get("deletionTimestamp") and not meta.get("finalizers"):
            graceful = (
                storage.rt.plural == "pods" and int(meta.get("deletionGracePeriodSeconds") or 0) > 0
            )
            if not graceful:
                return self._remove(storage, key)
        if meta.get("deletionTimestamp"):
            self._process_deleting(storage, key)
        return storage.objects[key].obj if key in storage.objects else stored.obj

    # ------------------------------------------------------------------------------ delete
    def delete(
        self, rt: ResourceType, namespace: str, name: str, opts: DeleteOptions
    ) -> tuple[dict[str, Any], bool]:
        """Delete; return (the object in its last or pending state, whether it is gone)."""
        self.expire_events()
        storage = self.storage(rt)
        current = self._require(rt, namespace, name)
        key = self._key(rt, namespace, name)
        meta = current.obj["metadata"]
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
        policy = policy or kinds.default_propagation(storage.rt)
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
        grace = kinds.grace_period_for_delete(storage.rt, current.obj, opts.grace_period_seconds)
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

    def delete_collection(
        self,
        rt: ResourceType,
        namespace: str,
        labels: LabelSelector,
        fields: FieldSelector,
        opts: DeleteOptions,
    ) -> list[dict[str, Any]]:
        storage = self.storage(rt)
        victims = [
            s.obj
            for s in self._matching(rt, list(storage.objects.values()), namespace, labels, fields)
        ]
        out = []
        for obj in victims:
            meta = obj["metadata"]
            if self.lookup(rt, meta.get("namespace", ""), meta["name"]) is None:
                continue
            out.append(self.delete(rt, meta.get("namespace", ""), meta["name"], opts)[0])
        return out

    def _remove(self, storage: Storage, key: Key) -> dict[str, Any]:
        current = storage.objects.pop(key)
        final = copy.deepcopy(current.obj)
        final["metadata"]["resourceVersion"] = str(self._bump())
        self._unindex(storage.rt.key, key, current.obj)
        self._record(storage, WatchEvent(self.rv, "DELETED", final, current.obj))
        self._on_removed(storage, final)
        return final

    # ---------------------------------------------------------------- garbage collection
    def _owner_alive(self, ref: dict[str, Any]) -> bool:
        if self.by_uid_get(str(ref.get("uid"))) is not None:
            return True
        group = str(ref.get("apiVersion", "")).rpartition("/")[0]
        # An owner of a kind this server does not serve cannot be checked: leave its dependents.
        return self.registry.by_kind_any_version(str(ref.get("kind")), group) is None

    def _collect_if_orphaned(self, storage_key: str, key: Key) -> None:
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
        self.delete(
            storage.rt,
            meta.get("namespace", ""),
            meta["name"],
            DeleteOptions(propagation_policy="Background"),
        )

    def _on_removed(self, storage: Storage, final: dict[str, Any]) -> None:
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

    def _process_deleting(self, storage: Storage, key: Key) -> None:
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
                    r
                    for r in result["metadata"].get("ownerReferences") or []
                    if r.get("uid") != uid
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

    def set_gc_enabled(self, enabled: bool) -> None:
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

    # --------------------------------------------------------------------------- namespaces
    def _delete_namespace(self, storage: Storage, current: Stored) -> dict[str, Any]:
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
                self.delete(other.rt, name, key[1], DeleteOptions())
        return storage.objects[("", name)].obj

    def _finish_held_namespaces(self) -> None:
        """The namespace controller's last step: remove the emptied namespaces that are due."""
        now = time.monotonic()
        due = [name for name, at in self._namespaces_held.items() if at <= now]
        storage = self.storages["namespaces."]
        for name in due:
            del self._namespaces_held[name]
            self._finish_namespace(storage, name)

    def _finish_namespace(self, storage: Storage, name: str) -> None:
        if name in self._namespaces_held:
            return
        if any(k[0] == name for s in self.storages.values() if s.rt.namespaced for k in s.objects):
            return
        if ("", name) in storage.objects:
            self._remove(storage, ("", name))

    # ------------------------------------------------------------------------------ events
    def _schedule_expiry(self, storage_key: str, key: Key, rv: int) -> None:
        expires = self.clock.now().timestamp() + self.event_ttl_seconds
        heapq.heappush(self._event_expiry, (expires, storage_key, key, rv))

    def expire_events(self) -> None:
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
