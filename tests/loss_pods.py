"""The one pod builder of the loss-reason tests (core/losses.py and its rules)."""

from __future__ import annotations

from typing import Any


def pod(
    phase: str = "Running",
    *,
    terminated: dict[str, Any] | None = None,
    waiting: dict[str, Any] | None = None,
    reason: str = "",
    message: str = "",
    disruption: str = "",
    deleting: bool = False,
    labels: dict[str, str] | None = None,
    annotations: dict[str, str] | None = None,
    conditions: list[dict[str, Any]] | None = None,
    last: dict[str, Any] | None = None,
    restarts: int = 0,
) -> dict[str, Any]:
    """An executor pod (node-a) as the API shows it: its phase, its container's state, the
    kubelet's reason and conditions; what each loss rule reads, and nothing else."""
    state: dict[str, Any] = {"running": {"startedAt": "2026-01-01T00:00:00Z"}}
    if terminated is not None:
        state = {"terminated": terminated}
    if waiting is not None:
        state = {"waiting": waiting}
    status: dict[str, Any] = {
        "phase": phase,
        "containerStatuses": [
            {
                "name": "spark-kubernetes-executor",
                "state": state,
                "restartCount": restarts,
                "lastState": {"terminated": last} if last else {},
            }
        ],
        "conditions": list(conditions or []),
    }
    if reason:
        status["reason"] = reason
        status["message"] = message
    if disruption:
        status["conditions"].append(
            {"type": "DisruptionTarget", "status": "True", "reason": disruption, "message": "m"}
        )
    meta: dict[str, Any] = {
        "name": "p",
        "namespace": "ns",
        "uid": "u",
        "labels": {"spark-role": "executor", **(labels or {})},
        "annotations": annotations or {},
    }
    if deleting:
        meta["deletionTimestamp"] = "2026-01-01T00:10:00Z"
    return {
        "metadata": meta,
        "spec": {"nodeName": "node-a", "restartPolicy": "Never"},
        "status": status,
    }
