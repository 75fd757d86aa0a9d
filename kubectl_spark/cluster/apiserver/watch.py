"""Watch streams: what each watcher is sent, filtered the way kube-apiserver's cacher filters.

A watcher with a selector sees an object *enter* its view as ADDED and *leave* it as DELETED
(with the old content and the new resourceVersion), exactly as ``cacheWatcher`` converts events,
so a client's cache stays correct when labels change.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson

from . import kinds
from .errors import ApiError
from .resources import ResourceType
from .selectors import FieldGetter, FieldSelector, LabelSelector


@dataclass
class WatchEvent:
    rv: int
    type: str  # ADDED, MODIFIED or DELETED
    obj: dict[str, Any]
    old: dict[str, Any] | None
    _raw: bytes | None = field(default=None, repr=False)

    @property
    def raw(self) -> bytes:
        if self._raw is None:
            self._raw = orjson.dumps(self.obj)
        return self._raw


def _line(event_type: str, raw_object: bytes) -> bytes:
    return b'{"type":"' + event_type.encode() + b'","object":' + raw_object + b"}\n"


class Watcher:
    """One watch request's queue of newline-terminated JSON event lines (None ends the stream)."""

    def __init__(
        self,
        rt: ResourceType,
        namespace: str,
        labels: LabelSelector,
        fields: FieldSelector,
        getters: Mapping[str, FieldGetter],
        allow_bookmarks: bool,
    ) -> None:
        self.rt = rt
        self.namespace = namespace if rt.namespaced else ""
        self.labels = labels
        self.fields = fields
        self.getters = getters
        self.allow_bookmarks = allow_bookmarks
        self.queue: asyncio.Queue[bytes | None] = asyncio.Queue()
        self.closed = False
        self._convert = bool(rt.storage)

    def _matches(self, obj: Mapping[str, Any]) -> bool:
        meta = obj.get("metadata") or {}
        if self.namespace and meta.get("namespace") != self.namespace:
            return False
        if not self.labels.empty and not self.labels.matches(meta.get("labels")):
            return False
        return self.fields.empty or self.fields.matches(obj, self.getters)

    def _emit(self, event_type: str, obj: dict[str, Any], raw: bytes | None = None) -> None:
        if self.closed:
            return
        if self._convert:
            raw = orjson.dumps(kinds.from_storage(self.rt, obj))
        elif raw is None:
            raw = orjson.dumps(obj)
        self.queue.put_nowait(_line(event_type, raw))

    def offer(self, event: WatchEvent) -> None:
        if event.type == "DELETED":
            if self._matches(event.obj):
                self._emit("DELETED", event.obj, event.raw)
            return
        new_match = self._matches(event.obj)
        old_match = event.old is not None and self._matches(event.old)
        if event.type == "ADDED" or (new_match and not old_match):
            if new_match:
                self._emit("ADDED", event.obj, event.raw)
        elif new_match:
            self._emit("MODIFIED", event.obj, event.raw)
        elif old_match and event.old is not None:
            leaving = dict(event.old)
            leaving["metadata"] = {**event.old["metadata"], "resourceVersion": str(event.rv)}
            self._emit("DELETED", leaving)

    def push_initial(self, stored: Any) -> None:
        self._emit("ADDED", stored.obj, stored.raw)

    def bookmark_line(self, rv: int, *, initial_events_end: bool = False) -> bytes:
        meta: dict[str, Any] = {"resourceVersion": str(rv)}
        if initial_events_end:
            meta["annotations"] = {"k8s.io/initial-events-end": "true"}
        obj = {"kind": self.rt.kind, "apiVersion": self.rt.api_version, "metadata": meta}
        return _line("BOOKMARK", orjson.dumps(obj))

    def push_initial_end(self, rv: int) -> None:
        self.queue.put_nowait(self.bookmark_line(rv, initial_events_end=True))

    def push_error(self, error: ApiError) -> None:
        """200 + one ERROR event, then the end: kube-apiserver's answer to a too-old RV."""
        self.queue.put_nowait(_line("ERROR", orjson.dumps(error.status())))
        self.close()

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self.queue.put_nowait(None)
