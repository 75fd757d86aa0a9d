"""Loss reasons, one case per row: what Kubernetes shows → code, category, countsAsFailure."""

from __future__ import annotations

from typing import Any

import pytest

from kubectl_spark.core.losses import classify
from kubectl_spark.core.pod import Pod
from kubectl_spark.core.reasons import NodeHealth
from kubectl_spark.knowledge.exitcodes import describe_exit
from kubectl_spark.knowledge.times import human_duration
from tests.core_pods import pod_context, restart_reasons_of, typed_snapshot
from tests.loss_pods import pod

UNREACHABLE = NodeHealth(False, "node node-a: Ready=Unknown (Kubelet stopped posting node status.)")

CASES = [
    (
        "container OOM kill",
        pod("Failed", terminated={"exitCode": 137, "reason": "OOMKilled"}),
        {},
        ("OOMKilled", "app", True),
    ),
    (
        "137 with Error (system OOM)",
        pod("Failed", terminated={"exitCode": 137, "reason": "Error"}),
        {},
        ("PossibleOOM", "app", True),
    ),
    (
        "JVM OOM",
        pod("Failed", terminated={"exitCode": 52, "reason": "Error"}),
        {},
        ("JvmOutOfMemory", "app", True),
    ),
    (
        "uncaught exception",
        pod("Failed", terminated={"exitCode": 50, "reason": "Error"}),
        {},
        ("UncaughtException", "app", True),
    ),
    (
        "heartbeat failure: the executor could not reach its driver",
        pod("Failed", terminated={"exitCode": 56, "reason": "Error"}),
        {},
        ("DriverUnreachable", "unknown", True),
    ),
    (
        "other exit code",
        pod("Failed", terminated={"exitCode": 3, "reason": "Error"}),
        {},
        ("ExitCode", "app", True),
    ),
    (
        "start error",
        pod("Failed", terminated={"exitCode": 128, "reason": "StartError"}),
        {},
        ("ExitCode", "app", True),
    ),
    (
        "node-pressure eviction",
        pod(
            "Failed",
            reason="Evicted",
            message="The node was low on resource: memory. ",
            terminated={"exitCode": 137, "reason": "Error"},
            disruption="TerminationByKubelet",
        ),
        {},
        ("Evicted", "cluster", True),
    ),
    (
        "preemption",
        pod(disruption="PreemptionByScheduler", deleting=True),
        {},
        ("Preempted", "cluster", False),
    ),
    (
        "taint manager, node unreachable",
        pod(disruption="DeletionByTaintManager", deleting=True),
        {"node": UNREACHABLE},
        ("NodeLost", "cluster", False),
    ),
    (
        "taint manager, node fine",
        pod(disruption="DeletionByTaintManager", deleting=True),
        {"node": NodeHealth(True)},
        ("TaintEviction", "cluster", False),
    ),
    (
        "eviction API",
        pod(disruption="EvictionByEvictionAPI", deleting=True),
        {},
        ("ApiEviction", "cluster", False),
    ),
    ("PodGC", pod("Failed", disruption="DeletionByPodGC"), {}, ("NodeLost", "cluster", True)),
    ("on an unreachable node", pod(), {"node": UNREACHABLE}, ("NodeLost", "cluster", False)),
    (
        # pkg/kubelet/kubelet_pods.go convertToAPIContainerStatuses: a runtime or kubelet
        # restart, or a reboot, on a node that is Ready again: the state was lost, not the node.
        "ContainerStatusUnknown",
        pod("Failed", terminated={"exitCode": 137, "reason": "ContainerStatusUnknown"}),
        {},
        ("ContainerStateLost", "cluster", True),
    ),
    (
        "ContainerStatusUnknown on a node still unreachable",
        pod("Failed", terminated={"exitCode": 137, "reason": "ContainerStatusUnknown"}),
        {"node": UNREACHABLE},
        ("NodeLost", "cluster", True),
    ),
    (
        "node shutdown",
        pod(
            "Failed",
            reason="Terminated",
            message="Pod was terminated in response to imminent node shutdown.",
        ),
        {},
        ("NodeShutdown", "cluster", True),
    ),
    ("deleted by the driver", pod(deleting=True), {}, ("DeletedByDriver", "driver", False)),
    (
        "SIGTERM while deleted by the driver",
        pod(deleting=True, terminated={"exitCode": 143, "reason": "Error"}),
        {},
        ("DeletedByDriver", "driver", False),
    ),
    (
        "deleted by a kubectl spark action",
        pod(deleting=True, annotations={"kubectl-spark.io/action": "force-kill"}),
        {},
        ("DeletedByUser", "user", False),
    ),
    (
        "owner attempt lost",
        pod(deleting=True),
        {"owner_gone": True, "owner_attempt": 1},
        ("OwnerGone", "driver", False),
    ),
    (
        "pending, unschedulable, deleted",
        pod(
            "Pending",
            waiting={"reason": "ContainerCreating"},
            deleting=True,
            conditions=[
                {
                    "type": "PodScheduled",
                    "status": "False",
                    "reason": "Unschedulable",
                    "message": "0/3 nodes are available",
                }
            ],
        ),
        {},
        # Nothing ran, nothing was lost: a pending executor deleted is the driver giving back a
        # request (ExecutorPodsAllocator; issue 50, point 5). Why it waited stays in the message.
        ("DeletedByDriver", "driver", False),
    ),
    (
        "image pull failure, deleted",
        pod(
            "Pending", waiting={"reason": "ImagePullBackOff", "message": "Back-off"}, deleting=True
        ),
        {},
        ("DeletedByDriver", "driver", False),
    ),
    (
        "config error, deleted",
        pod("Pending", waiting={"reason": "CreateContainerConfigError"}, deleting=True),
        {},
        ("DeletedByDriver", "driver", False),
    ),
    (
        "completed and kept by deleteOnTermination=false (not decommissioned)",
        pod(
            "Succeeded",
            terminated={"exitCode": 0, "reason": "Completed"},
            labels={"spark-exec-inactive": "true"},
        ),
        {},
        ("Completed", "app", False),
    ),
    (
        "failed and kept inactive",
        pod(
            "Failed",
            terminated={"exitCode": 137, "reason": "OOMKilled"},
            labels={"spark-exec-inactive": "true"},
        ),
        {},
        ("OOMKilled", "app", True),
    ),
    (
        "deadline",
        pod("Failed", reason="DeadlineExceeded"),
        {},
        ("DeadlineExceeded", "user", True),
    ),  # PodFailed counts
]


@pytest.mark.parametrize(("case", "item", "ctx", "expected"), CASES, ids=[c[0] for c in CASES])
def test_loss_reason(
    case: str, item: dict[str, Any], ctx: dict[str, Any], expected: tuple[str, str, bool]
) -> None:
    reason = classify(pod_context(item, "executor", **ctx))
    assert reason is not None, case
    assert (reason.code, reason.category, reason.counts_as_failure) == expected
    assert reason.message and reason.evidence


def test_running_and_waiting_pods_have_no_loss_reason() -> None:
    assert classify(pod_context(pod(), "executor", node=NodeHealth(True))) is None
    assert (
        classify(pod_context(pod("Pending", waiting={"reason": "ImagePullBackOff"}), "executor"))
        is None
    )


def test_spark_wording_of_exit_codes() -> None:
    assert describe_exit(52) == "exit code 52 (JVM OOM)"
    assert describe_exit(137) == "exit code 137 (SIGKILL, possible container OOM)"
    assert describe_exit(7) == "exit code 7 (unexpected)"
    reason = classify(
        pod_context(pod("Failed", terminated={"exitCode": 137, "reason": "Error"}), "executor")
    )
    assert reason is not None and "(SIGKILL, possible container OOM)" in reason.message


def test_in_place_restarts_each_get_an_entry() -> None:
    item = pod(
        restarts=2,
        last={"exitCode": 137, "reason": "OOMKilled", "finishedAt": "2026-01-01T00:02:00Z"},
    )
    entries = restart_reasons_of(item)
    assert len(entries) == 2
    assert entries[0] == (None, None)  # Kubernetes keeps only the last termination
    assert (
        entries[1][0] == "2026-01-01T00:02:00Z"
        and entries[1][1] is not None
        and entries[1][1].code == "OOMKilled"
    )


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (-3, "<invalid>"),
        (-1.5, "0s"),
        (0, "0s"),
        (59, "59s"),
        (119, "119s"),
        (120, "2m"),
        (125, "2m5s"),
        (599, "9m59s"),
        (600, "10m"),
        (3 * 3600 - 1, "179m"),
        (3 * 3600, "3h"),
        (3 * 3600 + 60, "3h1m"),
        (8 * 3600, "8h"),
        (47 * 3600, "47h"),
        (48 * 3600, "2d"),
        (49 * 3600, "2d1h"),
        (8 * 86400, "8d"),
        (729 * 86400, "729d"),
        (730 * 86400, "2y"),
        (731 * 86400, "2y1d"),
        (8 * 365 * 86400, "8y"),
    ],
)
def test_human_duration_is_kubectls(seconds: float, text: str) -> None:
    assert human_duration(seconds) == text


def with_init(item: dict[str, Any], **state: Any) -> dict[str, Any]:
    """The pod with an init container (``fetch-jars``) in the given state; its Spark container
    waits on it (PodInitializing), as the kubelet shows while init containers run."""
    last = state.pop("last", None)
    item["status"]["containerStatuses"][0]["state"] = {"waiting": {"reason": "PodInitializing"}}
    item["status"]["initContainerStatuses"] = [
        {"name": "istio-init", "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}},
        {
            "name": "fetch-jars",
            "state": state,
            "lastState": {"terminated": last} if last else {},
            "restartCount": 3 if last else 0,
        },
    ]
    return item


def test_a_failed_init_container_is_the_reason_the_spark_container_never_ran() -> None:
    """kubectl shows Init:Error; the pod failed with no Spark container termination to read."""
    item = with_init(pod("Failed"), terminated={"exitCode": 1, "reason": "Error"})
    reason = classify(pod_context(item, "executor"))
    assert reason is not None
    assert (reason.code, reason.category, reason.counts_as_failure) == ("ExitCode", "app", True)
    assert reason.message.startswith("init container fetch-jars failed, so the Spark container")
    assert "status.initContainerStatuses[fetch-jars].state.terminated.exitCode=1" in reason.evidence
    oom = with_init(pod("Failed"), terminated={"exitCode": 137, "reason": "OOMKilled"})
    reason = classify(pod_context(oom, "driver"))
    assert reason is not None and (reason.code, reason.category) == ("OOMKilled", "app")


def test_an_init_container_stopped_by_a_deletion_is_not_the_reason() -> None:
    item = with_init(pod("Failed", deleting=True), terminated={"exitCode": 143, "reason": "Error"})
    reason = classify(pod_context(item, "executor"))
    assert reason is not None and reason.code == "DeletedByDriver"


@pytest.mark.parametrize(
    ("state", "code", "evidence"),
    [
        (
            {"waiting": {"reason": "ImagePullBackOff", "message": "Back-off pulling image"}},
            "ImagePullFailure",
            "status.initContainerStatuses[fetch-jars].state.waiting.reason=ImagePullBackOff",
        ),
        (
            {
                "waiting": {"reason": "CrashLoopBackOff"},
                "last": {"exitCode": 2, "reason": "Error"},
            },
            "ExitCode",
            "status.initContainerStatuses[fetch-jars].lastState.terminated.exitCode=2",
        ),
    ],
)
def test_an_init_container_that_keeps_a_pod_from_starting_is_said_once_it_is_deleted(
    state: dict[str, Any], code: str, evidence: str
) -> None:
    """Init:ImagePullBackOff, Init:CrashLoopBackOff: while it waits, nothing is lost yet."""
    waiting = with_init(pod("Pending"), **dict(state))
    assert classify(pod_context(waiting, "executor")) is None
    deleted = with_init(pod("Pending", deleting=True), **dict(state))
    reason = classify(pod_context(deleted, "executor"))
    assert reason is not None
    # An executor deleted before it started is the driver's request given back, not a loss;
    # the init container that kept it waiting is named (issue 50, point 5).
    assert (reason.code, reason.counts_as_failure) == ("DeletedByDriver", False)
    assert "init container fetch-jars" in reason.message and "before it started" in reason.message
    assert evidence in reason.evidence
    driver = classify(pod_context(deleted, "driver"))  # a driver's is its attempt's end
    assert driver is not None
    assert (driver.code, driver.counts_as_failure) == (code, False)
    assert "init container fetch-jars" in driver.message and "never started" in driver.message


def test_why_a_pod_that_lost_nothing_waits() -> None:
    """Not a loss (classify says None), but what to fix: image, init container, crash loop."""
    from kubectl_spark.core.reasons import waiting_reason

    def why(item: dict[str, Any]) -> tuple[str, str] | None:
        assert classify(pod_context(item, "driver")) is None  # nothing is lost
        found = waiting_reason(pod_context(item, "driver"))
        return (found.code, found.evidence[0]) if found else None

    assert why(pod()) is None  # it runs
    assert why(pod("Pending", waiting={"reason": "ImagePullBackOff", "message": "m"})) == (
        "ImagePullFailure",
        "status.containerStatuses[spark-kubernetes-executor].state.waiting.reason=ImagePullBackOff",
    )
    crashing = with_init(
        pod("Pending"),
        waiting={"reason": "CrashLoopBackOff"},
        last={"exitCode": 2, "reason": "Error"},
    )
    assert why(crashing) == (
        "ExitCode",
        "status.initContainerStatuses[fetch-jars].state.waiting.reason=CrashLoopBackOff",
    )
    found = waiting_reason(pod_context(crashing, "driver"))
    assert found is not None and found.message == (
        "init container fetch-jars keeps failing (CrashLoopBackOff after 3 restart(s)), so the "
        "Spark container has not run; its last exit: exit code 2 (unexpected)"
    )  # it said "failed, so the Spark container never ran", as if it had stopped for good
    assert "status.initContainerStatuses[fetch-jars].lastState.terminated.exitCode=2" in (
        found.evidence
    )
    looping = pod(
        "Running",
        waiting={"reason": "CrashLoopBackOff"},
        last={"exitCode": 137, "reason": "OOMKilled"},
        restarts=4,
    )
    assert why(looping) == (
        "OOMKilled",
        "status.containerStatuses[spark-kubernetes-executor].state.waiting.reason=CrashLoopBackOff",
    )
    found = waiting_reason(pod_context(looping, "driver"))
    assert found is not None and found.message.startswith("restarting in place (CrashLoopBackOff)")
    assert not found.counts_as_failure
    gone = pod("Pending", waiting={"reason": "ImagePullBackOff"}, deleting=True)
    assert waiting_reason(pod_context(gone, "driver")) is None  # a deleted pod's story is its loss


def test_an_executor_in_a_crash_loop_is_not_taken_for_a_quiet_one() -> None:
    """Phase Running, container waiting: the fast path used to skip it, and say nothing."""
    from kubectl_spark.core.analyze import analyze
    from kubectl_spark.core.podfacts import facts
    from tests.core_pods import NOW, mk, printed, ref

    app = {"spark-app-selector": "spark-1", "spark-app-name": "loop"}
    driver = mk("loop-driver", "driver", "2026-03-01T00:00:00Z", labels=app)
    executor = mk(
        "loop-exec-1",
        "executor",
        "2026-03-01T00:01:00Z",
        labels={**app, "spark-exec-id": "1"},
        owner=ref("Pod", "loop-driver", "uid-loop-driver"),
    )
    executor["status"]["containerStatuses"] = [
        {
            "name": "spark-kubernetes-executor",
            "restartCount": 2,
            "state": {"waiting": {"reason": "CrashLoopBackOff"}},
            "lastState": {"terminated": {"exitCode": 52, "reason": "Error"}},
        }
    ]
    assert not facts(Pod.of(executor)).quiet
    (found,) = analyze(typed_snapshot(pods=[driver, executor], now=NOW)).apps
    (exec_1,) = found.attempts[0].executors
    assert exec_1.reason is None and exec_1.waiting is not None
    assert (exec_1.waiting.code, exec_1.restarts) == ("JvmOutOfMemory", 2)
    assert printed(exec_1)["waiting"]["code"] == "JvmOutOfMemory"


@pytest.mark.parametrize(
    ("reason", "message", "code", "category"),
    [
        (
            "FailedAttachVolume",
            (
                'Multi-Attach error for volume "pvc-1" Volume is already exclusively attached to '
                "one node and can't be attached to another"
            ),
            "VolumeAttachFailure",
            "cluster",
        ),
        (
            "FailedMount",
            'MountVolume.SetUp failed for volume "conf" : configmap "spark-conf" not found',
            "VolumeMountFailure",
            "app",
        ),
        (
            "FailedMount",
            "Unable to attach or mount volumes: unmounted volumes=[data]: timed out waiting",
            "VolumeMountFailure",
            "cluster",
        ),
    ],
)
def test_a_pod_waiting_on_its_volume_says_so(
    reason: str, message: str, code: str, category: str
) -> None:
    """ContainerCreating says nothing: the kubelet's Event names the volume (S3's attempt 2 waits
    on a volume its lost attempt 1 still holds). Deleted before it started, that is its loss."""
    from kubectl_spark.core.reasons import waiting_reason

    event = {
        "reason": reason,
        "type": "Warning",
        "message": message,
        "count": 5,
        "involvedObject": {"kind": "Pod", "name": "p", "namespace": "ns"},
    }
    waiting = pod("Pending", waiting={"reason": "ContainerCreating"})
    assert classify(pod_context(waiting, "driver", events=[event])) is None  # nothing lost yet
    found = waiting_reason(pod_context(waiting, "driver", events=[event]))
    assert found is not None
    assert (found.code, found.category, found.counts_as_failure) == (code, category, False)
    assert message in found.message and found.evidence[0].startswith(f"event {reason} x5: ")
    assert waiting_reason(pod_context(waiting, "driver")) is None  # no Event: nothing to say
    deleted = pod("Pending", waiting={"reason": "ContainerCreating"}, deleting=True)
    lost = classify(pod_context(deleted, "driver", events=[event]))
    assert lost is not None and (lost.code, lost.category) == (code, category)
    assert lost.message.endswith("never started, then deleted")
    given_back = classify(pod_context(deleted, "executor", events=[event]))
    assert given_back is not None and given_back.code == "DeletedByDriver"  # nothing ran
    assert message in given_back.message


EXCEPTION = (
    "org.apache.spark.SparkException: Job aborted due to stage failure: Task 3 in stage 2.0 "
    "failed 4 times\n\tat org.apache.spark.scheduler.DAGScheduler.failJobAndIndependentStages"
    "(DAGScheduler.scala:2898)\n\tat scala.collection.immutable.List.foreach(List.scala:334)\n"
    "Caused by: java.io.IOException: No space left on device\n\tat java.io.FileOutputStream"
    ".writeBytes(Native Method)\nCaused by: java.io.FileNotFoundException: /data/part-0 "
    "(No space left on device)\n\t... 12 more"
)


def driver(**kwargs: Any) -> dict[str, Any]:
    item = pod(labels={"spark-role": "driver"}, **kwargs)
    item["status"]["containerStatuses"][0]["name"] = "spark-kubernetes-driver"
    return item


def test_a_spark_4_drivers_exit_exception_is_its_reasons_best_evidence() -> None:
    """Spark 4.1+ writes the exception it exited with on the driver pod (spark.exit-exception):
    the reason quotes its headline and root cause beside the exit code."""
    failed = driver(
        phase="Failed",
        terminated={"exitCode": 1, "reason": "Error"},
        annotations={"spark.exit-exception": EXCEPTION},
    )
    reason = classify(pod_context(failed, "driver", node=NodeHealth(True)))
    assert reason is not None and (reason.code, reason.category) == ("ExitCode", "app")
    said = (
        "org.apache.spark.SparkException: Job aborted due to stage failure: Task 3 in stage 2.0 "
        "failed 4 times; Caused by: java.io.FileNotFoundException: /data/part-0 (No space left "
        "on device)"
    )
    assert reason.message.endswith(f"Spark's exit exception: {said}")
    assert reason.evidence[-1] == f"metadata.annotations[spark.exit-exception]: {said}"
    assert reason.evidence[0].endswith(".state.terminated.reason=Error")  # Kubernetes' first
    # Without the annotation (Spark 3, or the option off): the reason as before.
    plain = driver(phase="Failed", terminated={"exitCode": 1, "reason": "Error"})
    before = classify(pod_context(plain, "driver", node=NodeHealth(True)))
    assert before is not None and "exit exception" not in before.message
    assert reason.evidence[: len(before.evidence)] == before.evidence


def test_an_exit_exception_does_not_override_the_clusters_verdict() -> None:
    """A driver evicted, or on a lost node, did not end by its own exception."""
    evicted = driver(
        phase="Failed",
        reason="Evicted",
        message="The node was low on resource: memory.",
        annotations={"spark.exit-exception": "java.lang.InterruptedException"},
    )
    reason = classify(pod_context(evicted, "driver", node=NodeHealth(True)))
    assert reason is not None and reason.category == "cluster"
    assert "exit exception" not in reason.message
    # Only its headline, however long the annotation (Spark writes up to 64 KiB).
    long = driver(
        phase="Failed",
        terminated={"exitCode": 1, "reason": "Error"},
        annotations={"spark.exit-exception": "java.lang.Error: " + "x" * 70000},
    )
    quoted = classify(pod_context(long, "driver", node=NodeHealth(True)))
    assert quoted is not None and len(quoted.evidence[-1]) < 400
