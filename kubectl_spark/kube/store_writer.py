"""Feeding the history store from a LiveCluster's changes (``kubectl spark record``, the TUI).

Pods are kept with their last state, deletions marked; Events are kept when they are about a
Spark pod or a SparkApplication (the only ones the core reads), and never marked deleted: their
expiry after an hour is exactly what the store outlives.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubectl_spark.core import raw
from kubectl_spark.core.incremental import Change
from kubectl_spark.core.inputs import Snapshot
from kubectl_spark.core.pod import Pod, as_json
from kubectl_spark.localstore import LocalStore, Scope


class StoreWriter:
    """A LiveCluster's changes into the local store (never the in-cluster recorder)."""

    def __init__(self, store: LocalStore, scope: Scope) -> None:
        self.store = store
        self.scope = scope
        self.pods_written = 0
        self.events_written = 0

    def write(
        self, changes: Mapping[str, Mapping[str, Change]] | None, snapshot: Snapshot
    ) -> list[tuple[Pod, bool]]:
        """One batch, as LiveCluster.take_changes() gave it (None: everything was listed).

        Returns the (pod, gone?) pairs it wrote, for the log keeper to read the same batch.
        """
        pods = changed_pods(changes, snapshot)
        if changes is None:
            events = list(snapshot.events)
        else:
            events = [c.obj for c in (changes.get("events") or {}).values()]
        if pods:
            written = [(as_json(p), gone) for p, gone in pods]  # the API's shape, kept as such
            self.pods_written += self.store.record(self.scope, "pods", written)
        wanted = _about_spark(snapshot, events)
        if wanted:
            self.events_written += self.store.record(
                self.scope, "events", [(e, False) for e in wanted]
            )
        return pods


def changed_pods(
    changes: Mapping[str, Mapping[str, Change]] | None, snapshot: Snapshot
) -> list[tuple[Pod, bool]]:
    """(pod, gone?) for each pod of a batch (every pod when everything was listed)."""
    if changes is None:
        return [(p, p.source == "watch") for p in snapshot.pods]
    return [
        (pod, c.deleted or pod.source == "watch")
        for c in (changes.get("pods") or {}).values()
        if isinstance(pod := c.obj, Pod)
    ]


def _about_spark(snapshot: Snapshot, events: list[Any]) -> list[dict[str, Any]]:
    if not events:
        return []
    uids = {p.metadata.uid for p in snapshot.pods}
    names = {(p.metadata.namespace, p.metadata.name) for p in snapshot.pods}
    out = []
    for event in events:
        if not isinstance(event, dict):
            continue
        involved = raw.mapping(event, "involvedObject") or raw.mapping(event, "regarding")
        kind = raw.text(involved, "kind")
        if (
            kind == "SparkApplication"
            or raw.text(involved, "uid") in uids
            or (
                kind == "Pod"
                and (raw.text(involved, "namespace"), raw.text(involved, "name")) in names
            )
        ):
            out.append(event)
    return out
