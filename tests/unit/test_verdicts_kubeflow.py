"""Issue 50, point 8: the Kubeflow spark-operator's own view, read as its sources write it.

kubeflow/spark-operator v2: ``internal/controller/sparkapplication/controller.go``
(``updateExecutorState``: a gone executor pod stays in ``status.executorState``, UNKNOWN while
the driver runs, FAILED once it does not; ``recordExecutorEvent``: "Executor %s failed with
ExitCode: %d, Reason: %s, Pod Message: %s") and ``pkg/util/sparkapplication.go``
(``ShouldRetry``: FAILING, SUCCEEDING and SUBMISSION_FAILED go to PENDING_RERUN while it holds).
"""

from __future__ import annotations

from typing import Any

import pytest

from kubectl_spark.core.analyze import analyze
from tests.core_pods import NOW, mk, typed_snapshot

LABELS = {
    "sparkoperator.k8s.io/app-name": "pi",
    "spark-app-selector": "spark-2",
    "sparkoperator.k8s.io/submission-id": "s1",
}


def sparkapp(state: str, **status: Any) -> dict[str, Any]:
    return {
        "metadata": {"name": "pi", "namespace": "ns", "uid": "app-uid"},
        "spec": {"restartPolicy": {"type": "OnFailure", "onFailureRetries": 2}},
        "status": {"executionAttempts": 1, "applicationState": {"state": state}, **status},
    }


def failed_event(pod: str, code: int, reason: str) -> dict[str, Any]:
    return {
        "metadata": {"name": "pi.1", "namespace": "ns", "uid": f"ev-{pod}"},
        "involvedObject": {"kind": "SparkApplication", "name": "pi", "namespace": "ns",
                           "uid": "app-uid"},
        "reason": "SparkExecutorFailed",
        "type": "Warning",
        "message": f"Executor {pod} failed with ExitCode: {code}, Reason: {reason}, "
        "Pod Message: ",
        "source": {"component": "spark-operator"},
    }  # fmt: skip


def pods() -> list[dict[str, Any]]:
    driver = mk("pi-driver", "driver", "2026-03-01T00:05:00Z", labels=LABELS)
    running = mk(
        "pi-1a2b-exec-3",
        "executor",
        "2026-03-01T00:06:00Z",
        labels={**LABELS, "spark-exec-id": "3"},
    )
    return [driver, running]


def test_an_executor_whose_pod_spark_deleted_does_not_vanish() -> None:
    """Spark deleted exec 1's failed pod; the operator's map and its Event still tell it."""
    app = sparkapp(
        "RUNNING",
        executorState={"pi-1a2b-exec-1": "FAILED", "pi-1a2b-exec-2": "UNKNOWN",
                       "pi-1a2b-exec-3": "RUNNING"},
    )  # fmt: skip
    snapshot = typed_snapshot(
        pods=pods(),
        sparkapplications=[app],
        events=[failed_event("pi-1a2b-exec-1", 137, "OOMKilled")],
        now=NOW,
    )
    (result,) = analyze(snapshot).apps
    by_id = {e.id: e for e in result.attempts[-1].executors}
    one = by_id["1"]
    assert (one.source, one.state, one.pod) == ("operator", "Gone", "pi-1a2b-exec-1")
    assert one.reason is not None and (one.reason.code, one.reason.exit_code) == ("OOMKilled", 137)
    assert any("SparkExecutorFailed" in e for e in one.reason.evidence)
    two = by_id["2"].reason  # gone while the driver runs, not seen to fail
    assert two is not None and two.code == "Gone" and "UNKNOWN" in two.message
    assert result.attempts[-1].unknown_losses == 0  # ids 1 and 2 are named, not gaps


@pytest.mark.parametrize(
    ("state", "status", "expected"),
    [
        ("FAILING", {"executionAttempts": 1}, "Pending"),  # 1 <= onFailureRetries 2: a rerun
        ("FAILING", {"executionAttempts": 3}, "Failed"),
        ("SUBMISSION_FAILED", {"submissionAttempts": 1}, "Failed"),  # no submission retries set
        ("SUCCEEDING", {}, "Succeeded"),  # OnFailure: no rerun after success
        ("SUSPENDED", {}, "Suspended"),
        ("SUSPENDING", {}, "Suspended"),
        ("RESUMING", {}, "Pending"),
    ],
)
def test_the_operators_transient_states_are_not_final(
    state: str, status: dict[str, Any], expected: str
) -> None:
    """pkg/util/sparkapplication.go ShouldRetry: FAILING, SUCCEEDING and SUBMISSION_FAILED go
    to PENDING_RERUN while retries remain; controller.go's SUSPENDING/SUSPENDED/RESUMING."""
    app = sparkapp(state, **status)
    driver = mk("pi-driver", "driver", "2026-03-01T00:05:00Z", labels=LABELS, phase="Failed")
    (result,) = analyze(typed_snapshot(pods=[driver], sparkapplications=[app], now=NOW)).apps
    assert result.state == expected


def test_executors_marked_failed_after_their_driver_went_are_not_losses() -> None:
    """FAILED "assuming it was deleted" once the driver ended: they went with it."""
    app = sparkapp("FAILED", executionAttempts=3, executorState={"pi-1a2b-exec-1": "FAILED"})
    driver = mk("pi-driver", "driver", "2026-03-01T00:05:00Z", labels=LABELS, phase="Failed")
    driver["status"]["containerStatuses"] = [
        {"name": "spark-kubernetes-driver", "state": {"terminated": {"exitCode": 1}}}
    ]
    (result,) = analyze(typed_snapshot(pods=[driver], sparkapplications=[app], now=NOW)).apps
    (gone,) = result.attempts[-1].executors
    assert gone.reason is not None and gone.reason.code == "OwnerGone"
