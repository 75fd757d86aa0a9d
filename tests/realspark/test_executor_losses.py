"""Executor losses on real Spark, and what kubectl spark says of each beside what Spark said.

Each loss is made the way it happens in a cluster (a SIGKILL from outside, a task that fills
the heap, a node that powers off); Spark then deletes the failed pod itself
(``spark.kubernetes.executor.deleteOnTermination``), so what is left to read is Spark's own
executor list, through the API server's pod proxy, as kubectl spark reads it. For every executor
Spark removed, ``describe -o json`` must say what Spark's ``allexecutors`` said: the exit code
and a named reason (never ``Unknown``) where Spark saw an exit, and Spark's ``exitCausedByApp``
as ``countsAsFailure`` (an exit counts; a deletion does not).
"""

from __future__ import annotations

import signal
from typing import Any

import pytest

from kubectl_spark.sim.sparkrest import exited_text

from .agreement import assert_agrees_with_spark, described_executors
from .bed import Cluster, until
from .launch import spark_submit

pytestmark = [pytest.mark.realspark, pytest.mark.timeout(400)]

APP = "losses"


def driver_of(c: Cluster) -> dict[str, Any]:
    (driver,) = c.running(spark_role="driver")
    return driver


def active(c: Cluster, driver: dict[str, Any]) -> list[str]:
    return [e["id"] for e in c.executors(driver) if e["isActive"] and e["id"] != "driver"]


def test_executor_losses_agree_with_sparks_own_list(cluster: Cluster) -> None:
    c = cluster
    for node in ("node-a", "node-b", "node-c"):
        c.kubelet.add_node(node)
    c.client.patch("/api/v1/nodes/node-c", {"spec": {"unschedulable": True}})
    # A powered-off node's executor pod stays Running in the API (no kubelet says otherwise)
    # and Terminating once the taint manager deletes it: Spark's snapshot counts such a pod as
    # running (ExecutorPodsSnapshot.toState), and only its heartbeat expiry removes it
    # (HeartbeatReceiver: spark.network.timeout, checked every spark.network.timeoutInterval).
    quick = {
        "spark.network.timeout": "20s",
        "spark.network.timeoutInterval": "5s",
        "spark.executor.heartbeatInterval": "2s",
    }
    spark_submit(c, APP, "steady.py", conf={"spark.task.maxFailures": "1", **quick})
    until(lambda: len(c.running(spark_role="driver")) == 1, 60, "the driver running")
    driver = driver_of(c)
    until(lambda: len(active(c, driver)) == 2, 90, "two executors registered with Spark")

    # 1. Killed from outside (SIGKILL): exit 137, the kubelet's reason Error.
    first = active(c, driver)[0]
    (victim,) = c.pods(spark_exec_id=first)
    c.kubelet.kill_container(c.namespace, victim["metadata"]["name"])
    until(lambda: first not in active(c, driver), 60, "Spark removed the killed executor")
    # The simulator's Spark writes the same words for the same pod (held to real Spark).
    said = next(e for e in c.executors(driver) if e["id"] == first)["removeReason"]
    written = exited_text(first, {"status": c.kubelet.reported[victim["metadata"]["uid"]]})
    assert written == said, (written, said)
    until(lambda: len(active(c, driver)) == 2, 90, "Spark replaced it")

    # 2. A task fills the heap: a JVM OutOfMemoryError, exit 52 (SparkExitCode.OOM) — or, when
    # the process outgrows its pod's memory limit first, the kubelet's OOM kill (137,
    # OOMKilled), as on a node. Either is a memory loss Spark and kubectl spark must agree on.
    workdir = c.tmp / "kubelet" / "pods" / driver["metadata"]["uid"] / "work-dir"
    before = set(active(c, driver))
    (workdir / "oom").write_text("")

    def memory_loss(text: str) -> bool:
        return "exit code 52" in text or ("exit code 137" in text and "OOMKilled" in text)

    until(
        lambda: any(
            e["id"] in before and not e["isActive"] and memory_loss(e.get("removeReason", ""))
            for e in c.executors(driver)
        ),
        180,
        "an executor ended by running out of memory",
        lambda: "\n".join(
            [
                *(
                    f"Spark removed {e['id']}: {e.get('removeReason', '').strip()[:200]!r}"
                    for e in c.executors(driver)
                    if not e["isActive"]
                ),
                *[line for line in c.log(driver).splitlines() if "steady:" in line][-5:],
            ]
        ),
    )
    until(lambda: len(active(c, driver)) == 2, 90, "Spark replaced it")

    # 3a. Terminated from outside (SIGTERM: the JVM runs its shutdown hooks, exit 143) with
    # nothing to say who sent it: Spark writes "143(unexpected)"; kubectl spark says SIGTERM
    # from outside, cause unknown, counted as Spark counts an exit (issue 50, point 3).
    termed = active(c, driver)[0]
    (victim,) = c.pods(spark_exec_id=termed)
    c.kubelet.signal_container(c.namespace, victim["metadata"]["name"], signal.SIGTERM)
    until(lambda: termed not in active(c, driver), 60, "Spark removed the terminated executor")
    said = next(e for e in c.executors(driver) if e["id"] == termed)["removeReason"]
    assert "exit code 143" in said, said
    until(lambda: len(active(c, driver)) == 2, 90, "Spark replaced it")
    described = described_executors(c, APP, None)[termed]["reason"]
    assert (described["code"], described["category"]) == ("Sigterm", "unknown"), described

    # 3b. A JVM stops answering (SIGSTOP: a long GC pause) on a healthy node: the driver expires
    # its heartbeats and kills it, which is all Spark's list keeps ("Executor killed by
    # driver."); the expiry is in the driver's log (issue 50, point 6).
    stuck = active(c, driver)[-1]
    (paused,) = c.pods(spark_exec_id=stuck)
    c.kubelet.signal_container(c.namespace, paused["metadata"]["name"], signal.SIGSTOP)
    until(lambda: stuck not in active(c, driver), 90, "Spark expired the stuck executor")
    said = next(e for e in c.executors(driver) if e["id"] == stuck)["removeReason"]
    assert said.startswith("Executor killed by driver"), said
    until(lambda: len(active(c, driver)) == 2, 90, "Spark replaced it")
    described = described_executors(c, APP, None)[stuck]["reason"]
    assert described["code"] == "HeartbeatTimeout", described

    # 4. A node powers off with an executor on it (not the driver's node).
    c.client.patch("/api/v1/nodes/node-c", {"spec": {"unschedulable": False}})
    elsewhere = [
        p
        for p in c.running(spark_role="executor")
        if p["spec"]["nodeName"] != driver["spec"]["nodeName"]
    ]
    assert elsewhere, "every executor shares the driver's node"
    lost = elsewhere[0]
    c.kubelet.power_off(lost["spec"]["nodeName"])
    gone = lost["metadata"]["labels"]["spark-exec-id"]
    until(lambda: gone not in active(c, driver), 90, "Spark lost the powered-off executor")

    removed = assert_agrees_with_spark(c, APP, driver)
    assert len(removed) >= 2
