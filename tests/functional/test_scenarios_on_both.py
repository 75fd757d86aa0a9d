"""S1 and S2b (S2: test_fence_enforced.py) on the emulator and on a real control plane: the same verdicts from both.

On the real control plane nothing of the simulator stands in for a controller: the node goes
NotReady because its simulated kubelet stops renewing its Lease, the real taint-eviction
controller deletes the driver pod, the real Job controller starts the next attempt, the real
scheduler places it, the real garbage collector removes the executors of a driver pod that is
gone. Each test waits for what a scenario's timeline would have reached, on either backend.
"""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from kubectl_spark.sim import scenario as scenarios
from kubectl_spark.sim.client import SimApiError
from tests.controlplane.launcher import ControlPlaneOptions
from tests.stages import Stage, alerts

pytestmark = pytest.mark.slow
APP = "networkwordcount"
# How long a silent node is seen Ready at most on the test bed: the node lifecycle
# controller's grace, and the period at which it looks (tests/controlplane/launcher.py).
NODE_MONITOR_GRACE = ControlPlaneOptions().node_monitor_grace_seconds
NODE_MONITOR_PERIOD = ControlPlaneOptions().node_monitor_period_seconds


@pytest.fixture
def stage(staged: Any) -> Any:
    return staged  # scenarios by name, staged on the bed and closed after (conftest)


def _running_app(s: Stage) -> str:
    """Submit and wait until the driver and its two executors run; the driver's node."""
    s.do("submit", APP)
    s.until(
        "the driver and its two executors running",
        lambda: (
            len(s.running(spark_role="driver")) == 1 and len(s.running(spark_role="executor")) == 2
        ),
    )
    return str(s.running(spark_role="driver")[0]["spec"]["nodeName"])


def _two_drivers(s: Stage) -> bool:
    return len(s.pods(spark_role="driver")) == 2


def _attempt_2_running(s: Stage) -> None:
    s.until(
        "attempt 2's driver running",
        lambda: (
            _two_drivers(s)
            and any(
                not d["metadata"].get("deletionTimestamp") for d in s.running(spark_role="driver")
            )
        ),
    )


def test_s1_a_lost_node_brings_attempt_2_and_a_zombie(stage, capsys) -> None:
    """S1, and what attempts sharing one app id do: Spark selects its executors by app id, and
    a driver Job's attempts share one, so attempt 2 counts attempt 1's running executors as its
    own and asks for none until they are gone."""
    s = stage("s1-node-shutdown")
    node = _running_app(s)
    (first_driver,) = s.pods(spark_role="driver")
    app_id = first_driver["metadata"]["labels"]["spark-app-selector"]
    s.do("shutdown", node)
    _attempt_2_running(s)
    s.settle(5)
    app = s.app(capsys, APP)
    assert (app["source"], app["state"], len(app["attempts"])) == ("job", "Running", 2)
    first, second = app["attempts"]
    assert (first["state"], first["node"]) == ("Lost", node)
    assert (first["reason"]["code"], first["reason"]["category"]) == ("NodeLost", "cluster")
    assert second["state"] == "Running"
    assert "ZombieDriver" in alerts(app)
    # One app id, two drivers: the executors each counts are the same pods.
    drivers = _drivers_by_age(s)
    assert [d["metadata"]["labels"]["spark-app-selector"] for d in drivers] == [app_id, app_id]
    theirs = [
        p
        for p in s.running(spark_role="executor")
        if p["spec"].get("nodeName") != node and _owned_by(p, drivers[0])
    ]
    mine = [p for p in s.pods(spark_role="executor") if _owned_by(p, drivers[1])]
    assert theirs, "attempt 1's executors off the lost node still run"
    assert len(mine) + len(theirs) == 2  # the target, counted over both attempts' executors
    assert len(mine) < 2 and len(second["executors"]) == len(mine)
    # Issue 23: attempt 1 may still run (its node is only unreachable): no end, and its
    # executors on reachable nodes still serve it, not lost; the shared app id is the alert.
    assert first["endedAt"] is None
    off_node = [e for e in first["executors"] if e["node"] != node]
    assert off_node and all(e["reason"] is None for e in off_node), off_node
    assert alerts(app)["SharedAppId"] == [1, 2]
    s.do("heal", node)
    s.until("attempt 1's pod gone", lambda: len(s.pods(spark_role="driver")) == 1)
    s.until("attempt 1's executors collected", lambda: _orphans(s) == 0)
    s.until("attempt 2's two executors", lambda: _attempt_executors(s, 1) == 2)
    app = s.app(capsys, APP)
    assert [a["state"] for a in app["attempts"]] == ["Lost", "Running"]
    assert app["attempts"][0]["reason"]["code"] == "NodeLost"
    assert not alerts(app)
    code, out, err = s.cli(capsys, "history", APP)
    assert code == 0, err
    assert "NodeNotReady" in out and "TaintManagerEviction" in out


def test_healthy_nodes_stay_ready_while_the_test_is_busy_elsewhere(stage) -> None:
    """A kubelet renews its Lease whatever else it does: on the real control plane the
    simulator's Leases are kept on their own thread (sim/leases.py), so a test that reads or
    runs a command for longer than the node-monitor grace between two ticks loses no node.
    Without it this one saw every node NotReady and its pods evicted (S1 failed so in CI)."""
    s = stage("s1-node-shutdown")
    _running_app(s)
    if s.kind == "real":  # real time passes with no tick; the emulator's clock stands still
        time.sleep(NODE_MONITOR_GRACE + NODE_MONITOR_PERIOD + 2)
    lines = s.state().splitlines()
    nodes = [line for line in lines if line.startswith("node ")]
    assert nodes and all("Ready=True taints=[]" in line for line in nodes), lines
    assert len(s.running(spark_role="executor")) == 2, lines


def test_s2b_a_blocked_job_and_the_advice_that_unblocks_it(stage, capsys) -> None:
    """podReplacementPolicy Failed: the Job waits for attempt 1 to be terminal. A plain grace-0
    delete does not make it so (the job-tracking finalizer keeps a non-terminal pod, Terminating);
    the advice names the out-of-service taint, after which pod GC marks it Failed."""
    s = stage("s2b-partition-replacement-blocked")
    node = _running_app(s)
    s.do("shutdown", node)
    s.until(
        "attempt 1 deleted by the taint eviction",
        lambda: all(d["metadata"].get("deletionTimestamp") for d in s.pods(spark_role="driver")),
    )
    app = s.app(capsys, APP)
    assert len(app["attempts"]) == 1
    blocked = next(a for a in app["alerts"] if a["type"] == "ReplacementBlocked")
    advice = f"kubectl spark force-kill {APP}/1 --out-of-service"
    assert advice in blocked["message"], blocked["message"]
    # Its node is unreachable: a kill needs the person to say it is down (test_action_safety).
    code, out, err = s.cli(capsys, "force-kill", f"{APP}/1", "--yes")
    assert code == 1 and out == "" and "--node-down" in err, out + err
    code, out, err = s.cli(capsys, "force-kill", f"{APP}/1", "--node-down", "--yes")  # old advice
    assert code == 0, out + err
    s.settle(5)
    (driver,) = s.pods(spark_role="driver")
    assert driver["metadata"]["deletionTimestamp"]
    assert driver["metadata"]["finalizers"] == ["batch.kubernetes.io/job-tracking"]
    assert "ReplacementBlocked" in alerts(s.app(capsys, APP))
    # The taint is written with the node's resourceVersion as read (test_action_safety checks
    # the plan): a node changed since then is refused, so no taint set meanwhile is lost.
    stale = s.world.client.get(f"/api/v1/nodes/{node}")["metadata"]["resourceVersion"]
    s.world.client.patch(f"/api/v1/nodes/{node}", {"metadata": {"labels": {"touched": "yes"}}})
    with pytest.raises(SimApiError) as refused:
        s.world.client.patch(
            f"/api/v1/nodes/{node}",
            {"metadata": {"resourceVersion": stale}, "spec": {"taints": []}},
        )
    assert refused.value.status == 409
    code, out, err = s.cli(capsys, "force-kill", f"{APP}/1", "--out-of-service", "--yes")
    assert code == 0, out + err
    first = driver["metadata"]["uid"]
    s.until(
        "attempt 2 running",
        lambda: any(d["metadata"]["uid"] != first for d in s.running(spark_role="driver")),
    )
    app = s.app(capsys, APP)
    assert app["attempts"][-1]["state"] == "Running"
    assert "ReplacementBlocked" not in alerts(app)
    job = s.world.client.list("/apis/batch/v1/namespaces/default/jobs")[0]
    assert job["status"].get("failed") == 1  # pod GC marked attempt 1 Failed: counted once
    # Issue 23: the killed zombie stays in the answer, with its node loss and the kill.
    assert len(app["attempts"]) == 2 and app["attempts"][0]["reason"]["code"] == "NodeLost"
    code, out, err = s.cli(capsys, "history", APP)
    assert code == 0 and "ForceKilled" in out and "<unknown>" not in out, out + err


def test_s6_a_driver_restarted_in_place_is_one_attempt(stage, capsys) -> None:
    """OOM-killed twice under restartPolicy OnFailure: one pod, one attempt, two restarts."""
    s = stage("s6-driver-restarts")
    name = "restarting-driver"
    s.do("submit", name)

    def driver_restarts(count: int) -> bool:
        running = s.running(spark_role="driver")
        statuses = [c for d in running for c in d["status"].get("containerStatuses") or []]
        return any(
            c.get("restartCount") == count and (c.get("state") or {}).get("running")
            for c in statuses
        )

    s.until("the driver running", lambda: driver_restarts(0))
    for count in (1, 2):
        s.do("oom_kill", name)
        s.until(f"the driver running after {count} restart(s)", lambda c=count: driver_restarts(c))
    code, out, err = s.cli(capsys, "ls", "-A", "-o", "json")
    assert code == 0, err
    app = next(a for a in json.loads(out)["items"] if a["name"] == name)
    assert app["attempts"][0]["restarts"] == 2 and len(app["attempts"]) == 1
    restarts = [h for h in app["history"] if h["kind"] == "ContainerRestarted"]
    assert len(restarts) == 2
    assert "OOMKilled" in restarts[-1]["message"]


def test_s4_executor_losses_of_every_kind(stage, capsys) -> None:
    """S4's losses, one after another, each awaited; on both backends the same reasons.

    Preemption is left out here: on the real control plane only the real scheduler preempts
    (the simulator's preempt_pod stands in for it on the emulator, where test_read_commands
    covers it). The decommissioned executor exits before node-e is cut off, so that it is not
    the one a real scheduler placed there.
    """
    s = stage("s4-executor-losses")
    s.do("submit", "losses")
    s.do("submit", "restarts")

    def pods(app: str) -> list[dict[str, Any]]:
        return s.pods(spark_app_name=app, spark_role="executor")

    def running(app: str) -> list[dict[str, Any]]:
        return s.running(spark_app_name=app, spark_role="executor")

    s.until("9 executors running and 1 that fits no node", lambda: len(running("losses")) == 9)
    s.until("the other application's executor running", lambda: len(running("restarts")) == 1)
    s.do("scale", {"app": "losses", "executors": 9})
    s.until("the pending executor deleted", lambda: len(pods("losses")) == 9)

    def ended(exec_id: str) -> bool:
        return not any(
            p["metadata"]["labels"].get("spark-exec-id") == exec_id
            and p["status"].get("phase") not in ("Failed", "Succeeded")
            and not p["metadata"].get("deletionTimestamp")
            for p in pods("losses")
        )

    # The faults go to executors off node-e: the taint eviction deletes every pod of a node cut
    # off, a failed one too (tainteviction checks no phase), and a real scheduler places freely.
    targets = sorted(
        (p["metadata"]["labels"]["spark-exec-id"] for p in running("losses")
         if p["spec"].get("nodeName") != "node-e"),
        key=int,
    )  # fmt: skip
    faults: tuple[tuple[str, dict[str, Any], tuple[str, str, bool] | None], ...] = (
        ("oom_kill", {}, ("OOMKilled", "app", True)),
        ("exit", {"code": 137}, ("PossibleOOM", "app", True)),
        ("exit", {"code": 52}, ("JvmOutOfMemory", "app", True)),
        ("exit", {"code": 50}, ("UncaughtException", "app", True)),
        ("exit", {"code": 56}, ("DriverUnreachable", "unknown", True)),
        ("evict", {}, ("Evicted", "app", True)),  # it used more than its request
        ("delete", {}, None),
        ("exit", {"code": 0}, ("Completed", "app", False)),
    )
    assert len(targets) >= len(faults), targets
    expected = {}
    for exec_id, (action, args, reason) in zip(targets, faults, strict=False):
        s.do(action, {"app": "losses", "exec": int(exec_id)}, **args)
        s.until(f"executor {exec_id} ended ({action})", lambda e=exec_id: ended(e))
        if reason is not None:
            expected[exec_id] = reason
    s.do("oom_kill", {"app": "restarts", "exec": 1})

    def restarted() -> bool:
        statuses = [c for p in running("restarts") for c in p["status"]["containerStatuses"]]
        return any(c.get("restartCount") == 1 and c["state"].get("running") for c in statuses)

    s.until("the restarts executor running again", restarted)
    on_e = [p["metadata"]["labels"]["spark-exec-id"] for p in running("losses")
            if p["spec"].get("nodeName") == "node-e"]  # fmt: skip
    s.do("partition", "node-e")
    s.until("node-e's executors deleted", lambda: all(ended(e) for e in on_e))
    code, out, err = s.cli(capsys, "describe", "losses", "-o", "json")
    assert code == 0, err
    (attempt,) = json.loads(out)["attempts"]
    by_id = {e["id"]: e["reason"] for e in attempt["executors"]}
    for exec_id, (loss_code, category, counts) in expected.items():
        assert exec_id in by_id, (exec_id, sorted(by_id), s.state())
        got = by_id[exec_id]
        assert (got["code"], got["category"], got["countsAsFailure"]) == (
            loss_code,
            category,
            counts,
        )
    possible = by_id[targets[1]]
    assert possible["exitCode"] == 137 and "possible container OOM" in possible["message"]
    if on_e:  # a real scheduler may have put none there
        lost = [by_id[e] for e in on_e]
        assert all(r["code"] == "NodeLost" and r["category"] == "cluster" for r in lost), lost
    code, out, err = s.cli(capsys, "ls", "-A", "-o", "json")
    assert code == 0, err
    restarts = next(a for a in json.loads(out)["items"] if a["name"] == "restarts")
    assert restarts["attempts"][0]["executors"][0]["restarts"] == 1


def test_s5_operator_retries(stage, capsys) -> None:
    """S5 with its timers shortened (the driver fails 3 s after it starts, the operator waits
    1 s to rerun): the spark-operator's three attempts under one driver pod name."""
    doc = {
        "name": "s5-fast",
        "title": "S5, fast",
        "description": "S5 with short timers",
        "nodes": [{"name": "node-a"}, {"name": "node-b"}],
        "apps": [
            {
                "name": "pi",
                "launch": "operator",
                "executors": 2,
                "driver_exit_after": 3,
                "driver_exit_code": 1,
                "restart_policy": {
                    "type": "OnFailure",
                    "onFailureRetries": 2,
                    "onFailureRetryInterval": 1,
                },
            }
        ],
        "steps": [{"at": 0, "submit": "pi"}],
    }
    s = stage(scenarios.parse(doc, "s5-fast"))
    s.do("submit", "pi")
    path = "/apis/sparkoperator.k8s.io/v1beta2/namespaces/default/sparkapplications/pi"

    def state() -> str:
        return _operator_state(s, path)

    s.until("the application FAILED after its retries", lambda: state() == "FAILED")
    code, out, err = s.cli(capsys, "ls", "-A", "-o", "json")
    assert code == 0, err
    app = next(a for a in json.loads(out)["items"] if a["name"] == "pi")
    assert (app["source"], app["state"], len(app["attempts"])) == ("sparkapplication", "Failed", 3)
    assert [a["driverPod"] for a in app["attempts"]] == ["pi-driver"] * 3
    last = app["attempts"][-1]
    assert (last["reason"]["code"], last["reason"]["exitCode"]) == ("ExitCode", 1)
    # Each attempt ended once. Their order is not asserted here: with these timers two ends can
    # share a second, and the history orders by whole-second timestamps (test_read_commands
    # checks the order at S5's own pace).
    ended = [h["attempt"] for h in app["history"] if h["kind"] == "AttemptEnded"]
    assert sorted(ended) == [1, 2, 3]


# ------------------------------------------------------------------------------ helpers
def _operator_state(s: Stage, path: str) -> str:
    """The SparkApplication's ``status.applicationState.state`` as the operator wrote it."""
    app = s.world.client.get(path) or {}
    return str(((app.get("status") or {}).get("applicationState") or {}).get("state"))


def _drivers_by_age(s: Stage) -> list[dict[str, Any]]:
    return sorted(
        s.pods(spark_role="driver"),
        key=lambda p: (p["metadata"]["creationTimestamp"], p["metadata"]["name"]),
    )


def _owned_by(item: dict[str, Any], owner: dict[str, Any]) -> bool:
    uid = owner["metadata"]["uid"]
    return any(r.get("uid") == uid for r in item["metadata"].get("ownerReferences") or [])


def _orphans(s: Stage) -> int:
    """Executor pods whose driver pod is gone (the garbage collector's to remove)."""
    drivers = {d["metadata"]["uid"] for d in s.pods(spark_role="driver")}
    return sum(
        1
        for p in s.pods(spark_role="executor")
        if not any(r.get("uid") in drivers for r in p["metadata"].get("ownerReferences") or [])
    )


def _attempt_executors(s: Stage, number: int) -> int:
    """Running executors owned by the ``number``-th driver pod (oldest first)."""
    drivers = _drivers_by_age(s)
    if len(drivers) < number:
        return 0
    owner = drivers[number - 1]["metadata"]["uid"]
    return sum(
        1
        for p in s.running(spark_role="executor")
        if any(r.get("uid") == owner for r in p["metadata"].get("ownerReferences") or [])
    )


def _executors_on(s: Stage, node: str, *, running: bool) -> int:
    pods = s.running(spark_role="executor") if running else s.pods(spark_role="executor")
    return sum(1 for p in pods if p["spec"].get("nodeName") == node)


def test_resubmit_suspends_and_resumes_a_running_spark_application(stage, capsys) -> None:
    """Issue 24: the spark-operator re-runs on suspend/resume, with no spec change (which would
    reset its attempt counters); the plan waits for SUSPENDED, then for a new submissionID.
    The world runs on beside the command, as a cluster would."""
    import threading

    doc = {
        "name": "operator-resubmit",
        "title": "a running SparkApplication",
        "description": "resubmitted while it runs",
        "nodes": [{"name": "node-a"}, {"name": "node-b"}],
        "apps": [{"name": "pi", "launch": "operator", "executors": 1}],
        "steps": [{"at": 0, "submit": "pi"}],
    }
    s = stage(scenarios.parse(doc, "operator-resubmit"))
    s.do("submit", "pi")
    path = "/apis/sparkoperator.k8s.io/v1beta2/namespaces/default/sparkapplications/pi"

    def state() -> str:
        return _operator_state(s, path)

    s.until("the application RUNNING", lambda: state() == "RUNNING")
    before = s.world.client.get(path)
    stop = threading.Event()

    def cluster_runs() -> None:
        while not stop.is_set():
            if s.kind == "real":
                s.world.tick()
                stop.wait(0.2)
            else:
                s.world.step(1)
                stop.wait(0.02)

    runner = threading.Thread(target=cluster_runs, daemon=True)
    runner.start()
    try:
        code, out, err = s.cli(capsys, "resubmit", "pi", "--force", "--yes")
    finally:
        stop.set()
        runner.join()
    assert code == 0, out + err
    assert "done: wait sparkapplications.sparkoperator.k8s.io default/pi" in out
    after = s.world.client.get(path)
    assert after["status"]["submissionID"] != before["status"]["submissionID"]
    assert after["spec"].get("suspend") is False
    assert after["spec"].get("sparkConf") == before["spec"].get("sparkConf")  # no spec change
    assert after["status"]["executionAttempts"] == before["status"]["executionAttempts"] + 1
    reasons = {
        e["reason"]
        for e in s.world.client.list("/api/v1/namespaces/default/events")
        if e["involvedObject"]["name"] == "pi"
    }
    assert {"SparkApplicationSuspended", "SparkApplicationResuming", "Resubmitted"} <= reasons
