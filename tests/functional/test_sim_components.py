"""Each simulated component on its own, on a manual clock, observed through the API."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest

from kubectl_spark.cluster.apiserver.embedded import EmbeddedApiServer, EmulatorOptions
from kubectl_spark.knowledge.clock import ManualClock
from kubectl_spark.knowledge.times import parse_time
from kubectl_spark.sim import scenario as scenarios
from kubectl_spark.sim.client import pod, pods
from kubectl_spark.sim.sparkapp import AppConfig
from kubectl_spark.sim.world import World


@pytest.fixture
def world() -> Iterator[World]:
    clock = ManualClock(datetime(2026, 3, 1, 3, 0, tzinfo=UTC))
    with EmbeddedApiServer(EmulatorOptions(clock=clock)) as server:
        w = World.for_server(server, clock)
        w.server = server  # type: ignore[attr-defined]
        yield w
        w.close()


def plain_pod(name: str, **spec: Any) -> dict[str, Any]:
    containers = spec.pop("containers", [{"name": "main", "image": "busybox:1"}])
    return {"metadata": {"name": name}, "spec": {"containers": containers, **spec}}


def get(world: World, name: str, namespace: str = "default") -> dict[str, Any]:
    item = world.client.get(pod(namespace, name))
    assert item is not None
    return item


def cond(obj: dict[str, Any], kind: str) -> dict[str, Any]:
    return next((c for c in obj.get("status", {}).get("conditions") or [] if c["type"] == kind), {})


def state(item: dict[str, Any]) -> dict[str, Any]:
    return item["status"]["containerStatuses"][0]["state"]


# --------------------------------------------------------------------------- kubelet
def test_kubelet_pending_container_creating_running_and_exit_codes(world: World) -> None:
    world.add_node("node-a")
    for name, policy in (
        ("ok", "Never"),
        ("crash", "Never"),
        ("start", "Never"),
        ("again", "OnFailure"),
    ):
        world.client.create(pods("default"), plain_pod(name, restartPolicy=policy))
    world.step(1)  # scheduled, and the kubelet starts creating the containers in the same tick
    assert state(get(world, "ok"))["waiting"]["reason"] == "ContainerCreating"
    assert get(world, "ok")["status"]["phase"] == "Pending"
    world.step(1)
    running = get(world, "ok")
    assert running["status"]["phase"] == "Running" and "running" in state(running)
    assert cond(running, "Ready")["status"] == "True" and running["status"]["podIP"]
    world.exit_container("default", "ok", 0)
    world.exit_container("default", "crash", 1)
    world.exit_container("default", "start", 128, reason="StartError")
    world.oom_kill("default", "again")
    world.step(1)
    assert (
        get(world, "ok")["status"]["phase"],
        state(get(world, "ok"))["terminated"]["reason"],
    ) == ("Succeeded", "Completed")
    assert (
        get(world, "crash")["status"]["phase"],
        state(get(world, "crash"))["terminated"]["exitCode"],
    ) == ("Failed", 1)
    assert state(get(world, "start"))["terminated"]["reason"] == "StartError"
    again = get(world, "again")["status"]["containerStatuses"][0]
    assert again["state"]["waiting"]["reason"] == "CrashLoopBackOff"
    assert (again["restartCount"], again["lastState"]["terminated"]["reason"]) == (1, "OOMKilled")
    world.step(11)  # the 10 s back-off is over
    assert (
        "running" in state(get(world, "again"))
        and get(world, "again")["status"]["phase"] == "Running"
    )


def test_kubelet_image_pull_failure_and_config_error(world: World) -> None:
    world.add_node("node-a")
    world.client.create(
        pods("default"), plain_pod("pull", containers=[{"name": "main", "image": "spark:missing"}])
    )
    world.client.create(pods("default"), plain_pod("conf"))
    world.fail_config("default", "conf")
    world.step(1)
    assert state(get(world, "pull"))["waiting"]["reason"] == "ErrImagePull"
    assert state(get(world, "conf"))["waiting"]["reason"] == "CreateContainerConfigError"
    world.step(1)
    assert state(get(world, "pull"))["waiting"]["reason"] == "ImagePullBackOff"
    assert get(world, "pull")["status"]["phase"] == "Pending"


def test_kubelet_graceful_deletion_heartbeat_and_logs(world: World) -> None:
    world.add_node("node-a")
    world.client.create(pods("default"), plain_pod("p", terminationGracePeriodSeconds=30))
    world.step(3)
    world.client.delete(pod("default", "p"))
    world.step(1)
    assert get(world, "p")["metadata"]["deletionTimestamp"]  # SIGTERM sent, container stopping
    world.step(2)
    assert world.client.get(pod("default", "p")) is None  # exited (143) and removed with grace 0
    lease = world.client.get(
        "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/node-a"
    )
    assert lease is not None
    before = parse_time(lease["spec"]["renewTime"])
    world.step(15)
    lease = world.client.get(
        "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/node-a"
    )
    assert lease is not None and parse_time(lease["spec"]["renewTime"]) > before
    node = world.client.get("/api/v1/nodes/node-a")
    assert node is not None and cond(node, "Ready")["reason"] == "KubeletReady"


def test_driver_creates_configmap_service_and_executors_then_cleans_up(world: World) -> None:
    world.add_node("node-a")
    world.add_node("node-b")
    world.submit(
        AppConfig("pi", launch="submit", executors=3, driver_exit_after=30, driver_exit_code=0)
    )
    world.step(6)
    (driver,) = world.find_pods("default", spark_role="driver")
    execs = world.find_pods("default", spark_role="executor")
    assert sorted(e["metadata"]["labels"]["spark-exec-id"] for e in execs) == ["1", "2", "3"]
    labels = execs[0]["metadata"]["labels"]
    assert {
        "spark-app-selector",
        "spark-role",
        "spark-exec-id",
        "spark-app-name",
        "spark-version",
        "spark-exec-resourceprofile-id",
    } <= set(labels)
    assert all(
        e["metadata"]["ownerReferences"][0]["uid"] == driver["metadata"]["uid"] for e in execs
    )
    cms = [  # beside the API server's CA, which every namespace holds
        c
        for c in world.client.list("/api/v1/namespaces/default/configmaps")
        if c["metadata"]["name"] != "kube-root-ca.crt"
    ]
    svcs = world.client.list("/api/v1/namespaces/default/services")
    assert (
        cms[0]["metadata"]["name"].startswith("spark-drv-")
        and cms[0]["metadata"]["ownerReferences"][0]["kind"] == "Pod"
    )
    assert svcs[0]["spec"]["clusterIP"] == "None" and svcs[0]["metadata"]["name"].endswith(
        "-driver-svc"
    )
    server = world.server  # type: ignore[attr-defined]
    logs = server.call(server.api.logs.get, driver["metadata"]["uid"], "spark-kubernetes-driver")
    assert any("Requested executor with id 3" in line for _, line in logs.current.lines)
    world.step(40)
    (driver,) = world.find_pods("default", spark_role="driver")
    assert driver["status"]["phase"] == "Succeeded"
    world.step(5)
    assert world.find_pods("default", spark_role="executor") == []  # the driver deleted them


# ------------------------------------------------------------------------- scheduler
def test_scheduler_unschedulable_and_node_selector(world: World) -> None:
    world.add_node("node-a", memory="8Gi")
    world.add_node("node-b", memory="8Gi", labels={"pool": "spark"})
    big = plain_pod(
        "big",
        containers=[{"name": "m", "image": "i:1", "resources": {"requests": {"memory": "100Gi"}}}],
    )
    world.client.create(pods("default"), big)
    world.client.create(pods("default"), plain_pod("picky", nodeSelector={"pool": "spark"}))
    world.step(2)
    scheduled = cond(get(world, "big"), "PodScheduled")
    assert (scheduled["status"], scheduled["reason"]) == ("False", "Unschedulable")
    assert scheduled["message"].startswith("0/2 nodes are available: 2 Insufficient memory.")
    events = world.client.list(
        "/api/v1/namespaces/default/events",
        fieldSelector="involvedObject.name=big,reason=FailedScheduling",
    )
    assert events and events[0]["source"]["component"] == "default-scheduler"
    assert get(world, "picky")["spec"]["nodeName"] == "node-b"


def test_scheduler_preempts_lower_priority_pods(world: World) -> None:
    world.add_node("node-a", cpu=2, memory="8Gi")
    low = plain_pod(
        "low", containers=[{"name": "m", "image": "i:1", "resources": {"requests": {"cpu": "2"}}}]
    )
    world.client.create(pods("default"), low)
    world.step(3)
    high = plain_pod(
        "high",
        priority=1000,
        containers=[{"name": "m", "image": "i:1", "resources": {"requests": {"cpu": "2"}}}],
    )
    world.client.create(pods("default"), high)
    world.step(1)
    victim = get(world, "low")
    assert cond(victim, "DisruptionTarget")["reason"] == "PreemptionByScheduler"
    assert victim["metadata"]["deletionTimestamp"]
    assert get(world, "high")["status"]["nominatedNodeName"] == "node-a"
    (event,) = world.client.list(
        "/api/v1/namespaces/default/events", fieldSelector="reason=Preempted"
    )
    assert (
        event["message"]
        == f"Preempted by pod {get(world, 'high')['metadata']['uid']} on node node-a"
    )
    world.step(5)
    assert world.client.get(pod("default", "low")) is None
    assert get(world, "high")["spec"]["nodeName"] == "node-a"


# ---------------------------------------------------------------------- job controller
def test_job_backoff_limit_exceeded(world: World) -> None:
    world.add_node("node-a")
    world.submit(
        AppConfig(
            "flaky",
            launch="job",
            executors=0,
            backoff_limit=1,
            driver_exit_after=5,
            driver_exit_code=1,
        )
    )
    world.step(80)
    (job,) = world.client.list("/apis/batch/v1/namespaces/default/jobs")
    reasons = {c["type"]: c["reason"] for c in job["status"]["conditions"]}
    assert reasons == {"FailureTarget": "BackoffLimitExceeded", "Failed": "BackoffLimitExceeded"}
    assert job["status"]["failed"] == 2
    drivers = world.find_pods("default", spark_role="driver")
    assert len(drivers) == 2
    assert all(
        "batch.kubernetes.io/job-tracking" not in (d["metadata"].get("finalizers") or [])
        for d in drivers
    )
    assert {"job-name", "controller-uid", "batch.kubernetes.io/job-name"} <= set(
        drivers[0]["metadata"]["labels"]
    )


def test_job_pod_failure_policy_ignore_disruption_and_fail_on_exit_code(world: World) -> None:
    world.add_node("node-a")
    policy = {
        "rules": [
            {"action": "FailJob", "onExitCodes": {"operator": "In", "values": [42]}},
            {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]},
        ]
    }
    world.submit(
        AppConfig("guarded", launch="job", executors=0, backoff_limit=0, pod_failure_policy=policy)
    )
    world.step(4)
    (first,) = world.find_pods("default", spark_role="driver")
    world.evict("default", first["metadata"]["name"])
    world.step(3)
    (job,) = world.client.list("/apis/batch/v1/namespaces/default/jobs")
    assert job["spec"]["podReplacementPolicy"] == "Failed"
    assert "failed" not in job["status"]  # the eviction was ignored, not counted
    drivers = world.find_pods("default", spark_role="driver")
    assert len(drivers) == 2  # and replaced
    world.step(3)
    world.exit_container("default", drivers[-1]["metadata"]["name"], 42)
    world.step(3)
    (job,) = world.client.list("/apis/batch/v1/namespaces/default/jobs")
    failed = next(c for c in job["status"]["conditions"] if c["type"] == "Failed")
    assert failed["reason"] == "PodFailurePolicy"
    assert "failed with exit code 42 matching FailJob rule at index 0" in failed["message"]


# ----------------------------------------------------------- node lifecycle and volumes
def test_out_of_service_taint_frees_the_volume_and_attempt_2_runs(world: World) -> None:
    player = scenarios.Player(world, scenarios.load("s3-rwo-volume"))
    player.play_until(450)
    drivers = world.find_pods("default", spark_role="driver")
    assert [objects_phase(d) for d in drivers] == ["Running", "Pending"]
    world.out_of_service("node-a")
    world.step(10)
    drivers = world.find_pods("default", spark_role="driver")
    assert len(drivers) == 1 and drivers[0]["spec"]["nodeName"] != "node-a"
    assert drivers[0]["status"]["phase"] == "Running"
    (va,) = world.client.list("/apis/storage.k8s.io/v1/volumeattachments")
    assert va["spec"]["nodeName"] == drivers[0]["spec"]["nodeName"]


def objects_phase(item: dict[str, Any]) -> str:
    return str(item["status"]["phase"])


def _fingerprint(world: World) -> list[tuple[Any, ...]]:
    out = []
    for item in world.client.list("/api/v1/pods"):
        labels = item["metadata"]["labels"]
        statuses = item["status"].get("containerStatuses") or [{}]
        out.append(
            (
                labels.get("spark-role"),
                labels.get("spark-exec-id"),
                item["spec"].get("nodeName"),
                item["status"]["phase"],
                bool(item["metadata"].get("deletionTimestamp")),
                next(iter(statuses[0].get("state") or {"-": 0})),
                item["metadata"]["creationTimestamp"],
            )
        )
    return sorted(out, key=repr)


def test_scenarios_play_deterministically() -> None:
    prints = []
    for _ in range(2):
        clock = ManualClock(datetime(2026, 3, 1, 3, 0, tzinfo=UTC))
        with EmbeddedApiServer(EmulatorOptions(clock=clock)) as server:
            w = World.for_server(server, clock)
            scenarios.Player(w, scenarios.load("s2-partition")).play()
            prints.append(_fingerprint(w))
            w.close()
    assert prints[0] == prints[1]
    assert len(prints[0]) == 4  # two drivers and attempt 1's two executors, which attempt 2 counts


def test_generator_builds_applications_through_the_api(world: World) -> None:
    from kubectl_spark.sim.generate import generate

    count = generate(
        world.client, world.clock, apps=3, pods_per_app=40, namespaces=2, nodes=4, threads=2
    )
    items = world.client.list("/api/v1/pods")
    assert count == len(items) == 120
    drivers = [p for p in items if p["metadata"]["labels"]["spark-role"] == "driver"]
    assert len(drivers) == 3 and all(d["status"]["phase"] == "Running" for d in drivers)
    reasons = sorted(
        {
            (
                p["status"].get("reason")
                or p["status"]["containerStatuses"][0]["state"]
                .get("terminated", {})
                .get("reason", "run")
            )
            for p in items
        }
    )
    assert reasons == ["Error", "Evicted", "OOMKilled", "run"]


def test_a_tick_reads_again_what_another_client_wrote(world: World) -> None:
    """Quiet ticks keep the last tick's reads (the server's resourceVersion unchanged); a write
    by anyone else (a person's kubectl, a command under test) is seen at the next tick."""
    from kubectl_spark.sim.client import Client

    world.add_node("node-a")
    world.step(3)
    server = world.server  # type: ignore[attr-defined]
    other = Client(server.url, server.token, server.ca_pem)
    try:
        other.create(pods("default"), plain_pod("from-outside"))
        world.step(1)
        assert get(world, "from-outside")["spec"].get("nodeName") == "node-a"  # scheduled
        other.delete(pod("default", "from-outside"), grace=0)
        world.step(1)
        assert world.client.get(pod("default", "from-outside")) is None
    finally:
        other.close()
