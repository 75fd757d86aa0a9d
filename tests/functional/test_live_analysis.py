"""The TUI's live path gives the answer a full analysis gives, on every kind of scenario.

The TUI keeps slim copies of watched objects (``core.slim``) and re-analyzes only the
applications a change touched (``core.incremental``). Both are shortcuts; here each kind of scenario
is played while a LiveCluster follows it, and after each stretch the incremental result must
equal ``analyze`` of the same snapshot, and the analysis of slim objects must equal the analysis
of whole ones read through the API.
"""

from __future__ import annotations

import dataclasses
import time
from datetime import UTC, datetime
from typing import Any

import pytest

from kubectl_spark.core import raw
from kubectl_spark.core.analyze import analyze
from kubectl_spark.core.incremental import LiveAnalysis
from kubectl_spark.core.inputs import Snapshot
from kubectl_spark.core.pod import Pod
from kubectl_spark.core.slim import slim
from kubectl_spark.kube import snapshot as reading
from kubectl_spark.kube.client import Connection, connect
from kubectl_spark.kube.live import LiveCluster

STRETCHES = 8
NOW = datetime.now(UTC)


def _slimmed(snapshot: Snapshot) -> Snapshot:
    """The other kinds slim; the pods typed again from their JSON, but not trimmed."""
    other: dict[str, Any] = {
        key: [slim(key, o) for o in getattr(snapshot, key)]
        # nodes are typed as they are read (core.node): there is nothing to slim
        for key in ("jobs", "events", "sparkapplications", "pvcs", "volumeattachments")
    }
    pods = [Pod.of(snapshot.pod_objects[p.metadata.uid]) for p in snapshot.pods]
    return dataclasses.replace(snapshot, pods=pods, **other)


# Every kind of application and failure: Jobs and node loss (s1), split brain (s2), the
# operator (s5), name collisions (s7), orphans and churn (s8), deleted executors (s9), the
# Apache operator's force-delete (s11), Spark 4.2's Deployment executors (s12), all at once
# (mixed). The others vary these and cost suite time.
KINDS = [
    "s1-node-shutdown",
    "s2-partition",
    "s5-operator-retries",
    "s7-name-collision",
    "s8-orphans-and-churn",
    "s9-deleted-executors",
    "s11-apache-force-delete",
    "s12-spark4-deployment-executors",
    "mixed",
]


@pytest.mark.parametrize("name", KINDS)
def test_incremental_and_slim_equal_full_analysis(cluster: Any, name: str) -> None:
    run = cluster(name)
    conn = Connection(kubeconfig=str(run.kubeconfig))
    live = LiveCluster(lambda: connect(conn), None)
    live.start()
    tracker = LiveAnalysis()
    try:
        assert live.ready.wait(10)
        duration = run.player.scenario.duration
        partial_updates = 0
        for i in range(1, STRETCHES + 1):
            run.player.play_until(duration * i / STRETCHES)
            time.sleep(0.05)  # let the watches bring (most of) the stretch's changes
            changes, snapshot = live.take_changes()
            # One fixed "now": texts such as "for 86s" are not what this test is about.
            snapshot = dataclasses.replace(snapshot, now=NOW)
            before = tracker.full_runs
            result = tracker.update(snapshot, changes)
            partial_updates += tracker.full_runs == before and bool(changes)
            assert result.to_json() == analyze(snapshot).to_json(), f"after stretch {i}"
        with connect(conn) as api:
            whole = reading.read(api, None)
        assert analyze(_slimmed(whole)).to_json() == analyze(whole).to_json()
        assert partial_updates, "the fast path never ran: the test proves nothing about it"
    finally:
        live.stop()


def test_busy_drivers_lists_change_only_their_applications(cluster: Any, monkeypatch: Any) -> None:
    """Spark's executor lists, polled from running drivers whose task counters move with every
    answer (as real drivers' do), reach the analysis as changes of the drivers they came from:
    no whole analysis for a counter, and the answer still equals a full analysis."""
    from kubectl_spark.core.summaries import SUMMARY_FIELDS
    from kubectl_spark.kube import live as live_module

    monkeypatch.setattr(live_module, "SPARK_POLL_SECONDS", 0.1)
    run = cluster("s9-deleted-executors")
    conn = Connection(kubeconfig=str(run.kubeconfig))
    live = LiveCluster(lambda: connect(conn), None)
    live.start()
    tracker = LiveAnalysis()
    try:
        assert live.ready.wait(10)
        duration = run.player.scenario.duration
        view_batches = []
        for i in range(1, STRETCHES + 1):
            run.player.play_until(duration * i / STRETCHES)
            time.sleep(0.4)  # several polls of every running driver
            changes, snapshot = live.take_changes()
            snapshot = dataclasses.replace(snapshot, now=NOW)
            before = tracker.full_runs
            result = tracker.update(snapshot, changes)
            if changes is not None and changes.get("spark_views"):
                view_batches.append(tracker.full_runs == before)
            assert result.to_json() == analyze(snapshot).to_json(), f"after stretch {i}"
            for view in snapshot.spark_views.values():
                for summary in raw.items(view, "executors"):
                    assert set(summary) <= set(SUMMARY_FIELDS), summary
        time.sleep(0.5)  # drivers asked again and again, with nothing played
        changes, _ = live.take_changes()
        assert changes is not None and not changes.get("spark_views"), "a counter is a change"
        assert view_batches and all(view_batches), view_batches
    finally:
        live.stop()


def test_the_watched_pods_are_listed_as_ls_reads_them(cluster: Any) -> None:
    """The live path lists pods from each page's bytes (``slim.pod_page``), as ``ls`` does: the
    pods typing each whole pod gives, what they repeat held once."""
    run = cluster("s9-deleted-executors")
    run.player.play_until(run.player.scenario.duration / 2)
    conn = Connection(kubeconfig=str(run.kubeconfig))
    live = LiveCluster(lambda: connect(conn), None)
    live.start()
    try:
        assert live.ready.wait(10)
        _, snapshot = live.take_changes()
    finally:
        live.stop()
    with connect(conn) as api:
        whole = {p.metadata.uid: p for p in reading.read(api, None).pods}
    listed = [p for p in snapshot.pods if p.metadata.uid in whole]
    assert len(listed) >= 2, "too few pods: the test proves nothing"
    assert all(p == whole[p.metadata.uid] for p in listed)
    app_ids = {id(p.metadata.labels["spark-app-selector"]) for p in listed}
    assert len(app_ids) < len(listed)  # one text object for the pods of one application
