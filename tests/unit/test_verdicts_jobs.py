"""Issue 50, point 9: a driver Job's own end, and a graceful node shutdown, read as they are.

From Kubernetes' sources: the Job controller (pkg/controller/job/job_controller.go) fails a
Job past ``activeDeadlineSeconds`` with reason ``DeadlineExceeded`` and deletes its active pods;
from 1.31 it sets ``FailureTarget`` first and ``Failed`` once they are gone. The kubelet's
graceful node shutdown (pkg/kubelet/nodeshutdown/nodeshutdown_manager_linux.go) marks each pod
``DisruptionTarget`` ``TerminationByKubelet`` "Pod was terminated in response to imminent node
shutdown." and stops it before the node goes.
"""

from __future__ import annotations

from typing import Any

import pytest

from kubectl_spark.core.analyze import analyze
from kubectl_spark.core.node import nodes_of
from tests.core_pods import NOW, mk, ref, typed_snapshot

APP = {"spark-app-selector": "spark-1", "spark-app-name": "wc"}
SHUTDOWN = "Pod was terminated in response to imminent node shutdown."


def job(*conditions: dict[str, str]) -> dict[str, Any]:
    return {
        "metadata": {
            "name": "wc-driver",
            "namespace": "ns",
            "uid": "job-1",
            "creationTimestamp": "2026-03-01T00:00:00Z",
        },
        "spec": {
            "activeDeadlineSeconds": 600,
            "template": {"metadata": {"labels": {**APP, "spark-role": "driver"}}},
        },
        "status": {"conditions": [{"status": "True", **c} for c in conditions]},
    }


def driver(name: str, created: str, **status: Any) -> dict[str, Any]:
    pod = mk(name, "driver", created, labels=APP, owner=ref("Job", "wc-driver", "job-1"))
    pod["status"].update(status)
    return pod


DEADLINE = {
    "type": "FailureTarget",
    "reason": "DeadlineExceeded",
    "message": "Job was active longer than specified deadline",
}


@pytest.mark.parametrize(
    "conditions",
    [(DEADLINE,), (DEADLINE, {**DEADLINE, "type": "Failed"})],
    ids=["target", "failed"],
)
def test_a_driver_stopped_by_its_jobs_deadline_is_not_deleted_by_a_person(
    conditions: tuple[dict[str, str], ...],
) -> None:
    """job_controller.go: past activeDeadlineSeconds, FailureTarget (then Failed) with reason
    DeadlineExceeded, and the active pods deleted (their containers end 143)."""
    stopped = driver(
        "wc-driver-a",
        "2026-03-01T00:00:01Z",
        phase="Failed",
        containerStatuses=[
            {
                "name": "spark-kubernetes-driver",
                "state": {"terminated": {"exitCode": 143, "reason": "Error"}},
            }
        ],
    )
    stopped["metadata"]["deletionTimestamp"] = "2026-03-01T00:10:01Z"
    (app,) = analyze(typed_snapshot(pods=[stopped], jobs=[job(*conditions)], now=NOW)).apps
    reason = app.attempts[0].reason
    assert reason is not None
    assert (reason.code, reason.category, reason.counts_as_failure) == (
        "DeadlineExceeded",
        "user",
        True,
    )
    assert any("reason=DeadlineExceeded" in e for e in reason.evidence)


def test_a_graceful_node_shutdown_of_a_jobs_driver_is_not_a_split_brain() -> None:
    """The node shut down after its kubelet stopped the driver (the status it posted says so);
    the Job's replacement runs elsewhere: one driver runs, not two."""
    old = driver(
        "wc-driver-a",
        "2026-03-01T00:00:01Z",
        phase="Running",
        conditions=[
            {
                "type": "DisruptionTarget",
                "status": "True",
                "reason": "TerminationByKubelet",
                "message": SHUTDOWN,
            }
        ],
    )
    old["spec"]["nodeName"] = "n1"
    new = driver("wc-driver-b", "2026-03-01T00:05:00Z", phase="Running")
    new["spec"]["nodeName"] = "n2"
    nodes = [
        {
            "metadata": {"name": "n1"},
            "status": {"conditions": [{"type": "Ready", "status": "Unknown"}]},
        },
        {
            "metadata": {"name": "n2"},
            "status": {"conditions": [{"type": "Ready", "status": "True"}]},
        },
    ]
    (app,) = analyze(
        typed_snapshot(pods=[old, new], jobs=[job()], nodes=nodes_of(nodes), now=NOW)
    ).apps
    first = app.attempts[0]
    assert first.reason is not None and first.reason.code == "NodeShutdown"
    assert "SplitBrain" not in {a.type for a in app.alerts}
