"""An executor pod with a second container, on real Spark (issue 50, point 4).

A pod template gives each executor a helper that fetches its configuration and exits 0
beside Spark's container (Spark appends its own container last: ExecutorPodsAllocator
.requestNewExecutors). Since Spark 4.0 every container of the pod is checked
(``spark.kubernetes.executor.checkAllContainers``); when Spark's container is killed, its text
describes both, in the order the kubelet writes the pod's status (sorted by name:
status_manager.go normalizeStatus), the helper's ``Completed`` first. kubectl spark must read
Spark's container, never the helper's.
"""

from __future__ import annotations

import pytest

from .agreement import assert_agrees_with_spark, described_executors
from .bed import Cluster, until
from .launch import spark_submit

pytestmark = [pytest.mark.realspark, pytest.mark.timeout(300)]

TEMPLATE = {
    "apiVersion": "v1",
    "kind": "Pod",
    "spec": {
        "containers": [
            {"name": "executor"},
            {"name": "config-fetch", "image": "busybox:1.36", "command": ["true"]},
        ]
    },
}


def test_sparks_container_not_a_helper_tells_the_loss(cluster: Cluster) -> None:
    c = cluster
    c.kubelet.add_node("node-a")
    spark_submit(
        c,
        "helped",
        "steady.py",
        conf={
            "spark.executor.instances": "1",
            **c.executor_template(TEMPLATE),
            "spark.kubernetes.executor.podTemplateContainerName": "executor",
        },
    )
    until(lambda: len(c.running(spark_role="driver")) == 1, 60, "the driver running")
    (driver,) = c.running(spark_role="driver")

    def active() -> list[str]:
        return [e["id"] for e in c.executors(driver) if e["isActive"] and e["id"] != "driver"]

    until(lambda: len(active()) == 1, 90, "the executor registered with Spark")
    (victim,) = c.pods(spark_role="executor")
    names = [s["name"] for s in victim["status"]["containerStatuses"]]
    assert names == ["config-fetch", "executor"], names  # as the kubelet sorts them
    (first,) = active()
    c.kubelet.kill_container(c.namespace, victim["metadata"]["name"], "executor")
    until(lambda: first not in active(), 60, "Spark removed the killed executor")
    said = next(e for e in c.executors(driver) if e["id"] == first)["removeReason"]
    assert said.index("Completed") < said.index("exit code: 137"), said  # the helper first

    assert_agrees_with_spark(c, "helped", driver)
    reason = described_executors(c, "helped", None)[first]["reason"]
    assert (reason["exitCode"], reason["category"]) == (137, "app"), reason
    assert "reason Error" in reason["message"] and "Completed" not in reason["message"], reason
