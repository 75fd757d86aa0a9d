"""S1/S2 on real Spark: a driver Job whose node is cut off, a real second driver, fence, force-kill.

The seed's scenario (000, SPARK-23980) with Spark's own JVMs: the first driver keeps running on
its cut-off node and keeps its API access (a zombie), the Job controller starts a second one
once the taint manager deletes the first pod, and both drive executors. kubectl spark must see
the split brain; ``fence APP/1`` must make the API server refuse the zombie's next executor
(Spark logs the refusal itself); ``force-kill APP/1`` must leave one driver.
"""

from __future__ import annotations

from typing import Any

import pytest

from .agreement import assert_agrees_with_spark, described_executors
from .bed import Cluster, until
from .launch import driver_job

pytestmark = [pytest.mark.realspark, pytest.mark.timeout(400)]

APP = "networkwordcount"
# The zombie's pod-bound token stops authenticating 60 s after its pod's deletion time
# (kube-apiserver's service account validator, pkg/serviceaccount/claims.go: a bound pod deleted
# before now - 60 s invalidates the token): a grace of two minutes leaves the zombie its API
# access for the length of the test, as a long grace period does in a real cluster.
GRACE = {"terminationGracePeriodSeconds": 180}


def owned_by(cluster: Cluster, driver: dict[str, Any]) -> list[dict[str, Any]]:
    uid = driver["metadata"]["uid"]
    return [
        p
        for p in cluster.pods(spark_role="executor")
        if any(o.get("uid") == uid for o in p["metadata"].get("ownerReferences") or [])
    ]


def running_owned_by(cluster: Cluster, driver: dict[str, Any]) -> list[dict[str, Any]]:
    names = {p["metadata"]["name"] for p in cluster.running(spark_role="executor")}
    return [p for p in owned_by(cluster, driver) if p["metadata"]["name"] in names]


def alerts(app: dict[str, Any]) -> dict[str, list[int]]:
    return {a["type"]: a["attempts"] for a in app["alerts"]}


def test_s1_a_cut_off_driver_job_split_brain_fenced_then_force_killed(cluster: Cluster) -> None:
    c = cluster
    c.kubelet.add_node("node-a")
    driver_job(c, APP, "steady.py", template=GRACE)
    until(lambda: len(c.running(spark_role="driver")) == 1, 60, "attempt 1's driver running")
    (zombie,) = c.running(spark_role="driver")
    assert zombie["spec"]["nodeName"] == "node-a"
    # The executors go elsewhere: node-a will be cut off, and S1's executors outlive it.
    c.client.patch("/api/v1/nodes/node-a", {"spec": {"unschedulable": True}})
    c.kubelet.add_node("node-b")
    c.kubelet.add_node("node-c")
    until(lambda: len(running_owned_by(c, zombie)) == 2, 90, "attempt 1's two executors running")
    until(
        lambda: sum(e["isActive"] and e["id"] != "driver" for e in c.executors(zombie)) == 2,
        60,
        "Spark's own list: two active executors",
    )

    c.kubelet.cut("node-a")
    until(
        lambda: any(
            d["metadata"]["uid"] != zombie["metadata"]["uid"]
            for d in c.running(spark_role="driver")
        ),
        90,
        "the Job's replacement driver running",
    )
    (live,) = [
        d
        for d in c.running(spark_role="driver")
        if d["metadata"]["uid"] != zombie["metadata"]["uid"]
    ]
    until(lambda: len(running_owned_by(c, live)) == 2, 90, "attempt 2's two executors running")
    # Two real drivers: each answers as Spark, the zombie on its cut-off node too.
    assert c.app_id(zombie) != c.app_id(live)  # each driver JVM drew its own
    until(
        lambda: sum(e["isActive"] and e["id"] != "driver" for e in c.executors(zombie)) == 2,
        30,
        "the zombie still drives its executors",
    )

    app = c.app_json(APP)
    assert alerts(app)["SplitBrain"] == [1, 2], app["alerts"]
    first, second = app["attempts"]
    assert (first["node"], second["state"]) == ("node-a", "Running"), app["attempts"]

    fenced = c.kubectl_spark("fence", f"{APP}/1", "--yes")
    assert "applied" in fenced.stdout or "done" in fenced.stdout, fenced.stdout

    # The zombie loses its executors (the fence deletes those still running: both attempts
    # share one app id, so each counts the other's as its own) and asks for others: the API
    # server refuses them, and it is Spark's own log that says so.
    before = {p["metadata"]["name"] for p in owned_by(c, zombie)}
    for victim in running_owned_by(c, zombie):
        c.kubelet.kill_container(c.namespace, victim["metadata"]["name"])
    until(
        lambda: "fenced by kubectl spark" in c.log(zombie),
        90,
        "the zombie's log holds the API server's refusal",
        lambda: "\n".join(
            [x for x in c.log(zombie).splitlines() if not x.startswith(("\t", " "))][-30:]
        ),
    )
    refusal = next(line for line in c.log(zombie).splitlines() if "fenced by kubectl spark" in line)
    assert "403" in refusal or "Forbidden" in refusal, refusal
    assert {p["metadata"]["name"] for p in owned_by(c, zombie)} <= before

    killed = c.kubectl_spark("force-kill", f"{APP}/1", "--yes", check=False)
    assert killed.returncode == 0, killed.stdout + killed.stderr
    until(
        lambda: (
            [d["metadata"]["uid"] for d in c.pods(spark_role="driver")] == [live["metadata"]["uid"]]
        ),
        60,
        "one driver left",
    )
    assert sum(e["isActive"] and e["id"] != "driver" for e in c.executors(live)) == 2

    # What the zombie's Spark says of the executors the fence deleted ("not found in the
    # cluster", once spark.kubernetes.executor.missingPodDetectDelta has passed) and what
    # describe says of them, their pods gone and the zombie out of its reach: they agree.
    until(
        lambda: sum(not e["isActive"] and e["id"] != "driver" for e in c.executors(zombie)) == 2,
        60,
        "the zombie's Spark has removed its two executors",
    )
    removed = assert_agrees_with_spark(c, APP, zombie, attempt=1)
    said = {e["id"]: e["removeReason"] for e in removed}
    assert all("was not found in the cluster" in text for text in said.values()), said
    described = described_executors(c, APP, 1)
    assert {e["reason"]["message"] for e in described.values()} == {
        "deleted by kubectl spark fence"
    }, described
