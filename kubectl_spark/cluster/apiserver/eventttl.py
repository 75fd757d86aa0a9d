"""Events that expire: kube-apiserver's --event-ttl (1 h by default), an etcd lease per Event."""

from __future__ import annotations

import heapq
from typing import TYPE_CHECKING

from .storedata import Key

if TYPE_CHECKING:
    from .store import Store


class EventExpiry:
    def __init__(self, store: Store, ttl_seconds: float) -> None:
        self.store = store
        self.ttl_seconds = ttl_seconds
        self._due: list[tuple[float, str, Key, int]] = []  # (expiry, storage, key, version)

    def schedule(self, storage_key: str, key: Key, rv: int) -> None:
        """An Event written at ``rv``: it goes after the TTL unless written again meanwhile."""
        expires = self.store.clock.now().timestamp() + self.ttl_seconds
        heapq.heappush(self._due, (expires, storage_key, key, rv))

    def expire(self) -> None:
        """Remove the Events whose TTL has passed since they were last written."""
        now = self.store.clock.now().timestamp()
        while self._due and self._due[0][0] <= now:
            _, storage_key, key, rv = heapq.heappop(self._due)
            storage = self.store.storages[storage_key]
            stored = storage.objects.get(key)
            if stored is not None and stored.rv == rv:
                self.store.remove(storage, key)
