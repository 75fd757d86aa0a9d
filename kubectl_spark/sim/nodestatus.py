"""What a kubelet writes of its node: the Node it registers, its status, its Lease.

Shared by the simulated kubelet (``kubelet.py``) and the OS kubelet (``oskubelet/``): the
shapes are pkg/kubelet/nodestatus's (``MemoryPressureCondition``, ``ReadyCondition``, …) and
the node lease controller's (pkg/kubelet/nodelease, 40 s leases).
"""

from __future__ import annotations

from typing import Any

LEASES = "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases"


def node_object(name: str, labels: dict[str, str] | None = None) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "labels": {
                "kubernetes.io/hostname": name,
                "kubernetes.io/os": "linux",
                "kubernetes.io/arch": "amd64",
                **(labels or {}),
            },
        },
        "spec": {},
    }


def ready_conditions(now: str) -> list[dict[str, Any]]:
    """A healthy node's four conditions, as of ``now`` (RFC 3339)."""
    conditions = [
        {
            "type": kind,
            "status": "False",
            "reason": f"KubeletHas{reason}",
            "message": message,
            "lastHeartbeatTime": now,
            "lastTransitionTime": now,
        }
        for kind, reason, message in (
            ("MemoryPressure", "SufficientMemory", "kubelet has sufficient memory available"),
            ("DiskPressure", "NoDiskPressure", "kubelet has no disk pressure"),
            ("PIDPressure", "SufficientPID", "kubelet has sufficient PID available"),
        )
    ]
    conditions.append(
        {
            "type": "Ready",
            "status": "True",
            "reason": "KubeletReady",
            "message": "kubelet is posting ready status",
            "lastHeartbeatTime": now,
            "lastTransitionTime": now,
        }
    )
    return conditions


def ready_status(
    name: str,
    now: str,
    capacity: dict[str, str],
    endpoint: tuple[str, int],
    runtime: str,
    kubelet_version: str,
) -> dict[str, Any]:
    """A Ready node's status: its conditions, capacity, InternalIP and kubelet port."""
    address, port = endpoint
    return {
        "capacity": capacity,
        "allocatable": capacity,
        "conditions": ready_conditions(now),
        "addresses": [
            {"type": "InternalIP", "address": address},
            {"type": "Hostname", "address": name},
        ],
        "daemonEndpoints": {"kubeletEndpoint": {"Port": port}},
        "nodeInfo": {
            "kubeletVersion": kubelet_version,
            "containerRuntimeVersion": runtime,
            "operatingSystem": "linux",
            "architecture": "amd64",
        },
    }


def lease(name: str, renewed: str) -> dict[str, Any]:
    """The node's Lease in kube-node-lease, renewed at ``renewed`` (MicroTime)."""
    return {
        "metadata": {"name": name},
        "spec": {"holderIdentity": name, "leaseDurationSeconds": 40, "renewTime": renewed},
    }
