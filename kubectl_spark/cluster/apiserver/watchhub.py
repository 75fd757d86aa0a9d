"""Every resource's recent changes and the watches that follow them.

kube-apiserver's watch cache (apiserver storage/cacher) keeps a window of recent events per
resource; a watch from a version inside it replays what came after, one from before it gets
410 "too old resource version", one from 0 (or with sendInitialEvents) starts with what exists.
"""

from __future__ import annotations

from collections.abc import Iterable

from . import kinds
from .errors import bad_request, expired
from .resources import ResourceType
from .selectors import FieldSelector, LabelSelector
from .storedata import Storage, selected
from .watch import Watcher, WatchEvent


class WatchHub:
    def __init__(self, history_size: int) -> None:
        self.history_size = history_size  # events kept per resource, as the watch cache's window

    def record(self, storage: Storage, event: WatchEvent) -> None:
        """A change: kept in the resource's window, offered to each of its watches."""
        storage.last_write_rv = event.rv
        storage.history.append(event)
        while len(storage.history) > self.history_size:
            dropped = storage.history.popleft()
            storage.compacted_rv = max(storage.compacted_rv, dropped.rv)
        for watcher in list(storage.watchers):
            watcher.offer(event)

    def watch(
        self,
        storage: Storage,
        rt: ResourceType,
        namespace: str,
        labels: LabelSelector,
        fields: FieldSelector,
        resource_version: str | None,
        current_rv: int,
        *,
        send_initial_events: bool = False,
        allow_bookmarks: bool = False,
    ) -> Watcher:
        getters = kinds.field_getters(storage.rt)
        watcher = Watcher(rt, namespace, labels, fields, getters, allow_bookmarks)
        if resource_version in (None, "", "0") or send_initial_events:
            for stored in sorted(storage.objects.values(), key=lambda s: s.rv):
                if selected(rt, stored.obj, namespace, labels, fields, getters):
                    watcher.push_initial(stored)
            if send_initial_events:
                watcher.push_initial_end(current_rv)
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

    def close(self, storages: Iterable[Storage]) -> None:
        """Every watch ended (the server stops)."""
        for storage in storages:
            for watcher in list(storage.watchers):
                watcher.close()
            storage.watchers.clear()

    def compact(self, storages: Iterable[Storage], rv: int) -> None:
        """Forget all watch history, as etcd compaction does: older watches then get 410."""
        for storage in storages:
            storage.history.clear()
            storage.compacted_rv = rv
