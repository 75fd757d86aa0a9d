"""An executor that ran out of memory, and its driver that ended because of it (issue 50, point 2).

With ``spark.task.maxFailures`` 1 the executor's loss aborts the job and the application's
Python raises: the driver ends seconds after its executor. Kept by
``spark.kubernetes.executor.deleteOnTermination=false`` (KubernetesClusterSchedulerBackend.stop
deletes no executor then), the executor's pod still says how it ended: a JVM OutOfMemoryError
(exit 52, SparkExitCode.OOM) or the kubelet's OOM kill (137, OOMKilled). That end is the
executor's own, not "gone with its driver" (OwnerGone), however close the two ends are.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from .bed import Cluster, until
from .launch import spark_submit

pytestmark = [pytest.mark.realspark, pytest.mark.timeout(300)]


def test_an_executors_memory_loss_is_its_own_though_its_driver_ended_then(cluster: Cluster) -> None:
    c = cluster
    c.kubelet.add_node("node-a")
    spark_submit(
        c,
        "fills",
        "fills_heap.py",
        conf={
            "spark.executor.instances": "1",
            "spark.task.maxFailures": "1",
            "spark.kubernetes.executor.deleteOnTermination": "false",
        },
    )

    def phases(role: str) -> list[str]:
        return [p["status"].get("phase", "") for p in c.pods(spark_role=role)]

    until(
        lambda: phases("driver") == ["Failed"] and "Failed" in phases("executor"),
        240,
        "the executor and then its driver failed",
        lambda: json.dumps([p["status"] for p in c.pods()], indent=1)[-4000:],
    )
    (executor,) = [p for p in c.pods(spark_role="executor") if p["status"]["phase"] == "Failed"]
    (status,) = executor["status"]["containerStatuses"]
    ended = status["state"]["terminated"]
    assert ended["exitCode"] == 52 or (ended["exitCode"], ended["reason"]) == (137, "OOMKilled")

    found: dict[str, Any] = json.loads(c.kubectl_spark("describe", "fills", "-o", "json").stdout)
    (attempt,) = found["attempts"]
    assert (attempt["reason"]["exitCode"], attempt["reason"]["category"]) == (1, "app"), attempt
    exec_id = executor["metadata"]["labels"]["spark-exec-id"]
    reason = next(e for e in attempt["executors"] if e["id"] == exec_id)["reason"]
    assert reason["code"] in ("JvmOutOfMemory", "OOMKilled"), reason
    assert (reason["category"], reason["countsAsFailure"]) == ("app", True), reason
    assert reason["exitCode"] == ended["exitCode"], reason
