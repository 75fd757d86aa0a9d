"""Reads: get, list (with continue tokens and resourceVersion rules) and watch, as kube-apiserver answers them."""

from __future__ import annotations

import base64
import binascii
import time
import uuid
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

import orjson

from . import kinds
from .errors import (
    ApiError,
    bad_request,
    expired,
    invalid,
)
from .resources import ResourceType
from .selectors import FieldSelector, LabelSelector
from .storedata import (
    CONTINUE_TOO_OLD,
    ListResult,
    Snapshot,
    Storage,
    Stored,
)
from .watch import Watcher

if TYPE_CHECKING:
    from .store import Store


def get(self: Store, rt: ResourceType, namespace: str, name: str) -> dict[str, Any]:
    self.expire_events()
    return kinds.from_storage(rt, self._require(rt, namespace, name).obj)


def get_stored(self: Store, rt: ResourceType, namespace: str, name: str) -> Stored:
    self.expire_events()
    return self._require(rt, namespace, name)


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
    self: Store,
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
    self: Store,
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
    self: Store, storage: Storage, rv: str | None, match: str | None, limit: int | None
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
    wanted = check_fresh(self, rv)
    exact = match == "Exact" or (match is None and limit)
    if exact and wanted < storage.last_write_rv:
        # Only the current state is kept; it equals the state at `wanted` only if nothing
        # of this resource changed since.
        raise expired("The resourceVersion for the provided list is too old.")


def check_fresh(self: Store, rv: str) -> int:
    """A read at resourceVersion ``rv`` (not older than it): the store must have reached it.

    kube-apiserver waits up to 3 s for its watch cache to get there, then answers 504 "Too large
    resource version" (apiserver storage/cacher/watch_cache.go ``waitUntilFreshAndBlock``), for a
    list and a get alike; a watch from such a version is accepted (it just sees nothing older).
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


def _remember(self: Store, snapshot: Snapshot, index: int) -> str:
    snap_id = uuid.uuid4().hex[:16]
    self.snapshots[snap_id] = snapshot
    self._prune_snapshots()
    last = snapshot.items[index - 1].obj["metadata"]
    start = f"{last.get('namespace', '')}/{last['name']}\x00"
    doc = {"v": "meta.k8s.io/v1", "rv": snapshot.rv, "start": start, "id": snap_id, "i": index}
    return base64.urlsafe_b64encode(orjson.dumps(doc)).decode().rstrip("=")


def _prune_snapshots(self: Store) -> None:
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


def expire_continue_tokens(self: Store) -> None:
    self.snapshots.clear()


def _resume(self: Store, token: str, storage: Storage) -> tuple[Snapshot, int]:
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
            if f"{s.obj['metadata'].get('namespace', '')}/{s.obj['metadata']['name']}" <= start_key
        )
        err = expired(CONTINUE_TOO_OLD)
        err.continue_token = self._remember(fresh, position) if 0 < position < len(items) else ""
        raise err
    del rv
    return snapshot, index


def watch(
    self: Store,
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


def unwatch(self: Store, watcher: Watcher) -> None:
    self.storage(watcher.rt).watchers.discard(watcher)


def close_watches(self: Store) -> None:
    for storage in self.storages.values():
        for watcher in list(storage.watchers):
            watcher.close()
        storage.watchers.clear()
