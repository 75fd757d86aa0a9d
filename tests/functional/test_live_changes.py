"""LiveCluster's change tracking, which the TUI trusts to re-analyze only touched applications.

A list (first, or again after a 410) replaces a whole kind, so it must read as "everything
changed"; otherwise a node list arriving after the first analysis would never reach the screen.
"""

from __future__ import annotations

import itertools
import time
from pathlib import Path
from typing import Any

from kubectl_spark.core.node import Node, nodes_of
from kubectl_spark.core.pod import Pod, pods_of
from kubectl_spark.kube.client import Connection, connect
from kubectl_spark.kube.live import LiveCluster
from tests.waiting import wait_until


def test_lists_count_as_everything_and_pod_changes_are_named(kubeconfig: Path, api: Any) -> None:
    from kubernetes import client

    core = client.CoreV1Api(api)
    pod = core.create_namespaced_pod(
        "default",
        {
            "metadata": {
                "name": "d1",
                "labels": {"spark-role": "driver", "spark-app-selector": "a"},
            },
            "spec": {"containers": [{"name": "c", "image": "spark"}]},
        },
    )
    conn = Connection(kubeconfig=str(kubeconfig))
    live = LiveCluster(lambda: connect(conn), "default", max_tombstones=1)
    live.take_changes()  # an analysis ran before any list arrived
    live.start()
    try:
        wait_until(live.ready.is_set)
        changes, snapshot = live.take_changes()
        assert changes is None, "lists that arrived after the last take must ask for everything"
        assert [p.metadata.name for p in snapshot.pods] == ["d1"]

        core.patch_namespaced_pod("d1", "default", {"metadata": {"labels": {"x": "y"}}})
        wait_until(lambda: bool(live.changes))
        changes, _ = live.take_changes()
        assert changes is not None and list(changes) == ["pods"]
        change = changes["pods"][pod.metadata.uid]
        watched = change.obj
        assert isinstance(watched, Pod)  # typed as it is watched
        assert not change.deleted and watched.metadata.labels.get("x") == "y"

        core.delete_namespaced_pod("d1", "default", grace_period_seconds=0)
        wait_until(lambda: bool(live.changes))
        changes, snapshot = live.take_changes()
        assert changes is not None
        kept = changes["pods"][pod.metadata.uid]
        # A deleted pod stays, as its last state, so that its loss is still explained.
        assert not kept.deleted
        assert isinstance(kept.obj, Pod) and kept.obj.source == "watch"
        assert [p.metadata.uid for p in snapshot.pods] == [pod.metadata.uid]

        core.create_node({"metadata": {"name": "n9"}})
        wait_until(lambda: bool(live.changes))
        changes, snapshot = live.take_changes()
        assert changes is not None
        assert [Node.of(c.obj).name for c in changes["nodes"].values()] == ["n9"]
        assert "n9" in [n.name for n in snapshot.nodes]
    finally:
        live.stop()


def test_the_oldest_deleted_pods_are_forgotten_beyond_the_bound(kubeconfig: Path, api: Any) -> None:
    from kubernetes import client

    core = client.CoreV1Api(api)
    conn = Connection(kubeconfig=str(kubeconfig))
    live = LiveCluster(lambda: connect(conn), "default", max_tombstones=1)
    live.start()
    try:
        wait_until(live.ready.is_set)
        for name in ("e1", "e2"):
            core.create_namespaced_pod(
                "default",
                {
                    "metadata": {"name": name, "labels": {"spark-role": "executor"}},
                    "spec": {"containers": [{"name": "c", "image": "spark"}]},
                },
            )
            core.delete_namespaced_pod(name, "default", grace_period_seconds=0)
        wait_until(lambda: [p.metadata.name for p in live.snapshot().pods] == ["e2"])
    finally:
        live.stop()


def test_a_dead_owner_is_asked_about_once(cluster: Any, monkeypatch: Any) -> None:
    """With the garbage collector paused, a driver's executors outlive it and name a pod that
    is gone for good: the live view's owner poll asks about it once, not on every poll."""
    from kubectl_spark.kube import live as live_module

    c = cluster("s6-driver-restarts")
    c.player.play_until(30)
    c.world.set_gc(enabled=False)
    (driver,) = c.world.find_pods("default", spark_role="driver")
    c.world.client.delete(f"/api/v1/namespaces/default/pods/{driver['metadata']['name']}", grace=0)
    monkeypatch.setattr(live_module, "OWNER_POLL_SECONDS", 0.05)
    c.server.clear_audit()
    conn = Connection(kubeconfig=str(c.kubeconfig))
    live = LiveCluster(lambda: connect(conn), None)
    live.start()

    def asked() -> list[str]:
        entries = c.server.audit_entries()
        return [e["name"] for e in entries if e["verb"] == "get" and e["resource"] == "pods"]

    try:
        wait_until(lambda: asked() != [])
        time.sleep(0.5)  # about ten polls
    finally:
        live.stop()
    assert asked() == [driver["metadata"]["name"]]


def test_a_stopped_cluster_wakes_nobody() -> None:
    """The TUI stops the watches and then closes its event loop; a change a watch thread was
    still applying must not wake a reader that is gone."""
    woken: list[int] = []
    live = LiveCluster(lambda: None, None)  # type: ignore[arg-type, return-value]  # never connects
    live.on_change = lambda: woken.append(1)
    pod = {"metadata": {"uid": "u1", "name": "d1", "labels": {"spark-role": "driver"}}}
    live._apply("pods", "MODIFIED", pod)
    assert woken == [1], "a running cluster wakes its reader"
    live.take_changes()
    live.stop()
    live._apply("pods", "MODIFIED", pod)
    assert woken == [1], "a stopped one does not"


def test_spark_is_asked_a_few_drivers_at_a_time(cluster: Any, monkeypatch: Any) -> None:
    """A round of Spark's executor lists is spread over half the poll's interval, a batch of
    drivers at a time (500 drivers asked at once held the TUI's interpreter while its first
    analysis ran: issue 26), every running driver is still asked, and a stop ends a round."""
    from kubectl_spark.kube import live as live_module
    from kubectl_spark.kube import sparkapi

    c = cluster("mixed")
    c.player.play_until(c.player.scenario.duration * 0.1)
    running = {
        p.metadata.uid
        for p in sparkapi.running_drivers(
            pods_of(c.world.client.list("/api/v1/pods")),
            nodes_of(c.world.client.list("/api/v1/nodes")),
        )
    }
    assert len(running) >= 3, "the scenario no longer has drivers enough to spread"
    asked: list[tuple[float, str]] = []
    real = sparkapi._read_view

    def timed(api: Any, driver: Pod) -> dict[str, Any]:
        asked.append((time.monotonic(), driver.metadata.uid))
        return real(api, driver)

    monkeypatch.setattr(sparkapi, "_read_view", timed)
    monkeypatch.setattr(live_module, "MAX_PARALLEL", 1)
    conn = Connection(kubeconfig=str(c.kubeconfig))

    monkeypatch.setattr(live_module, "SPARK_POLL_SECONDS", 0.8)
    live = LiveCluster(lambda: connect(conn), None)
    live.start()
    try:
        wait_until(lambda: set(live.spark_views) == running)
    finally:
        live.stop(wait=5)
    first = asked[: len(running)]
    assert {uid for _, uid in first} == running, "each running driver once a round"
    pause = 0.8 * live_module.SPARK_POLL_SPREAD / len(running)
    gaps = [b - a for (a, _), (b, _) in itertools.pairwise(first)]
    assert min(gaps) >= pause * 0.9, (gaps, pause)

    asked.clear()
    monkeypatch.setattr(live_module, "SPARK_POLL_SECONDS", 60.0)  # a pause of seconds
    live = LiveCluster(lambda: connect(conn), None)
    live.start()
    try:
        wait_until(lambda: bool(asked))
    finally:
        started = time.monotonic()
        live.stop(wait=5)
    assert time.monotonic() - started < 2, "a stop waited for the round to end"
    assert not any(t.is_alive() for t in live.threads)
    assert len(asked) == 1
