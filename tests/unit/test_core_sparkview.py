"""Spark's own executor list and kept pods: reasons from Spark's exact texts, cross-checks, gaps."""

from __future__ import annotations

from typing import Any

import pytest

from kubectl_spark.core.analyze import analyze
from kubectl_spark.core.sparkview import merge_kept, reason_from_spark
from tests.core_pods import NOW, kept, mk, ref, typed_snapshot

OOM = (
    "The executor with id 4 exited with exit code 137(SIGKILL, possible container OOM).\n"
    "The API gave the following container statuses:\n\n"
    "\t container name: spark-kubernetes-executor\n"
    "\t container image: apache/spark:3.5.1\n"
    "\t container state: terminated\n"
    "\t exit code: 137\n"
    "\t termination reason: OOMKilled\n"
)
EVICTED = (
    "The executor with id 2 exited with exit code 137(SIGKILL, possible container OOM).\n"
    "The API gave the following brief reason: Evicted\n"
    "The API gave the following message: The node was low on resource: memory.\n"
    "The API gave the following container statuses:\n\n"
    "\t container name: spark-kubernetes-executor\n"
    "\t exit code: 137\n"
    "\t termination reason: Error\n"
)


def summary(exec_id: str, reason: str) -> dict[str, object]:
    return {
        "id": exec_id,
        "isActive": False,
        "addTime": "2026-03-01T00:00:10Z",
        "removeTime": "2026-03-01T00:05:00Z",
        "removeReason": reason,
    }


def test_sparks_texts_map_to_the_same_codes_as_pods() -> None:
    cases = {
        OOM: ("OOMKilled", "app", True),
        EVICTED: ("Evicted", "cluster", True),
        "The executor with id 7 exited with exit code 52(JVM OOM).\n": (
            "JvmOutOfMemory",
            "app",
            True,
        ),
        "Executor killed by driver.": ("DeletedByDriver", "driver", False),
        "The executor with id 3 was deleted by a user or the framework.": (
            "Deleted",
            "unknown",
            False,
        ),
        "The executor with ID 5 (registered at 1 ms) was not found in the cluster at the polling "
        "time (2 ms) which is after the accepted detect delta time (3 ms) configured by "
        "`spark.kubernetes.executor.missingPodDetectDelta`.": ("MissingPod", "unknown", False),
    }
    for text, (code, category, counts) in cases.items():
        reason = reason_from_spark(summary("1", text))
        assert (reason.code, reason.category, reason.counts_as_failure) == (
            code,
            category,
            counts,
        ), text
        assert reason.evidence[0].startswith("from Spark's driver (allexecutors)")


def _cluster() -> list[dict]:
    labels = {"spark-app-selector": "spark-a", "spark-app-name": "a"}
    driver = mk("a-driver", "driver", "2026-03-01T00:00:00Z", labels=labels)
    owner = ref("Pod", "a-driver", "uid-a-driver")
    execs = [
        mk(
            f"a-x-exec-{i}",
            "executor",
            "2026-03-01T00:00:05Z",
            labels={**labels, "spark-exec-id": str(i)},
            owner=owner,
        )
        for i in (1, 5)
    ]
    execs[1]["status"] = {
        "phase": "Failed",
        "containerStatuses": [
            {"name": "spark-kubernetes-executor", "state": {"terminated": {"exitCode": 143}}}
        ],
    }
    return [driver, *execs]


def test_spark_fills_in_gone_executors_cross_checks_and_counts_gaps() -> None:
    view = {"executors": [summary("2", EVICTED), summary("5", "Executor killed by driver.")]}
    analysis = analyze(typed_snapshot(pods=_cluster(), now=NOW, spark_views={"uid-a-driver": view}))
    [app] = analysis.apps
    attempt = app.attempts[0]
    by_id = {e.id: e for e in attempt.executors}
    assert by_id["2"].source == "spark" and by_id["2"].state == "Gone"
    assert by_id["2"].pod == "a-x-exec-2" and by_id["2"].reason is not None
    assert by_id["2"].reason.code == "Evicted"
    five = by_id["5"].reason
    assert five is not None and "Spark's word wins" in five.evidence[-1]
    # ids 3 and 4 were used (Spark numbers executors 1, 2, 3…) and nothing explains them
    assert attempt.unknown_losses == 2
    assert "spark-api" in app.sources
    assert any("2 executor(s) lost with unknown reasons" in n for n in app.notes)


def test_kept_pods_are_marked_and_never_override_the_cluster() -> None:
    pods = _cluster()
    gone = mk(
        "a-x-exec-2",
        "executor",
        "2026-03-01T00:00:05Z",
        uid="uid-gone",
        labels={"spark-app-selector": "spark-a", "spark-app-name": "a", "spark-exec-id": "2"},
        owner=ref("Pod", "a-driver", "uid-a-driver"),
    )
    stale = dict(pods[1], status={"phase": "Failed"})
    snap = merge_kept(
        typed_snapshot(pods=pods, now=NOW), [(gone, "2026-03-01T00:06:00Z"), (stale, "x")], []
    )
    assert len(snap.pods) == 4  # the kept copy of a pod still in the cluster is ignored
    [app] = analyze(snap).apps
    gone_one = next(e for e in app.attempts[0].executors if e.id == "2")
    assert (gone_one.source, gone_one.state) == ("history", "Gone")
    assert gone_one.reason is not None
    assert "seen 2026-03-01T00:06:00Z" in gone_one.reason.evidence[-1]
    copy = kept(gone, "watch", "t")
    assert (copy.source, copy.seen_at) == ("watch", "t")
    assert "kubectl-spark.io/source" not in copy.metadata.annotations  # a field, not a note


# What Spark 4.1.1 answered in allexecutors for an executor SIGKILLed from outside, in the
# real-Spark tier (tests/realspark/test_executor_losses.py): the text of
# ExecutorPodsLifecycleManager.exitReasonMessage starts with a newline, and keeps an empty line
# each for the brief reason and the message the API did not give. Its dates are
# JacksonMessageWriter's ``yyyy-MM-dd'T'HH:mm:ss.SSS'GMT'``.
SPARK_41_KILLED = (
    "\nThe executor with id 1 exited with exit code 137(SIGKILL, possible container OOM).\n"
    "\n\n\nThe API gave the following container statuses:\n\n"
    "\n\t container name: spark-kubernetes-executor"
    "\n\t container image: apache/spark:4.1.1"
    "\n\t container state: terminated"
    "\n\t container started at: 2026-12-04T15:40:11Z"
    "\n\t container finished at: 2026-12-04T15:40:39Z"
    "\n\t exit code: 137"
    "\n\t termination reason: Error\n      "
)


def test_sparks_own_text_starting_with_a_newline_is_read_whole() -> None:
    """Spark 3.x/4.x's loss text begins with an empty line: its words are on the next one.

    Read by its first line alone, every exit Spark reported came out ``Unknown`` (issue 50).
    """
    found = reason_from_spark(
        {
            "id": "1",
            "isActive": False,
            "removeTime": "2026-12-04T15:40:39.512GMT",
            "removeReason": SPARK_41_KILLED,
        }
    )
    assert (found.code, found.exit_code, found.counts_as_failure) == ("PossibleOOM", 137, True)
    assert "removed at 2026-12-04T15:40:39Z: The executor with id 1 exited" in found.evidence[0]
    oom = reason_from_spark(
        {
            "id": "1",
            "isActive": False,
            "removeReason": SPARK_41_KILLED.replace(
                "termination reason: Error", "termination reason: OOMKilled"
            ),
        }
    )
    assert oom.code == "OOMKilled"


def test_the_simulator_writes_sparks_text() -> None:
    """The simulator's driver says what Spark 4.1.1 said for the same pod, to the character."""
    from kubectl_spark.sim.sparkrest import exited_text

    status = {
        "containerStatuses": [
            {
                "name": "spark-kubernetes-executor",
                "image": "apache/spark:4.1.1",
                "state": {
                    "terminated": {
                        "exitCode": 137,
                        "reason": "Error",
                        "startedAt": "2026-12-04T15:40:11Z",
                        "finishedAt": "2026-12-04T15:40:39Z",
                    }
                },
            }
        ]
    }
    assert exited_text("1", {"status": status}) == SPARK_41_KILLED


def test_sparks_rest_dates_become_the_apis() -> None:
    """Spark's ``…GMT`` dates are read as RFC 3339 (the churn alert compares them with now)."""
    from kubectl_spark.core.summaries import read_summaries

    (read,) = read_summaries(
        [
            {
                "id": "3",
                "isActive": False,
                "addTime": "2026-12-04T10:00:01.100GMT",
                "removeTime": "2026-12-04T10:01:02.345GMT",
                "removeReason": "x",
                "memoryUsed": 1,
            }
        ]
    )
    assert read == {
        "id": "3",
        "isActive": False,
        "addTime": "2026-12-04T10:00:01Z",
        "removeTime": "2026-12-04T10:01:02Z",
        "removeReason": "x",
    }


# Spark 3.5.1's text for an executor the kubelet evicted, as a driver logged it (quoted in a
# public troubleshooting page; ExecutorPodsLifecycleManager.exitReasonMessage of 3.5: the same
# leading newline, the brief reason and message filled in, container lines indented).
SPARK_351_EVICTED = (
    "\nThe executor with id 4 exited with exit code 143(unexpected).\n"
    "The API gave the following brief reason: Evicted\n"
    "The API gave the following message: The node was low on resource: ephemeral-storage. "
    "Threshold quantity: 308595705, available: 265968Ki. Container spark-kubernetes-executor was "
    "using 857242, request is 0, has larger consumption of ephemeral-storage. \n"
    "\nThe API gave the following container statuses:\n\n"
    "    container name: spark-kubernetes-executor\n"
    "    container image: spark-py-3.5.1:v3.5.1.2\n"
    "    container state: terminated\n"
    "    container started at: 2025-08-15T06:29:01Z\n"
    "    container finished at: 2025-08-15T07:53:48Z\n"
    "    exit code: 143\n"
    "    termination reason: Error\n      "
)
# Spark 3.2's text for an executor the kubelet preempted to admit a critical pod (a driver's
# log, quoted publicly): no container had terminated, so the exit code is -1.
SPARK_32_PREEMPTED = (
    "\nThe executor with id 12 exited with exit code -1(unexpected).\n"
    "The API gave the following brief reason: Preempting\n"
    "The API gave the following message: Preempted in order to admit critical pod\n"
    "\nThe API gave the following container statuses:\n\n\n      "
)
# Spark 3.0-3.1 (exitReasonMessage before describeExitCode): "N/A" where the API gave nothing.
SPARK_31_EXITED = (
    "\nThe executor with id 2 exited with exit code 52.\n"
    "The API gave the following brief reason: N/A\n"
    "The API gave the following message: N/A\n"
    "The API gave the following container statuses:\n\n"
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (SPARK_351_EVICTED, ("Evicted", 143, "app", True)),  # it used more than it requested
        (SPARK_32_PREEMPTED, ("Preempted", None, "cluster", True)),
        (SPARK_31_EXITED, ("JvmOutOfMemory", 52, "app", True)),
    ],
)
def test_spark_3_wordings_are_read_whole(text: str, expected: tuple[object, ...]) -> None:
    """Spark 3.x's texts (issue 50, point 1): the reason, the message and the exit all read."""
    found = reason_from_spark({"id": "4", "isActive": False, "removeReason": text})
    assert (found.code, found.exit_code, found.category, found.counts_as_failure) == expected
    assert "N/A" not in found.message


@pytest.mark.parametrize(
    ("text", "category"),
    [
        # HealthTracker.killExecutor with spark.excludeOnFailure.killExcludedExecutors and
        # decommissioning on: ExecutorDecommission's "Executor decommission: " + its message.
        (
            (
                "Executor decommission: Killing excluded executor id 3 since "
                "spark.excludeOnFailure.killExcludedExecutors is set. (actually decommissioning)"
            ),
            "driver",
        ),
        ("Executor decommission: Decommissioning all executors on excluded host node-b", "driver"),
        ("Executor decommission: spark scale down", "driver"),  # dynamic allocation
        ("Executor decommission: Rolling via ExecutorRollPlugin", "driver"),
        ("Executor decommission: ", "cluster"),  # a node drain the executor was told of
    ],
)
def test_the_drivers_own_decommissions_never_count(text: str, category: str) -> None:
    """Issue 50 point 6: excluded executors and scale-downs are the driver's decision."""
    found = reason_from_spark({"id": "3", "isActive": False, "removeReason": text})
    assert (found.code, found.category) == ("Decommissioned", category)
    assert not found.counts_as_failure and not found.counts_toward_max_failures


@pytest.mark.parametrize(("removed", "churn"), [("2026-02-28T21:00:%02d.345GMT", False),
                                               ("2026-03-01T00:58:%02d.345GMT", True)])  # fmt: skip
def test_churn_reads_sparks_rest_dates(removed: str, churn: bool) -> None:
    """Hours-old losses in Spark's list (JacksonMessageWriter's ``…GMT`` dates) are not churn.

    Read raw, the dates parsed as nothing and the churn alert took them as now (issue 50,
    point 1).
    """
    killed = SPARK_41_KILLED.replace("id 1", "id {}")
    view = {
        "executors": [
            {
                "id": str(i),
                "isActive": False,
                "removeTime": removed % i,
                "removeReason": killed.format(i),
            }
            for i in range(6, 13)
        ]
    }
    analysis = analyze(typed_snapshot(pods=_cluster(), now=NOW, spark_views={"uid-a-driver": view}))
    [app] = analysis.apps
    assert ("ExecutorChurn" in {a.type for a in app.alerts}) is churn


def _pod_event(pod: str, reason: str, message: str, kind: str = "Warning") -> dict[str, object]:
    return {
        "metadata": {"name": f"{pod}.{reason}", "namespace": "ns", "uid": f"ev-{pod}-{reason}"},
        "involvedObject": {"kind": "Pod", "name": pod, "namespace": "ns"},
        "reason": reason,
        "message": message,
        "type": kind,
        "count": 3,
        "firstTimestamp": "2026-03-01T00:00:06Z",
        "lastTimestamp": "2026-03-01T00:00:40Z",
        "source": {"component": "kubelet"},
    }


# The kubelet's own words (pkg/kubelet/events/event.go; volume/util/operationexecutor for
# FailedMount, images/image_manager.go for a pull, kuberuntime_container.go's "Error: %v") and
# the scheduler's (FailedScheduling, Scheduled "Successfully assigned NS/POD to NODE").
NEVER_RAN_EVENTS = {
    "3": [
        ("Scheduled", "Successfully assigned ns/a-x-exec-3 to n2", "Normal"),
        ("FailedMount", 'MountVolume.SetUp failed for volume "conf" : secret "conf" not found'),
    ],
    "4": [
        ("Scheduled", "Successfully assigned ns/a-x-exec-4 to n1", "Normal"),
        ("Failed", 'Failed to pull image "apache/spark:9.9": not found'),
        ("BackOff", 'Back-off pulling image "apache/spark:9.9"', "Normal"),
    ],
}


def test_gaps_whose_events_show_they_never_ran_are_no_loss() -> None:
    """Executors Spark deleted before they started (issue 50, point 5) left only Events.

    ExecutorPodsAllocator.onNewSnapshots deletes the pending pods a scale-down leaves in excess
    ("Deleting 2 excess pod requests (1,2)." in the real-Spark tier's driver log,
    tests/realspark/test_never_started.py) and Spark's allexecutors never lists them. Their
    pods' Events outlive them: an id whose Events show no container started is no loss; one
    whose Events say a container started stays unexplained.
    """
    events = [
        _pod_event(f"a-x-exec-{i}", *told) for i, said in NEVER_RAN_EVENTS.items() for told in said
    ]
    events.append(_pod_event("a-x-exec-2", "Started", "Started container x", "Normal"))
    views: list[dict[str, Any]] = [
        {"executors": []},
        {"executors": [summary("5", "Executor killed by driver.")]},
    ]
    for view in views:
        snapshot = typed_snapshot(
            pods=_cluster(), events=events, now=NOW, spark_views={"uid-a-driver": view}
        )
        [app] = analyze(snapshot).apps
        attempt = app.attempts[0]
        by_id = {e.id: e for e in attempt.executors}
        assert attempt.unknown_losses == 1  # 2 ran, and how it ended is told by nothing
        for exec_id, why in (("3", 'secret "conf" not found'), ("4", "image pull failed")):
            gone = by_id[exec_id]
            assert (gone.source, gone.state, gone.pod) == ("events", "Gone", f"a-x-exec-{exec_id}")
            assert gone.reason is not None and why in gone.reason.message, gone.reason
            assert (gone.reason.code, gone.reason.category) == ("DeletedByDriver", "driver")
            assert not gone.reason.counts_as_failure
        assert by_id["3"].node == "n2"
        assert "2" not in by_id


# Spark 4.1.1's text for an executor whose pod has a helper container besides Spark's: the
# kubelet's status manager sorts containerStatuses by name (status_manager.go normalizeStatus),
# and ExecutorPodsLifecycleManager.containersDescription lists them in that order, so a
# "config-fetch" helper that finished (exit 0, Completed) comes before Spark's container.
SPARK_41_WITH_HELPER = (
    "\nThe executor with id 2 exited with exit code 137(SIGKILL, possible container OOM).\n"
    "\n\n\nThe API gave the following container statuses:\n\n"
    "\n\t container name: config-fetch"
    "\n\t container image: busybox:1.36"
    "\n\t container state: terminated"
    "\n\t container started at: 2026-12-05T10:00:01Z"
    "\n\t container finished at: 2026-12-05T10:00:02Z"
    "\n\t exit code: 0"
    "\n\t termination reason: Completed"
    "\n\t container name: spark-kubernetes-executor"
    "\n\t container image: apache/spark:4.1.1"
    "\n\t container state: terminated"
    "\n\t container started at: 2026-12-05T10:00:01Z"
    "\n\t container finished at: 2026-12-05T10:00:40Z"
    "\n\t exit code: 137"
    "\n\t termination reason: OOMKilled\n      "
)


def test_sparks_text_is_read_for_sparks_container_not_a_helpers() -> None:
    """Issue 50, point 4: with another container in the pod, Spark's container's reason counts.

    Read by the first "termination reason:" line, the helper's Completed stood for Spark's
    OOM kill.
    """
    found = reason_from_spark({"id": "2", "isActive": False, "removeReason": SPARK_41_WITH_HELPER})
    assert (found.code, found.exit_code, found.category) == ("OOMKilled", 137, "app"), found
    renamed = SPARK_41_WITH_HELPER.replace("spark-kubernetes-executor", "executor")
    found = reason_from_spark({"id": "2", "isActive": False, "removeReason": renamed})
    assert (found.code, found.exit_code) == ("OOMKilled", 137), found  # by its exit code


def _given_back(driver_name: str) -> tuple[list[dict[str, Any]], list[dict[str, object]], dict]:
    """A driver whose executors are all gone: 1 and 2 deleted before they started (only
    their Events left), 3 and 4 given back by dynamic allocation (only Spark's list left)."""
    labels = {"spark-app-selector": "spark-a", "spark-app-name": "a"}
    pods = [mk(driver_name, "driver", "2026-03-01T00:00:00Z", labels=labels)]
    events = [
        _pod_event(f"a-x-exec-{i}", *told)
        for i in ("1", "2")
        for told in NEVER_RAN_EVENTS["3"]  # scheduled, then its secret not found
    ]
    # The kubelet stopping 3's container: an Event about a pod of that name, none about 4.
    events.append(
        _pod_event(
            "a-x-exec-3", "Killing", "Stopping container spark-kubernetes-executor", "Normal"
        )
    )
    idle = "Executor killed by driver."
    view = {"executors": [summary("3", idle), summary("4", idle)]}
    return pods, events, {f"uid-{driver_name}": view}


def test_with_every_executor_pod_gone_the_gaps_are_named_after_the_driver() -> None:
    """The real-Spark tier saw it, with the suite running beside it: its executors 3 and 4 were
    given back (idle for 3 s) before `describe` ran, so no sibling's pod named the gaps 1 and 2
    and both read as unknown losses. Spark names the driver ``<prefix>-driver`` and each
    executor ``<prefix>-exec-<id>`` by default (sparkview.exec_prefix_of_driver)."""
    pods, events, views = _given_back("a-x-driver")
    [app] = analyze(typed_snapshot(pods=pods, events=events, now=NOW, spark_views=views)).apps
    attempt = app.attempts[0]
    by_id = {e.id: e for e in attempt.executors}
    assert attempt.unknown_losses == 0
    # 3's name is shown as its Events confirm it; 4's, confirmed by nothing, is not (its prefix
    # may be spark.kubernetes.executor.podNamePrefix's).
    assert {i: (e.pod, e.source) for i, e in by_id.items()} == {
        "1": ("a-x-exec-1", "events"),
        "2": ("a-x-exec-2", "events"),
        "3": ("a-x-exec-3", "spark"),
        "4": ("", "spark"),
    }
    for e in by_id.values():
        assert e.reason is not None and e.reason.code == "DeletedByDriver", e
    # A driver named otherwise (spark.kubernetes.driver.pod.name) names no executor: as before.
    pods, events, views = _given_back("a-custom-name")
    [app] = analyze(typed_snapshot(pods=pods, events=events, now=NOW, spark_views=views)).apps
    attempt = app.attempts[0]
    assert attempt.unknown_losses == 2
    assert {e.id: e.pod for e in attempt.executors} == {"3": "", "4": ""}


def test_an_event_naming_a_gap_after_the_driver_updates_as_a_full_analysis() -> None:
    """The incremental analysis places such an Event by the driver's name too (its pod is gone
    and no sibling's name says whose it is): the answer equals a full analysis."""
    from kubectl_spark.core.incremental import Change, LiveAnalysis

    pods, events, views = _given_back("a-x-driver")
    first, late = events[:-2] + events[-1:], events[-2]  # exec-2's FailedMount, by the watch
    live = LiveAnalysis()
    live.update(typed_snapshot(pods=pods, events=first, now=NOW, spark_views=views), None)
    snapshot = typed_snapshot(pods=pods, events=events, now=NOW, spark_views=views)
    uid = str(late["metadata"]["uid"])  # type: ignore[index]
    fast = live.update(snapshot, {"events": {uid: Change(late)}})
    assert live.full_runs == 1, "an Event must not analyze everything"
    assert fast.to_json() == analyze(snapshot).to_json()
    assert fast.apps[0].attempts[0].unknown_losses == 0
