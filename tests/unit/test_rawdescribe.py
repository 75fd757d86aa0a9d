"""``describe pod`` and ``describe node`` text (app/rawdescribe.py), kubectl's sections."""

from __future__ import annotations

from datetime import UTC, datetime

from kubectl_spark.app.rawdescribe import describe_node, describe_pod

NOW = datetime(2026, 12, 5, 12, 0, tzinfo=UTC)


def test_a_killed_executor_shows_its_last_state_conditions_and_events_oldest_first() -> None:
    pod = {
        "metadata": {
            "name": "etl-exec-3",
            "namespace": "spark",
            "uid": "u3",
            "labels": {"spark-role": "executor", "spark-exec-id": "3"},
            "ownerReferences": [{"kind": "Pod", "name": "etl-driver"}],
        },
        "spec": {
            "nodeName": "node-a",
            "containers": [
                {
                    "name": "spark-kubernetes-executor",
                    "image": "spark:4.1.1",
                    "resources": {"limits": {"memory": "1408Mi"}},
                }
            ],
            "tolerations": [
                {
                    "key": "node.kubernetes.io/unreachable",
                    "effect": "NoExecute",
                    "tolerationSeconds": 300,
                }
            ],
        },
        "status": {
            "phase": "Running",
            "conditions": [{"type": "Ready", "status": "True"}],
            "containerStatuses": [
                {
                    "name": "spark-kubernetes-executor",
                    "ready": True,
                    "restartCount": 1,
                    "state": {"running": {"startedAt": "2026-12-05T11:50:00Z"}},
                    "lastState": {"terminated": {"reason": "OOMKilled", "exitCode": 137}},
                }
            ],
        },
    }
    events = [
        {
            "type": "Warning",
            "reason": "BackOff",
            "lastTimestamp": "2026-12-05T11:55:00Z",
            "message": "late",
        },
        {
            "type": "Normal",
            "reason": "Scheduled",
            "lastTimestamp": "2026-12-05T11:00:00Z",
            "message": "early",
        },
    ]
    text = describe_pod(pod, events, NOW)
    assert "Controlled By:  Pod/etl-driver" in text
    assert "Labels:         spark-exec-id=3\n                spark-role=executor" in text
    last = text.index("Last State:")
    assert (
        "Terminated" in text[last:]
        and "Reason: OOMKilled" in text[last:]
        and "Exit Code: 137" in text[last:]
    )
    assert "Restart Count:  1" in text and "memory: 1408Mi" in text
    assert "node.kubernetes.io/unreachable:NoExecute op=Equal for 300s" in text
    assert text.index("Scheduled") < text.index("BackOff")  # oldest first, as kubectl
    assert "Scheduled             60m" in text


def test_a_node_says_its_taints_conditions_and_allocatable() -> None:
    node = {
        "metadata": {"name": "node-a"},
        "spec": {"taints": [{"key": "node.kubernetes.io/unreachable", "effect": "NoExecute"}]},
        "status": {
            "conditions": [
                {
                    "type": "Ready",
                    "status": "Unknown",
                    "lastHeartbeatTime": "2026-12-05T11:58:00Z",
                    "reason": "NodeStatusUnknown",
                }
            ],
            "allocatable": {"cpu": "4", "memory": "16Gi"},
        },
    }
    text = describe_node(node, NOW)
    assert "Taints:         node.kubernetes.io/unreachable:NoExecute" in text
    assert "Ready                 Unknown 2m ago" in text and "NodeStatusUnknown" in text
    assert "Allocatable:\n  cpu: 4\n  memory: 16Gi" in text
    assert "Capacity:\n  <none>" in text
