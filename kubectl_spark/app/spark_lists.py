"""Spark's executor lists kept in the local history store as commands read them.

A running driver knows why each executor it lost went (``removeReason``, ``core.sparkview``);
once the driver ends, that knowledge goes with it unless something kept it: ``kubectl spark
record``, the in-cluster recorder, or a Spark History Server. When none of them ran, the reads
kubectl spark made while the driver lived are the only record: each command that reads a
driver's list keeps its removed executors here, merged with what earlier reads kept (Spark
forgets the oldest past ``spark.ui.retainedDeadExecutors``), and an attempt whose driver no
longer answers is told from them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from kubectl_spark.core import raw
from kubectl_spark.core.inputs import Snapshot
from kubectl_spark.knowledge.times import rfc3339

KIND = "spark-executor-list"  # the store's kind for these rows, keyed by the driver pod's uid


def keep_and_recall(api: Any, snap: Snapshot, store_path: Path, namespace: str | None) -> Snapshot:
    """Keep what running drivers said of removed executors; recall it for drivers that did not.

    Store errors never fail the command: the list is kept when it can be (a read-only home
    keeps nothing), and the answer is the same as without it.
    """
    from kubectl_spark.errors import KubectlSparkError
    from kubectl_spark.kube.client import history_scope
    from kubectl_spark.localstore import LocalStore

    try:
        with LocalStore(store_path) as store:
            scope = history_scope(api)
            kept = {raw.uid(o): o for o, _, _ in store.load(scope, KIND, namespace)}
            fresh = _fresh_rows(snap, kept)
            if fresh:
                store.record(scope, KIND, [(row, False) for row in fresh])
    except (OSError, KubectlSparkError):
        return snap
    for row in fresh:
        kept[raw.uid(row)] = row
    recalled = {
        uid: _recalled(row)
        for uid, row in kept.items()
        if uid not in snap.spark_views or not _executors(snap.spark_views[uid])
    }
    if not recalled:
        return snap
    return dataclasses.replace(snap, spark_views={**snap.spark_views, **recalled})


def _executors(view: Mapping[str, Any]) -> list[Any]:
    found = view.get("executors")
    return found if isinstance(found, list) else []


def _fresh_rows(snap: Snapshot, kept: Mapping[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """A row per driver whose list names a removed executor the store did not hold yet."""
    drivers = {p.metadata.uid: p for p in snap.pods}
    rows = []
    for uid, view in snap.spark_views.items():
        removed = {
            str(s.get("id")): s
            for s in _executors(view)
            if isinstance(s, Mapping) and s.get("isActive") is False
        }
        before = {str(s.get("id")): s for s in _executors(kept.get(uid) or {})}
        if not removed or removed.keys() <= before.keys() or uid not in drivers:
            continue
        merged = {**before, **removed}
        driver = drivers[uid]
        rows.append(
            {
                "metadata": {
                    "uid": uid,
                    "namespace": driver.metadata.namespace,
                    "name": driver.metadata.name,
                    # more removed executors is newer: the store keeps the larger list
                    "resourceVersion": str(len(merged)),
                },
                "readAt": rfc3339(snap.now),
                "executors": list(merged.values()),
            }
        )
    return rows


def _recalled(row: Mapping[str, Any]) -> dict[str, Any]:
    """A kept list as the analysis reads a driver's (``core.sparkview.with_spark_view``)."""
    return {
        "executors": _executors(row),
        "origin": f"Spark's driver, as kubectl spark read it at {row.get('readAt') or '?'} "
        "(kept in the local history store)",
        "kept": True,
    }
