"""Spark's own executor list and kept pods: reasons from Spark's exact texts, cross-checks, gaps."""

from __future__ import annotations

from kubectl_spark.core.analyze import analyze
from kubectl_spark.core.inputs import Snapshot
from kubectl_spark.core.sparkview import kept_copy, merge_kept, reason_from_spark
from tests.unit.test_core_grouping import NOW, mk, ref

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
    analysis = analyze(Snapshot(pods=_cluster(), now=NOW, spark_views={"uid-a-driver": view}))
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
        Snapshot(pods=pods, now=NOW), [(gone, "2026-03-01T00:06:00Z"), (stale, "x")], []
    )
    assert len(snap.pods) == 4  # the kept copy of a pod still in the cluster is ignored
    [app] = analyze(snap).apps
    kept = next(e for e in app.attempts[0].executors if e.id == "2")
    assert (kept.source, kept.state) == ("history", "Gone")
    assert kept.reason is not None and "seen 2026-03-01T00:06:00Z" in kept.reason.evidence[-1]
    assert (
        kept_copy(gone, "watch", "t")["metadata"]["annotations"]["kubectl-spark.io/source"]
        == "watch"
    )
