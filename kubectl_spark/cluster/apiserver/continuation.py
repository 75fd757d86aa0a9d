"""The list snapshots that continue tokens point into, kept a while, then given up.

kube-apiserver's continue token names the position of the last item and the resourceVersion
of the first page; it pages on from etcd at that revision until compaction, then answers 410
Expired with a token to go on inconsistently (apiserver storage/etcd3/store.go ``GetList``,
``ErrContinueTokenTooOld``). Here a page's snapshot is kept in memory instead, for
``ttl_seconds`` and at most ``limit`` of them, which a client observes the same way.
"""

from __future__ import annotations

import base64
import binascii
import time
import uuid
from collections import OrderedDict

import orjson

from .errors import bad_request, expired
from .storedata import CONTINUE_TOO_OLD, Snapshot, Storage, list_order


class Continuations:
    def __init__(self, ttl_seconds: float, limit: int) -> None:
        self.ttl_seconds = ttl_seconds
        self.limit = limit
        self.snapshots: OrderedDict[str, Snapshot] = OrderedDict()

    def remember(self, snapshot: Snapshot, index: int) -> str:
        """The continue token of ``snapshot`` from ``index`` on."""
        snap_id = uuid.uuid4().hex[:16]
        self.snapshots[snap_id] = snapshot
        self.prune()
        last = snapshot.items[index - 1].obj["metadata"]
        start = f"{last.get('namespace', '')}/{last['name']}\x00"
        doc = {"v": "meta.k8s.io/v1", "rv": snapshot.rv, "start": start, "id": snap_id, "i": index}
        return base64.urlsafe_b64encode(orjson.dumps(doc)).decode().rstrip("=")

    def prune(self) -> None:
        now = time.monotonic()
        while self.snapshots:
            oldest_id, oldest = next(iter(self.snapshots.items()))
            if len(self.snapshots) > self.limit or now - oldest.created > self.ttl_seconds:
                del self.snapshots[oldest_id]
            else:
                break

    def clear(self) -> None:
        """Every token too old at once, as after an etcd compaction."""
        self.snapshots.clear()

    def resume(self, token: str, storage: Storage, rv: int) -> tuple[Snapshot, int]:
        """The snapshot and position ``token`` names; 410 with a fresh token when it is gone.

        ``rv``: the store's resourceVersion now, which the fresh token's pages are read at.
        """
        try:
            doc = orjson.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
            snap_id, index = str(doc["id"]), int(doc["i"])
            int(doc["rv"])  # read only to refuse a token without one, as the registry does
        except (ValueError, KeyError, TypeError, binascii.Error, orjson.JSONDecodeError) as exc:
            raise bad_request(f"invalid continue token: continue key is not valid: {exc}") from exc
        self.prune()
        snapshot = self.snapshots.get(snap_id)
        if snapshot is not None and snapshot.storage_key == storage.rt.key:
            return snapshot, index
        # Like kube-apiserver: 410 Expired, with a token to continue inconsistently.
        items = sorted(storage.objects.values(), key=list_order)
        fresh = Snapshot(rv, storage.rt.key, items, time.monotonic())
        start_key = str(doc.get("start", "")).rstrip("\x00")
        position = sum(1 for s in items if "/".join(list_order(s)) <= start_key)
        err = expired(CONTINUE_TOO_OLD)
        err.continue_token = self.remember(fresh, position) if 0 < position < len(items) else ""
        raise err
