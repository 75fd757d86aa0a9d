"""force-kill raced by the garbage collector, with Spark's own driver and executors (issue 46).

The driver runs on node-a, one executor on each of node-b and node-c (a required anti-affinity
in the executors' pod template); node-c powers off. The plan is made, then the driver pod is
deleted under it: the real garbage collector deletes the executors gracefully, which node-b's
kubelet confirms and node-c's never does. Applying the plan made before must still end well:
every step about a pod already gone is "already done", and node-c's executor, deleted first of
all with grace 0, leaves the API.
"""

from __future__ import annotations

import pytest

from kubectl_spark.app.act import KillOptions, plan_force_kill
from kubectl_spark.app.view import Wanted, load
from kubectl_spark.kube import actions
from kubectl_spark.kube.client import Connection, connect

from .bed import Cluster, until
from .launch import spark_submit

pytestmark = [pytest.mark.realspark, pytest.mark.timeout(300)]

APP = "raced"
ONE_PER_NODE = {
    "apiVersion": "v1",
    "kind": "Pod",
    "spec": {
        "containers": [],
        "affinity": {
            "podAntiAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {
                        "topologyKey": "kubernetes.io/hostname",
                        "labelSelector": {"matchLabels": {"spark-role": "executor"}},
                    }
                ]
            }
        },
    },
}


def _executor_nodes(c: Cluster) -> dict[str, str]:
    return {p["metadata"]["name"]: p["spec"]["nodeName"] for p in c.running(spark_role="executor")}


def test_force_kill_raced_by_the_garbage_collector_on_real_spark(cluster: Cluster) -> None:
    c = cluster
    c.kubelet.add_node("node-a")
    spark_submit(c, APP, "steady.py", conf=c.executor_template(ONE_PER_NODE))
    until(lambda: len(c.running(spark_role="driver")) == 1, 60, "the driver running")
    c.client.patch("/api/v1/nodes/node-a", {"spec": {"unschedulable": True}})
    c.kubelet.add_node("node-b")
    c.kubelet.add_node("node-c")
    until(lambda: len(_executor_nodes(c)) == 2, 90, "two executors running")
    assert sorted(_executor_nodes(c).values()) == ["node-b", "node-c"], _executor_nodes(c)
    (lost,) = [name for name, node in _executor_nodes(c).items() if node == "node-c"]
    c.kubelet.power_off("node-c")

    def node_c_not_ready() -> bool:
        node = c.client.get("/api/v1/nodes/node-c") or {}
        return any(
            x["type"] == "Ready" and x["status"] != "True"
            for x in node.get("status", {}).get("conditions") or []
        )

    until(node_c_not_ready, 90, "node-c NotReady")
    with connect(Connection(kubeconfig=str(c.bed.kubeconfig))) as api:
        view = load(api, Wanted(namespace=c.namespace, spark_api=False))
        (app,) = [a for a in view.analysis.apps if a.name == APP]
        attempt = app.attempts[-1]
        plan = plan_force_kill(api, view.snapshot, app, attempt, KillOptions(force=True))
        deletes = [op.name for op in plan.operations if op.verb == "delete"]
        assert deletes[:2] == [lost, attempt.driver_pod], deletes
        c.client.delete(f"/api/v1/namespaces/{c.namespace}/pods/{attempt.driver_pod}")

        def only_lost_left_terminating() -> bool:
            left = c.pods()  # the namespace holds this application alone
            return [p["metadata"]["name"] for p in left] == [lost] and bool(
                left[0]["metadata"].get("deletionTimestamp")
            )

        until(only_lost_left_terminating, 90, "the cascade: node-c's executor left Terminating")
        report = actions.apply(api, plan)
    assert report.failed is None, report.failed
    assert attempt.driver_pod in {op.name for op, _ in report.already}, report.already
    until(lambda: not c.pods(spark_role="executor"), 30, "every pod of the attempt gone")
    assert not c.pods(spark_role="driver")
