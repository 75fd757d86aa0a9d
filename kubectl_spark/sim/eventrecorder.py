"""Kubernetes Events, written the way components write them (repeated events bump a count)."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

from kubectl_spark.knowledge.clock import Clock
from kubectl_spark.knowledge.times import rfc3339

from .client import Client, SimApiError, events


class EventRecorder:
    """client-go's record.EventRecorder, as the simulated components use it."""

    def __init__(self, client: Client, clock: Clock) -> None:
        self.client = client
        self.clock = clock
        self._seen: dict[tuple[str, str, str, str], tuple[str, int]] = {}

    def event(
        self,
        obj: Mapping[str, Any],
        reason: str,
        message: str,
        *,
        type_: str = "Normal",
        component: str = "kubelet",
        host: str = "",
    ) -> None:
        meta = obj["metadata"]
        namespace = meta.get("namespace") or "default"
        key = (meta["uid"], reason, message, component)
        now = rfc3339(self.clock.now())
        seen = self._seen.get(key)
        if seen is not None:
            name, count = seen
            try:
                self.client.patch(
                    f"{events(namespace)}/{name}", {"count": count + 1, "lastTimestamp": now}
                )
            except SimApiError as err:
                if err.status != 404:
                    raise
            else:
                self._seen[key] = (name, count + 1)
                return
        digest = hashlib.sha256(repr((key, now)).encode()).hexdigest()[:16]
        name = f"{meta['name']}.{digest}"
        body = {
            "metadata": {"name": name, "namespace": namespace},
            "involvedObject": {
                "kind": obj["kind"],
                "namespace": meta.get("namespace", ""),
                "name": meta["name"],
                "uid": meta["uid"],
                "apiVersion": obj["apiVersion"],
                "resourceVersion": meta.get("resourceVersion", ""),
            },
            "reason": reason,
            "message": message,
            "type": type_,
            "source": {"component": component, **({"host": host} if host else {})},
            "firstTimestamp": now,
            "lastTimestamp": now,
            "count": 1,
            "reportingComponent": component,
            "reportingInstance": host,
        }
        try:
            self.client.create(events(namespace), body)
        except SimApiError as err:
            if err.status == 404:  # namespace gone
                return
            raise
        self._seen[key] = (name, 1)
