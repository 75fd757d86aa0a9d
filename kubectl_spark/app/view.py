"""A cluster view: the snapshot read once, and the one analysis every front end shows.

``ls``, ``describe``, ``history``, the actions and the TUI's first paint all load it here, with
the same sources in the same order: the cluster's objects, what the local history store kept
(``kubectl spark record``, or a TUI that was open), and Spark's own executor lists from the
running drivers. Reading the same sources is what makes their answers the same.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

from kubectl_spark.core import raw
from kubectl_spark.core.analyze import analyze
from kubectl_spark.core.inputs import Snapshot
from kubectl_spark.core.model import Analysis
from kubectl_spark.core.sparkview import merge_kept
from kubectl_spark.knowledge.selectors import parse_label_selector
from kubectl_spark.kube import snapshot as reading
from kubectl_spark.kube import trace
from kubectl_spark.kube.client import Api, history_scope
from kubectl_spark.kube.sparkapi import read_views


@dataclass(frozen=True)
class Wanted:
    """What to read, and from where."""

    namespace: str | None  # None: every namespace
    selector: str | None = None
    group_by: str | None = None
    history: Path | None = None  # the history store to merge (None: none)
    slim_pods: bool = False  # keep only what the core reads of each pod (not for plans)
    spark_api: bool = True  # ask running drivers for Spark's executor list
    history_server: str | None = None  # a Spark History Server: finished drivers' executor lists


@dataclass
class ClusterView:
    analysis: Analysis
    namespace: str | None  # None: all namespaces
    api: Api
    snapshot: Snapshot

    def close(self) -> None:
        self.api.close()


def load(api: Api, wanted: Wanted) -> ClusterView:
    """Read and analyze; the connection stays open for what the caller does next."""
    snap = reading.read(api, wanted.namespace, selector=wanted.selector, slim_pods=wanted.slim_pods)
    if wanted.history is not None:
        snap = with_history(api, snap, wanted)
    if wanted.spark_api:
        snap = dataclasses.replace(snap, spark_views=read_views(api, snap.pods, snap.nodes))
    if wanted.history_server:
        from kubectl_spark.kube.historyserver import finished_app_ids, read_finished

        views = read_finished(wanted.history_server, finished_app_ids(snap))
        if api.verbosity >= trace.REQUESTS:  # where each answer came from, as -v=6 promises
            for app_id, view in views.items():
                told = view.get("note") or f"{len(view.get('executors') or [])} executor(s)"
                trace.line(
                    "view.py", f"Spark History Server {wanted.history_server}: {app_id}: {told}"
                )
        snap = dataclasses.replace(snap, finished_views=views)
    return ClusterView(analyze(snap, group_by=wanted.group_by), wanted.namespace, api, snap)


def with_history(api: Api, snap: Snapshot, wanted: Wanted) -> Snapshot:
    """Merge what the history store kept (never creating a store that is not there)."""
    from kubectl_spark.history.store import HistoryStore

    assert wanted.history is not None
    # The server already checked the selector's syntax; the same grammar applies it here.
    selector = parse_label_selector(wanted.selector)
    with HistoryStore(wanted.history, create=False) as store:
        scope = history_scope(api)
        pods = [
            (obj, deleted or seen)
            for obj, seen, deleted in store.load(scope, "pods", wanted.namespace)
            if selector.matches(raw.labels(obj))
        ]
        events = [obj for obj, _, _ in store.load(scope, "events", wanted.namespace)]
    if api.verbosity >= trace.REQUESTS:
        trace.line(
            "view.py",
            f"history store {wanted.history}: {len(pods)} pod state(s) and {len(events)} "
            f"Event(s) kept for {scope.context}",
        )
    return merge_kept(snap, pods, events)
