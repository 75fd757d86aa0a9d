"""Each scenario S1-S8 played on a manual clock; the raw cluster state a real client sees is
asserted at each step, through the official Python client."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import pytest
from kubernetes import config

from kubectl_spark.cluster.apiserver.embedded import EmbeddedApiServer, EmulatorOptions
from kubectl_spark.knowledge.clock import ManualClock
from kubectl_spark.sim import scenario as scenarios
from kubectl_spark.sim.world import World
from tests.helpers import raw


@dataclass
class Run:
    server: EmbeddedApiServer
    world: World
    player: scenarios.Player
    api: Any

    def at(self, t: float) -> None:
        self.player.play_until(t)

    def pods(self, namespace: str = "default", **labels: str) -> list[dict[str, Any]]:
        query = (
            {"labelSelector": ",".join(f"{k.replace('_', '-')}={v}" for k, v in labels.items())}
            if labels
            else {}
        )
        status, body = raw(self.api, "GET", f"/api/v1/namespaces/{namespace}/pods", query=query)
        assert status == 200
        return sorted(
            body["items"], key=lambda p: (p["metadata"]["creationTimestamp"], p["metadata"]["name"])
        )

    def get(self, path: str) -> Any:
        status, body = raw(self.api, "GET", path)
        assert status == 200, body
        return body

    def events(self, namespace: str = "default", **fields: str) -> list[dict[str, Any]]:
        selector = ",".join(f"{k.replace('__', '.')}={v}" for k, v in fields.items())
        return self.get(f"/api/v1/namespaces/{namespace}/events?fieldSelector={selector}")["items"]


@pytest.fixture
def play() -> Iterator[Any]:
    runs: list[Run] = []

    def start(name: str) -> Run:
        clock = ManualClock(datetime(2026, 3, 1, 3, 0, tzinfo=UTC))
        server = EmbeddedApiServer(EmulatorOptions(clock=clock)).start()
        world = World.for_server(server, clock)
        run = Run(
            server,
            world,
            scenarios.Player(world, scenarios.load(name)),
            config.new_client_from_config_dict(server.kubeconfig()),
        )
        runs.append(run)
        return run

    yield start
    for run in runs:
        run.api.close()
        run.world.close()
        run.server.stop()


def cond(obj: dict[str, Any], kind: str) -> dict[str, Any]:
    return next((c for c in obj.get("status", {}).get("conditions") or [] if c["type"] == kind), {})


def term(p: dict[str, Any]) -> dict[str, Any]:
    return p["status"]["containerStatuses"][0]["state"].get("terminated") or {}


def owner_uid(p: dict[str, Any]) -> str:
    return next(r["uid"] for r in p["metadata"]["ownerReferences"] if r.get("controller"))


def test_every_scenario_file_loads() -> None:
    names = scenarios.available()
    for required in (
        "s1-node-shutdown",
        "s2-partition",
        "s2b-partition-replacement-blocked",
        "s3-rwo-volume",
        "s4-executor-losses",
        "s5-operator-retries",
        "s6-driver-restarts",
        "s7-name-collision",
        "s8-orphans-and-churn",
        "s9-deleted-executors",
        "s10-apache-infra-retry",
        "s11-apache-force-delete",
        "s12-spark4-deployment-executors",
        "mixed",
    ):
        assert required in names
    for name in names:
        loaded = scenarios.load(name)
        assert loaded.title and loaded.description and loaded.steps
    with pytest.raises(scenarios.ScenarioError):
        scenarios.load("nope")


def test_s1_node_shutdown_job_replacement_and_gc(play) -> None:
    run = play("s1-node-shutdown")
    run.at(20)
    drivers = run.pods(spark_role="driver")
    assert [(d["spec"]["nodeName"], d["status"]["phase"]) for d in drivers] == [
        ("node-a", "Running")
    ]
    attempt1 = drivers[0]
    assert attempt1["metadata"]["ownerReferences"][0]["kind"] == "Job"
    execs = run.pods(spark_role="executor")
    assert sorted(e["spec"]["nodeName"] for e in execs) == ["node-b", "node-c"]
    assert all(owner_uid(e) == attempt1["metadata"]["uid"] for e in execs)
    assert all(e["metadata"]["name"].endswith(("-exec-1", "-exec-2")) for e in execs)

    run.at(80)  # past the 40 s grace: NotReady, tainted, pods not ready, events
    node = run.get("/api/v1/nodes/node-a")
    ready = cond(node, "Ready")
    assert (ready["status"], ready["reason"], ready["message"]) == (
        "Unknown",
        "NodeStatusUnknown",
        "Kubelet stopped posting node status.",
    )
    assert {(t["key"], t["effect"]) for t in node["spec"]["taints"]} == {
        ("node.kubernetes.io/unreachable", "NoSchedule"),
        ("node.kubernetes.io/unreachable", "NoExecute"),
    }
    driver = run.pods(spark_role="driver")[0]
    assert cond(driver, "Ready")["status"] == "False"
    assert driver["status"]["phase"] == "Running"  # nobody reports otherwise
    assert [
        e["reason"]
        for e in run.events(involvedObject__name=driver["metadata"]["name"], reason="NodeNotReady")
    ] == ["NodeNotReady"]

    run.at(380)  # tolerationSeconds 300 after the taint: the taint manager deletes, gracefully
    drivers = run.pods(spark_role="driver")
    old = next(d for d in drivers if d["metadata"]["uid"] == attempt1["metadata"]["uid"])
    assert old["metadata"]["deletionTimestamp"]
    assert cond(old, "DisruptionTarget")["reason"] == "DeletionByTaintManager"
    assert run.events(involvedObject__name=old["metadata"]["name"], reason="TaintManagerEviction")
    new = [d for d in drivers if d["metadata"]["uid"] != attempt1["metadata"]["uid"]]
    assert len(new) == 1 and new[0]["spec"]["nodeName"] in ("node-b", "node-c")
    job = run.get(
        "/apis/batch/v1/namespaces/default/jobs/"
        + attempt1["metadata"]["ownerReferences"][0]["name"]
    )
    assert (job["status"]["failed"], job["status"]["active"], job["status"]["terminating"]) == (
        1,
        1,
        1,
    )

    run.at(420)
    execs = run.pods(spark_role="executor")
    # Attempt 1's executors live on while its pod object exists, and attempt 2 shares its app
    # id: Spark selects executors by that label, counts them as its own and asks for none.
    assert len(execs) == 2
    assert all(owner_uid(e) == attempt1["metadata"]["uid"] for e in execs)
    old_prefix = {e["metadata"]["name"].rsplit("-exec-", 1)[0] for e in execs}

    run.at(660)  # node-a is back: attempt 1's pod leaves the API; its executors are collected
    assert [d["metadata"]["uid"] for d in run.pods(spark_role="driver")] == [
        new[0]["metadata"]["uid"]
    ]
    new_execs = run.pods(spark_role="executor")
    assert len(new_execs) == 2  # now attempt 2 asks for executors of its own
    assert all(owner_uid(e) == new[0]["metadata"]["uid"] for e in new_execs)
    assert {e["metadata"]["name"].rsplit("-exec-", 1)[0] for e in new_execs}.isdisjoint(
        old_prefix
    )  # a new salt
    assert cond(run.get("/api/v1/nodes/node-a"), "Ready")["status"] == "True"


def test_s2_partition_makes_two_live_drivers(play) -> None:
    run = play("s2-partition")
    run.at(450)
    drivers = run.pods(spark_role="driver")
    assert len(drivers) == 2
    assert (
        drivers[0]["metadata"]["deletionTimestamp"] and drivers[0]["spec"]["nodeName"] == "node-a"
    )
    assert drivers[0]["status"]["phase"] == "Running"
    assert drivers[1]["status"]["phase"] == "Running" and not drivers[1]["metadata"].get(
        "deletionTimestamp"
    )
    # the partitioned driver's process still runs (invisible to the API, but real)
    assert run.world.process_alive(drivers[0])
    status, body = raw(
        run.api, "GET", f"/api/v1/namespaces/default/pods/{drivers[0]['metadata']['name']}/log"
    )
    assert status == 500 and "dial tcp" in body["message"]  # the kubelet is unreachable
    # Attempt 2 shares attempt 1's app id and counts its two running executors as its own.
    execs = run.pods(spark_role="executor")
    assert len(execs) == 2
    assert all(owner_uid(e) == drivers[0]["metadata"]["uid"] for e in execs)


def test_a_suspended_job_deletes_its_active_pod_without_counting_a_failure(play) -> None:
    run = play("s1-node-shutdown")
    run.at(30)
    (driver,) = run.pods(spark_role="driver")
    path = (
        "/apis/batch/v1/namespaces/default/jobs/" + driver["metadata"]["ownerReferences"][0]["name"]
    )
    run.world.client.patch(path, {"spec": {"suspend": True}})
    run.world.step(3)
    job = run.get(path)
    assert cond(job, "Suspended")["status"] == "True" and not job["status"].get("failed")
    assert [
        p["metadata"]["uid"]
        for p in run.pods(spark_role="driver")
        if not p["metadata"].get("deletionTimestamp")
    ] == []
    run.world.client.patch(path, {"spec": {"suspend": False}})
    run.world.step(3)
    job = run.get(path)
    assert cond(job, "Suspended")["status"] == "False" and job["status"]["active"] == 1


def test_s2b_replacement_blocked_with_pod_replacement_policy_failed(play) -> None:
    run = play("s2b-partition-replacement-blocked")
    run.at(450)
    drivers = run.pods(spark_role="driver")
    assert len(drivers) == 1 and drivers[0]["metadata"]["deletionTimestamp"]
    job = run.get(
        "/apis/batch/v1/namespaces/default/jobs/"
        + drivers[0]["metadata"]["ownerReferences"][0]["name"]
    )
    assert job["spec"]["podReplacementPolicy"] == "Failed"
    assert job["status"].get("active") is None and job["status"]["terminating"] == 1


def test_s3_rwo_volume_blocks_attempt_2(play) -> None:
    run = play("s3-rwo-volume")
    run.at(20)
    (va,) = run.get("/apis/storage.k8s.io/v1/volumeattachments")["items"]
    assert va["spec"]["nodeName"] == "node-a" and va["status"]["attached"] is True
    run.at(450)
    drivers = run.pods(spark_role="driver")
    assert len(drivers) == 2
    blocked = drivers[1]
    assert blocked["status"]["phase"] == "Pending"
    assert (
        blocked["status"]["containerStatuses"][0]["state"]["waiting"]["reason"]
        == "ContainerCreating"
    )
    events = run.events(
        involvedObject__name=blocked["metadata"]["name"], reason="FailedAttachVolume"
    )
    assert events and events[0]["message"].startswith('Multi-Attach error for volume "pvc-')
    assert events[0]["source"]["component"] == "attachdetach-controller"
    (va,) = run.get("/apis/storage.k8s.io/v1/volumeattachments")["items"]
    assert va["spec"]["nodeName"] == "node-a"  # still held by attempt 1's node


def test_s4_executor_losses_of_every_kind(play) -> None:
    run = play("s4-executor-losses")
    run.at(30)
    pending = [
        e
        for e in run.pods(spark_app_name="losses", spark_role="executor")
        if e["status"]["phase"] == "Pending"
    ]
    assert [p["metadata"]["labels"]["spark-exec-id"] for p in pending] == ["10"]
    assert cond(pending[0], "PodScheduled")["reason"] == "Unschedulable"
    assert run.events(
        involvedObject__name=pending[0]["metadata"]["name"], reason="FailedScheduling"
    )
    run.at(300)
    by_id = {
        e["metadata"]["labels"]["spark-exec-id"]: e
        for e in run.pods(spark_app_name="losses", spark_role="executor")
    }
    assert "10" not in by_id  # the pending executor was deleted without ever starting...
    (driver,) = run.pods(spark_app_name="losses", spark_role="driver")
    logs = run.server.call(
        run.server.api.logs.get, driver["metadata"]["uid"], "spark-kubernetes-driver"
    )
    assert any(
        "Deleting executor 10 (scale down)" in line for _, line in logs.current.lines
    )  # ...by its driver
    assert (term(by_id["1"])["reason"], term(by_id["1"])["exitCode"]) == ("OOMKilled", 137)
    assert (term(by_id["2"])["reason"], term(by_id["2"])["exitCode"]) == ("Error", 137)
    assert [term(by_id[i])["exitCode"] for i in ("3", "4", "5")] == [52, 50, 56]
    evicted = by_id["6"]
    assert (evicted["status"]["phase"], evicted["status"]["reason"]) == ("Failed", "Evicted")
    assert evicted["status"]["message"].startswith("The node was low on resource: memory.")
    assert cond(evicted, "DisruptionTarget")["reason"] == "TerminationByKubelet"
    assert "7" not in by_id and "8" not in by_id  # preempted and deleted pods leave the API...
    preempted = run.events(reason="Preempted")  # ...but the scheduler's event stays
    assert preempted and preempted[0]["message"].startswith("Preempted by pod ")
    assert term(by_id["9"]) == {**term(by_id["9"]), "exitCode": 0, "reason": "Completed"}
    assert all(
        by_id[i]["metadata"]["labels"].get("spark-exec-inactive") == "true"
        for i in ("1", "2", "3", "6", "9")
    )
    on_e = [
        e
        for e in by_id.values()
        if e["spec"].get("nodeName") == "node-e" and e["status"]["phase"] == "Running"
    ]
    assert on_e and all(cond(e, "Ready")["status"] == "False" for e in on_e)  # node lost
    (restarted,) = run.pods(spark_app_name="restarts", spark_role="executor")
    status = restarted["status"]["containerStatuses"][0]
    assert status["restartCount"] == 1
    assert status["lastState"]["terminated"]["reason"] == "OOMKilled"


def test_s5_operator_retries_then_fails(play) -> None:
    run = play("s5-operator-retries")
    run.at(30)
    app = run.get("/apis/sparkoperator.k8s.io/v1beta2/namespaces/default/sparkapplications/pi")
    first = app["status"]["submissionID"]
    assert app["status"]["applicationState"]["state"] == "RUNNING"
    (driver,) = run.pods(spark_role="driver")
    assert driver["metadata"]["name"] == "pi-driver"
    assert driver["metadata"]["labels"]["sparkoperator.k8s.io/submission-id"] == first
    execs = run.pods(spark_role="executor")
    assert len(execs) == 2
    assert all(
        e["metadata"]["labels"]["sparkoperator.k8s.io/submission-id"] == first for e in execs
    )
    assert {r["kind"] for r in execs[0]["metadata"]["ownerReferences"]} == {
        "Pod",
        "SparkApplication",
    }
    run.at(100)
    app = run.get("/apis/sparkoperator.k8s.io/v1beta2/namespaces/default/sparkapplications/pi")
    assert app["status"]["submissionID"] != first and app["status"]["executionAttempts"] == 2
    run.at(300)
    app = run.get("/apis/sparkoperator.k8s.io/v1beta2/namespaces/default/sparkapplications/pi")
    assert app["status"]["applicationState"] == {
        "state": "FAILED",
        "errorMessage": "driver container failed with ExitCode: 1, Reason: Error",
    }
    assert (app["status"]["executionAttempts"], app["status"]["submissionAttempts"]) == (3, 3)
    counts = {
        e["reason"]: e["count"]
        for e in run.events(involvedObject__name="pi", involvedObject__kind="SparkApplication")
    }
    assert (
        counts["SparkApplicationSubmitted"] == 3
    )  # identical events are aggregated, as the recorder does
    assert counts["SparkApplicationPendingRerun"] == 2 and counts["SparkApplicationFailed"] == 1


def test_s6_driver_container_restarts_in_place(play) -> None:
    run = play("s6-driver-restarts")
    run.at(200)
    (driver,) = run.pods(spark_role="driver")
    status = driver["status"]["containerStatuses"][0]
    assert status["restartCount"] == 2
    assert status["lastState"]["terminated"]["reason"] == "OOMKilled"
    assert "running" in status["state"]
    assert run.events(involvedObject__name=driver["metadata"]["name"], reason="BackOff")


def test_s7_fixed_executor_names_collide(play) -> None:
    run = play("s7-name-collision")
    run.at(450)
    drivers = run.pods(spark_role="driver")
    assert len(drivers) == 2
    execs = run.pods(spark_role="executor")
    assert len(execs) == 2 and all(
        owner_uid(e) == drivers[0]["metadata"]["uid"] for e in execs
    )  # attempt 2 has none
    # Attempt 2 shares attempt 1's app id: Spark counts attempt 1's executors as its own and asks
    # for none, so with the fixed prefix it never gets as far as a 409 (it would, were its app
    # id its own).
    logs = run.server.call(
        run.server.api.logs.get, drivers[1]["metadata"]["uid"], "spark-kubernetes-driver"
    )
    assert logs is not None
    assert not any("Requested executor" in line for _, line in logs.current.lines)


def test_s8_orphans_and_churn(play) -> None:
    run = play("s8-orphans-and-churn")
    run.at(260)
    orphans = run.pods(spark_app_name="etl", spark_role="executor")
    assert len(orphans) == 2 and all(e["status"]["phase"] == "Running" for e in orphans)
    assert not run.pods(spark_app_name="etl", spark_role="driver")
    assert [r["kind"] for r in orphans[0]["metadata"]["ownerReferences"]] == ["SparkApplication"]
    churn = run.pods(spark_app_name="churn", spark_role="executor")
    live = sorted(
        int(e["metadata"]["labels"]["spark-exec-id"])
        for e in churn
        if e["status"]["phase"] == "Running"
    )
    assert live == [7, 8]  # six executors lost and replaced...
    lost = [e for e in churn if e["status"]["phase"] == "Failed"]
    assert len(lost) == 6 and all(
        e["metadata"]["labels"]["spark-exec-inactive"] == "true" for e in lost
    )  # ...and kept
