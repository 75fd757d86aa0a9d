"""Issue 23, "Failure counting" and "Exit codes and causes": what Spark really counts and why.

Each test names one bullet of the issue; each fails without its fix. Facts from Spark's sources:
``ExecutorPodsSnapshot.toState`` (PodFailed / PodDeleted, checkAllContainers),
``ExecutorPodsAllocator`` (``registerExecutorFailure`` for every newly seen PodFailed),
``HeartbeatReceiver`` (the driver-side expiry), ``SparkExitCode`` and ``ExecutorExitCode``.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from kubectl_spark.app.describe import text as describe_text
from kubectl_spark.core.linking import link_executor_failures
from kubectl_spark.core.losses import classify
from kubectl_spark.core.model import App, Attempt, Executor, Reason
from kubectl_spark.core.sparkview import reason_from_spark, with_spark_view
from kubectl_spark.knowledge.times import parse
from tests.core_pods import pod_context, typed_snapshot
from tests.loss_pods import pod

ONE_AM = datetime(2026, 1, 1, 1, tzinfo=UTC)


def executor(item: dict[str, Any], **ctx: Any) -> Reason:
    reason = classify(pod_context(item, "executor", **ctx))
    assert reason is not None
    return reason


def test_kubelet_admission_rejection_is_counted_by_spark_and_was_scheduled() -> None:
    rejected = pod("Failed", reason="OutOfcpu", message="Node didn't have enough resource: cpu")
    rejected["status"]["containerStatuses"][0]["state"] = {"waiting": {"reason": "Pending"}}
    reason = executor(rejected)
    assert reason.code == "AdmissionRejected"  # not Unschedulable: it was scheduled
    assert reason.category == "cluster"
    assert reason.counts_toward_max_failures and reason.counts_as_failure
    assert "scheduled, then rejected" in reason.message
    assert reason.to_json()["countsTowardMaxNumFailures"] is True


def test_heartbeat_expiry_is_sparks_cause_not_a_deletion_by_the_driver() -> None:
    deleted = pod("Running", deleting=True, labels={"spark-exec-id": "3"})
    mine = executor(deleted)
    assert mine.code == "DeletedByDriver"
    attempt = Attempt(
        1, "d", "u", "n", "Running", "Running", None, None, None, 0, False, None,
        (Executor("3", "app-exec-3", "u3", "n", "Running", "Terminating", 0, mine),),
    )  # fmt: skip
    view = {
        "executors": [
            {
                "id": "3",
                "isActive": False,
                "removeReason": "Executor heartbeat timed out after 130000 ms",
                "removeTime": "2026-01-01T00:10:00Z",
            }
        ]
    }
    reason = with_spark_view(attempt, view).executors[0].reason
    assert reason is not None
    assert reason.code == "HeartbeatTimeout"
    assert reason.counts_as_failure  # ExecutorProcessLost: its tasks count
    assert not reason.counts_toward_max_failures  # the pod was deleted: never PodFailed


def test_spark4_sidecar_exit_fails_the_executor_and_is_counted() -> None:
    item = pod("Running", labels={"spark-version": "4.0.1"})
    item["status"]["containerStatuses"].append(
        {"name": "log-shipper", "state": {"terminated": {"exitCode": 2, "reason": "Error"}}}
    )
    reason = executor(item)
    assert reason.code == "SidecarFailed" and "log-shipper" in reason.message
    assert reason.counts_toward_max_failures and reason.counts_as_failure
    # Spark then deletes it: still the sidecar, not "DeletedByDriver".
    item["metadata"]["deletionTimestamp"] = "2026-01-01T00:10:00Z"
    item["status"]["containerStatuses"][1]["state"]["terminated"]["finishedAt"] = (
        "2026-01-01T00:05:00Z"
    )
    again = executor(item)
    assert again.code == "SidecarFailed" and again.counts_toward_max_failures
    # Spark 3 checked only its own container by default: the executor runs on.
    item3 = pod("Running", labels={"spark-version": "3.5.3"})
    item3["status"]["containerStatuses"].append(
        {"name": "log-shipper", "state": {"terminated": {"exitCode": 2}}}
    )
    assert classify(pod_context(item3, "executor")) is None


@pytest.mark.parametrize(
    ("code", "expected", "category"),
    [
        (11, "ExecutorFailuresExceeded", "app"),
        # SparkExitCode.UNCAUGHT_EXCEPTION_TWICE, ERROR_COMMAND_NOT_FOUND; ExecutorExitCode
        # 53-55 (the 4.1.1 jars' SparkExitCode$ and ExecutorExitCode$, read with javap).
        (51, "UncaughtException", "app"),
        (53, "LocalDirFailure", "cluster"),
        (54, "ExternalBlockStoreFailure", "unknown"),
        (55, "ExternalBlockStoreFailure", "unknown"),
        (127, "CommandNotFound", "app"),
        # HEARTBEAT_FAILURE: a driver stuck in GC is as likely as the network (issue 50).
        (56, "DriverUnreachable", "unknown"),
        (57, "TaskReaperKill", "app"),
        (58, "BlockManagerLost", "unknown"),
        (101, "ClassNotFound", "app"),
        (124, "DriverTimeout", "user"),
    ],
)
def test_exit_codes_spark_names_elsewhere(code: int, expected: str, category: str) -> None:
    reason = executor(pod("Failed", terminated={"exitCode": code, "reason": "Error"}))
    assert (reason.code, reason.category) == (expected, category)
    assert "unexpected" not in reason.message


def _lost(exec_id: str, code: str, category: str) -> Executor:
    reason = Reason(
        category=category,
        code=code,  # type: ignore[arg-type]
        exit_code=None,
        counts_as_failure=True,
        message="m",
        counts_toward_max_failures=True,
    )
    return Executor(exec_id, f"app-exec-{exec_id}", "", None, "Failed", "Failed", 0, reason)


def test_driver_exit_11_is_linked_to_the_executor_failures_spark_counted() -> None:
    driver = executor(pod("Failed", terminated={"exitCode": 11, "reason": "Error"}))
    attempt = Attempt(
        1, "d", "u", "n", "Failed", "Failed", None, None, None, 0, False, driver,
        (_lost("1", "Evicted", "cluster"), _lost("2", "NodeLost", "cluster"),
         _lost("3", "OOMKilled", "app")),
    )  # fmt: skip
    linked = link_executor_failures(attempt).reason
    assert linked is not None and linked.code == "ExecutorFailuresExceeded"
    assert linked.category == "cluster"  # the losses it counted were mostly the cluster's
    assert "3 executor failure(s) counted" in linked.message
    assert any("executor 1 (app-exec-1): Evicted" in e for e in linked.evidence)


def test_executor_exiting_after_its_driver_went_away_is_owner_gone() -> None:
    owner = Reason(
        category="cluster", code="NodeLost", exit_code=None, counts_as_failure=False, message="x"
    )
    after = pod(
        "Failed",
        terminated={"exitCode": 1, "reason": "Error", "finishedAt": "2026-01-01T00:05:30Z"},
    )
    ctx = {"owner_gone": True, "owner_attempt": 1, "owner_reason": owner}
    reason = executor(after, owner_ended_at="2026-01-01T00:05:00Z", **ctx)
    assert (reason.code, reason.category, reason.counts_as_failure) == (
        "OwnerGone",
        "cluster",
        False,
    )
    assert not reason.counts_toward_max_failures  # no driver was left to count it
    before = pod(
        "Failed",
        terminated={"exitCode": 1, "reason": "Error", "finishedAt": "2026-01-01T00:01:00Z"},
    )
    own = executor(before, owner_ended_at="2026-01-01T00:05:00Z", **ctx)
    assert (own.code, own.category) == ("ExitCode", "app")  # it failed first: its own exit


@pytest.mark.parametrize(
    ("message", "category"),
    [
        (
            'Container spark-kubernetes-executor exceeded its local ephemeral storage limit "1Gi". ',
            "app",
        ),
        ("Pod ephemeral local storage usage exceeds the total limit of containers 2Gi. ", "app"),
        ('Usage of EmptyDir volume "spark-local-dir-1" exceeds the limit "10Gi". ', "app"),
        (
            (
                "The node was low on resource: memory. Threshold quantity: 100Mi, available: "
                "80Mi. Container spark-kubernetes-executor was using 3Gi, which exceeds its "
                "request of 2Gi. "
            ),
            "app",
        ),
        (
            (
                "The node was low on resource: memory. Threshold quantity: 100Mi, available: 91244Ki. "
                "Container batch was using 1843Mi, request is 256Mi, has larger consumption of memory."
            ),
            "app",
        ),
        ("The node was low on resource: ephemeral-storage. ", "cluster"),
        ("The node had condition: [DiskPressure]. ", "cluster"),
    ],
)
def test_eviction_over_the_pods_own_limits_is_the_apps(message: str, category: str) -> None:
    reason = executor(pod("Failed", reason="Evicted", message=message))
    assert (reason.code, reason.category) == ("Evicted", category)
    assert reason.counts_toward_max_failures  # phase Failed, no deletion: PodFailed


@pytest.mark.parametrize(
    ("remove_reason", "category"),
    [
        ("Executor decommission: Rolling via ExecutorRollPlugin (TOTAL_DURATION)", "driver"),
        ("Executor decommission: spark scale down", "driver"),
        ("Executor decommission: worker decommissioned", "cluster"),
    ],
)
def test_decommissioning_by_the_driver_is_the_drivers_decision(
    remove_reason: str, category: str
) -> None:
    reason = reason_from_spark({"removeReason": remove_reason, "removeTime": "t"})
    assert (reason.code, reason.category) == ("Decommissioned", category)


def test_spark_exec_inactive_means_kept_not_decommissioned() -> None:
    running = executor(pod("Running", labels={"spark-exec-inactive": "true"}))
    assert running.code == "DeletedByDriver" and "deleteOnTermination=false" in running.message
    done = executor(
        pod("Succeeded", terminated={"exitCode": 0}, labels={"spark-exec-inactive": "true"})
    )
    assert done.code == "Completed"


def test_liveness_probe_kill_is_not_a_possible_oom() -> None:
    item = pod("Failed", terminated={"exitCode": 137, "reason": "Error"})
    events = [
        {"reason": "Unhealthy", "message": "Liveness probe failed: connection refused"},
        {
            "reason": "Killing",
            "message": "Container spark failed liveness probe, will be restarted",
        },
    ]
    reason = executor(item, events=events)
    assert reason.code == "LivenessProbe"  # not PossibleOOM
    assert any("Liveness probe failed" in e for e in reason.evidence)
    assert executor(item).code == "PossibleOOM"  # without the Events it may be an OOM


def test_preempted_executor_whose_pod_is_gone_is_told_by_its_event() -> None:
    attempt = Attempt(
        1, "d", "u", "n", "Running", "Running", None, None, None, 0, False, None,
        (Executor("1", "app-exec-1", "u1", "n", "Running", "Running", 0, None),),
    )  # fmt: skip
    view = {
        "executors": [
            {
                "id": "3",
                "isActive": False,
                "removeReason": "The executor with id 3 was deleted by a user or the framework.",
            }
        ]
    }
    events = {"app-exec-3": [{"reason": "Preempted", "message": "Preempted by pod x on node n"}]}
    gone = with_spark_view(attempt, view, lambda name: events.get(name, [])).executors[-1]
    assert gone.reason is not None and gone.reason.code == "Preempted"
    assert gone.reason.category == "cluster"
    unexplained = with_spark_view(attempt, view).executors[-1]
    assert unexplained.reason is not None and unexplained.reason.code == "Deleted"


def test_deleted_executor_exiting_143_is_the_deletion_not_the_app() -> None:
    item = pod(
        "Failed",
        terminated={"exitCode": 143, "reason": "Error", "finishedAt": "2026-01-01T00:01:00Z"},
        deleting=True,
    )  # finishedAt before deletionTimestamp (clocks differ): still the deletion's SIGTERM
    reason = executor(item)
    assert reason.code == "DeletedByDriver" and reason.category != "app"
    assert not reason.counts_toward_max_failures


def test_driver_that_exited_0_is_not_called_the_applications_fault() -> None:
    driver = classify(
        pod_context(pod("Succeeded", terminated={"exitCode": 0, "reason": "Completed"}), "driver")
    )
    assert driver is not None and driver.code == "Completed"
    attempt = Attempt(
        1, "d", "u", "n", "Succeeded", "Succeeded", "2026-01-01T00:00:00Z", None, None, 0, False,
        driver,
    )  # fmt: skip
    app = App("ns", "pi", "spark-1", "pod", "Succeeded", "2026-01-01T00:00:00Z", (), (attempt,))
    shown = describe_text(app, parse("2026-01-01T01:00:00Z"), [])  # type: ignore[arg-type]
    assert "application's fault" not in shown and "not a failure" in shown


def test_force_kill_of_a_healthy_attempt_reads_a_users_action() -> None:
    from kubectl_spark.core.analyze import analyze

    executor_pod = pod("Running", labels={"spark-exec-id": "1", "spark-app-selector": "spark-1"})
    executor_pod["metadata"].update(
        name="pi-exec-1",
        uid="e1",
        creationTimestamp="2026-01-01T00:00:00Z",
        ownerReferences=[{"kind": "Pod", "name": "pi-driver", "uid": "d1", "controller": True}],
    )
    killed = {
        "metadata": {"name": "ev", "namespace": "ns", "uid": "ev1"},
        "involvedObject": {"kind": "Pod", "name": "pi-driver", "namespace": "ns", "uid": "d1"},
        "reason": "ForceKilled",
        "message": "attempt 1 force-killed by alice",
        "type": "Warning",
    }
    snapshot = typed_snapshot(pods=[executor_pod], events=[killed], now=ONE_AM)
    reason = analyze(snapshot).apps[0].attempts[0].reason
    assert reason is not None
    assert (reason.code, reason.category) == ("DeletedByUser", "user")
    # A zombie on a lost node, force-killed: the node loss is the loss, the kill its evidence.
    lost = {**killed, "metadata": {"name": "ev2", "namespace": "ns", "uid": "ev2"},
            "reason": "NodeNotReady", "message": "Node is not ready"}  # fmt: skip
    snapshot = typed_snapshot(pods=[executor_pod], events=[lost, killed], now=ONE_AM)
    reason = analyze(snapshot).apps[0].attempts[0].reason
    assert reason is not None and (reason.code, reason.category) == ("NodeLost", "cluster")
    assert any("ForceKilled" in e for e in reason.evidence)
