"""Executors that never started, on real Spark (issue 50, point 5).

A secret the executors mount is missing: the kubelet keeps each pod ContainerCreating with a
FailedMount Event, and Spark never hears of the executor. When dynamic allocation lowers its
target, Spark deletes such pending pods as excess requests
(``ExecutorPodsAllocator.onNewSnapshots``: "Deleting N excess pod requests", once a pod is older
than ``spark.dynamicAllocation.executorIdleTimeout``); they are in none of Spark's lists
(``allexecutors`` lists executors that registered). Nothing was lost: kubectl spark must say so
while they wait and after they are gone, and count no loss for the ids Spark gave them.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from .bed import Cluster, until
from .launch import spark_submit

pytestmark = [pytest.mark.realspark, pytest.mark.timeout(300)]

SECRET = "spark-conf-missing"


def test_executors_that_never_started_are_no_loss(cluster: Cluster) -> None:
    c = cluster
    c.kubelet.add_node("node-a")
    spark_submit(
        c,
        "waits",
        "waits.py",
        "25",
        conf={
            "spark.dynamicAllocation.enabled": "true",
            "spark.dynamicAllocation.shuffleTracking.enabled": "true",
            "spark.dynamicAllocation.initialExecutors": "2",
            "spark.dynamicAllocation.minExecutors": "0",
            "spark.dynamicAllocation.maxExecutors": "2",
            "spark.dynamicAllocation.executorIdleTimeout": "3s",
            f"spark.kubernetes.executor.secrets.{SECRET}": "/mnt/conf",
        },
    )
    until(lambda: len(c.running(spark_role="driver")) == 1, 60, "the driver running")
    (driver,) = c.running(spark_role="driver")
    until(lambda: len(c.pods(spark_role="executor")) == 2, 60, "two executor pods")

    # While they wait: waiting with the kubelet's reason, not lost.
    def executors() -> dict[str, dict[str, Any]]:
        found = json.loads(c.kubectl_spark("describe", "waits", "-o", "json").stdout)
        return {e["id"]: e for e in found["attempts"][-1]["executors"]}

    until(
        lambda: all(
            (e["waiting"] or {}).get("code") == "VolumeMountFailure" for e in executors().values()
        ),
        60,
        "both executors shown waiting on their volume",
        lambda: json.dumps(executors(), indent=1),
    )
    for waiting in executors().values():
        assert waiting["reason"] is None, waiting
        assert f'secret "{SECRET}" not found' in waiting["waiting"]["message"], waiting

    until(
        lambda: not c.pods(spark_role="executor"),
        90,
        "Spark deleted its pending executors as excess requests",
        lambda: c.log(driver)[-3000:],
    )
    assert "Deleting 2 excess pod requests (1,2)" in c.log(driver)
    c.client.create(
        f"/api/v1/namespaces/{c.namespace}/secrets",
        {"metadata": {"name": SECRET}, "stringData": {"spark.conf": ""}},
    )
    workdir = c.tmp / "kubelet" / "pods" / driver["metadata"]["uid"] / "work-dir"
    (workdir / "again").write_text("")
    until(
        lambda: "waits: rows" in c.log(driver),
        120,
        "the second job ran",
        lambda: c.log(driver)[-3000:],
    )
    # Spark never heard of 1 and 2: its list holds the executors that registered. The job's
    # two tasks may both run on the first new executor before the second registers; that one
    # registers later, or is deleted as an excess request as 1 and 2 were: one new id or two.
    listed = c.executors(driver)
    registered = {e["id"] for e in listed} - {"driver"}
    assert registered and registered <= {"3", "4"}, registered

    found = json.loads(c.kubectl_spark("describe", "waits", "-o", "json").stdout)
    (attempt,) = found["attempts"]
    # Whole, with Spark's list: pytest shortens a dict it shows, and the ids left unexplained
    # are the point (seen once, with the rest of the suite running beside this tier).
    assert attempt["unknownLosses"] == 0, json.dumps(
        {"attempt": attempt, "spark": listed, "pods": c.pods(spark_role="executor")}, indent=1
    )
    gone = {e["id"]: e for e in attempt["executors"] if e["id"] in ("1", "2")}
    assert sorted(gone) == ["1", "2"], attempt["executors"]
    for executor in gone.values():
        reason = executor["reason"]
        assert (executor["source"], executor["state"]) == ("events", "Gone"), executor
        assert (reason["code"], reason["category"], reason["countsAsFailure"]) == (
            "DeletedByDriver",
            "driver",
            False,
        ), reason
        assert f'secret "{SECRET}" not found' in reason["message"], reason
    assert found["summary"]["losses"] == {}, found["summary"]
