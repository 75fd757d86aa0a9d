"""A driver whose code throws, and dynamic allocation giving executors back, on real Spark.

The driver's end is its container's: spark-submit exits 1 when the application's Python raises,
and kubectl spark must name that exit as the attempt's reason (the app's fault). Executors that
dynamic allocation removes for being idle are the driver's decision, never a failure: Spark says
"Executor killed by driver." (``ExecutorAllocationManager`` → ``killExecutors``) and deletes the
pods; kubectl spark must say the same of each (``DeletedByDriver``, category ``driver``, not
counted), or, with graceful decommissioning, "Executor decommission: spark scale down"
(``Decommissioned``, the driver's decision, not counted).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from .agreement import assert_agrees_with_spark
from .bed import Cluster, until
from .launch import spark_submit

pytestmark = [pytest.mark.realspark, pytest.mark.timeout(300)]


def described(c: Cluster, app: str) -> dict[str, Any]:
    found: dict[str, Any] = json.loads(c.kubectl_spark("describe", app, "-o", "json").stdout)
    return found


def test_a_driver_that_throws_is_its_own_exit_code(cluster: Cluster) -> None:
    c = cluster
    c.kubelet.add_node("node-a")
    spark_submit(c, "throws", "throws.py", conf={"spark.executor.instances": "1"})
    until(
        lambda: [p["status"].get("phase") for p in c.pods(spark_role="driver")] == ["Failed"],
        120,
        "the driver failed",
    )
    (driver,) = c.pods(spark_role="driver")
    (status,) = driver["status"]["containerStatuses"]
    assert status["state"]["terminated"]["exitCode"] == 1  # spark-submit's own exit
    assert "RuntimeError: the application failed on purpose" in c.log(driver)
    (attempt,) = described(c, "throws")["attempts"]
    reason = attempt["reason"]
    assert (reason["exitCode"], reason["category"]) == (1, "app"), reason
    assert reason["countsAsFailure"] is True, reason


# What Spark says of an executor dynamic allocation gives back, with or without graceful
# decommissioning (spark.decommission.enabled: ExecutorAllocationManager.removeExecutors →
# decommissionExecutors with ExecutorDecommissionInfo("spark scale down")), and what kubectl
# spark must say. Neither counts: TaskSetManager.executorLost takes ExecutorKilled and
# ExecutorDecommission as not caused by the app, and no pod is seen PodFailed.
GIVEN_BACK = {
    "killed": ({}, "Executor killed by driver.", "DeletedByDriver"),
    "decommissioned": (
        {"spark.decommission.enabled": "true"},
        "Executor decommission: spark scale down",
        "Decommissioned",
    ),
}


@pytest.mark.parametrize("how", list(GIVEN_BACK))
def test_dynamic_allocation_giving_executors_back_is_no_failure(cluster: Cluster, how: str) -> None:
    conf, text, code = GIVEN_BACK[how]
    c = cluster
    c.kubelet.add_node("node-a")
    c.kubelet.add_node("node-b")
    spark_submit(
        c,
        "elastic",
        "idle.py",
        "120",
        conf={
            "spark.dynamicAllocation.enabled": "true",
            "spark.dynamicAllocation.shuffleTracking.enabled": "true",
            "spark.dynamicAllocation.initialExecutors": "2",
            "spark.dynamicAllocation.minExecutors": "0",
            "spark.dynamicAllocation.executorIdleTimeout": "3s",
            **conf,
        },
    )
    until(lambda: len(c.running(spark_role="driver")) == 1, 60, "the driver running")
    (driver,) = c.running(spark_role="driver")

    def removed() -> list[dict[str, Any]]:
        return [e for e in c.executors(driver) if e["id"] != "driver" and not e["isActive"]]

    def active() -> list[dict[str, Any]]:
        return [e for e in c.executors(driver) if e["id"] != "driver" and e["isActive"]]

    until(
        lambda: len(removed()) >= 2 and not active() and not c.pods(spark_role="executor"),
        120,
        "dynamic allocation gave every executor back and their pods are gone",
    )
    assert {e["removeReason"] for e in removed()} == {text}
    for spark in assert_agrees_with_spark(c, "elastic", driver):
        reason = next(
            e["reason"]
            for a in described(c, "elastic")["attempts"]
            for e in a["executors"]
            if e["id"] == spark["id"]
        )
        assert (reason["code"], reason["category"]) == (code, "driver"), reason
    summary = c.app_json("elastic")
    assert summary["attempts"][-1]["state"] == "Running", summary
