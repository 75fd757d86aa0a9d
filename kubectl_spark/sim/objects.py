"""Helpers over pod/node JSON that several simulated components need."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

_SUFFIX = {
    "": 1,
    "k": 1000,
    "M": 1000**2,
    "G": 1000**3,
    "T": 1000**4,
    "Ki": 1024,
    "Mi": 1024**2,
    "Gi": 1024**3,
    "Ti": 1024**4,
    "m": 0.001,
}


def quantity(value: Any) -> float:
    """Parse a Kubernetes quantity ("500m", "4Gi", "2") into a number of base units."""
    if value is None:
        return 0.0
    m = re.fullmatch(r"\s*([0-9.]+)\s*([a-zA-Z]*)\s*", str(value))
    if not m or m.group(2) not in _SUFFIX:
        return 0.0
    return float(m.group(1)) * _SUFFIX[m.group(2)]


def requests(pod: Mapping[str, Any]) -> tuple[float, float]:
    cpu = mem = 0.0
    for container in (pod.get("spec") or {}).get("containers") or []:
        req = (container.get("resources") or {}).get("requests") or {}
        cpu += quantity(req.get("cpu"))
        mem += quantity(req.get("memory"))
    return cpu, mem


def phase(pod: Mapping[str, Any]) -> str:
    return str((pod.get("status") or {}).get("phase") or "Pending")


def is_terminal(pod: Mapping[str, Any]) -> bool:
    return phase(pod) in ("Succeeded", "Failed")


def deleting(obj: Mapping[str, Any]) -> bool:
    return bool(obj["metadata"].get("deletionTimestamp"))


def labels(obj: Mapping[str, Any]) -> dict[str, str]:
    return dict(obj["metadata"].get("labels") or {})


def condition(obj: Mapping[str, Any], kind: str) -> dict[str, Any] | None:
    for cond in (obj.get("status") or {}).get("conditions") or []:
        if cond.get("type") == kind:
            return dict(cond)
    return None


def with_condition(
    conditions: list[dict[str, Any]] | None, new: dict[str, Any]
) -> list[dict[str, Any]]:
    """Replace (or add) the condition of new's type, keeping lastTransitionTime if unchanged."""
    out = []
    replaced = False
    for cond in conditions or []:
        if cond.get("type") == new["type"]:
            if cond.get("status") == new.get("status") and cond.get("lastTransitionTime"):
                new = {**new, "lastTransitionTime": cond["lastTransitionTime"]}
            out.append(new)
            replaced = True
        else:
            out.append(cond)
    if not replaced:
        out.append(new)
    return out


def with_disruption(
    pod: dict[str, Any], reason: str, message: str, stamp: str
) -> list[dict[str, Any]]:
    """The pod's conditions with DisruptionTarget=True.

    Kubernetes sets it on a pod before it deletes or fails it for a reason not the pod's own
    (preemption, taints, eviction, PodGC); the loss reasons read it.
    """
    return with_condition(
        (pod.get("status") or {}).get("conditions"),
        {
            "type": "DisruptionTarget",
            "status": "True",
            "lastProbeTime": None,
            "lastTransitionTime": stamp,
            "reason": reason,
            "message": message,
        },
    )


def owner_ref(
    obj: Mapping[str, Any], *, controller: bool = True, block: bool = True
) -> dict[str, Any]:
    return {
        "apiVersion": obj["apiVersion"],
        "kind": obj["kind"],
        "name": obj["metadata"]["name"],
        "uid": obj["metadata"]["uid"],
        "controller": controller,
        "blockOwnerDeletion": block,
    }


def tolerates(pod: Mapping[str, Any], taint: Mapping[str, Any]) -> tuple[bool, int | None]:
    """Whether the pod tolerates a taint, and for how long (tolerationSeconds) if NoExecute."""
    for tol in (pod.get("spec") or {}).get("tolerations") or []:
        effect_ok = not tol.get("effect") or tol.get("effect") == taint.get("effect")
        if tol.get("operator") == "Exists":
            key_ok = not tol.get("key") or tol.get("key") == taint.get("key")
        else:
            key_ok = tol.get("key") == taint.get("key") and (tol.get("value") or "") == (
                taint.get("value") or ""
            )
        if effect_ok and key_ok:
            seconds = tol.get("tolerationSeconds")
            return True, None if seconds is None else int(seconds)
    return False, None


def in_status_order(statuses: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Container statuses as the kubelet writes them: sorted by name, not in the spec's order.

    pkg/kubelet/status/status_manager.go (normalizeStatus) sorts them with
    SortedContainerStatuses; Spark's loss text lists them in that order, so a sidecar named
    before Spark's container comes first.
    """
    return sorted(statuses, key=lambda s: str(s.get("name", "")))


def waiting_statuses(
    item: Mapping[str, Any], reason: str, message: str | None
) -> list[dict[str, Any]]:
    """Each container of a pod that has not started, waiting for ``reason`` (both kubelets)."""
    waiting: dict[str, Any] = {"reason": reason, **({"message": message} if message else {})}
    return in_status_order(
        [
            {
                "name": c["name"],
                "image": c.get("image"),
                "imageID": "",
                "ready": False,
                "restartCount": 0,
                "started": False,
                "state": {"waiting": waiting},
                "lastState": {},
            }
            for c in item["spec"]["containers"]
        ]
    )


def lost_status(item: Mapping[str, Any], now: str) -> dict[str, Any]:
    """A Running pod whose node came back without its containers (power-off, reboot).

    The kubelet's ``ContainerStatusUnknown`` (pkg/kubelet/kubelet_pods.go): each container
    terminated with 137, the pod Failed and no longer Ready.
    """
    statuses = []
    for s in (item.get("status") or {}).get("containerStatuses") or []:
        started = ((s.get("state") or {}).get("running") or {}).get("startedAt")
        terminated = {
            "exitCode": 137,
            "reason": "ContainerStatusUnknown",
            "message": "The container could not be located when the pod was terminated",
            **({"startedAt": started} if started else {}),
            "finishedAt": now,
        }
        statuses.append(
            {**s, "ready": False, "started": False, "state": {"terminated": terminated}}
        )
    ready = {"type": "Ready", "status": "False", "lastTransitionTime": now, "reason": "PodFailed"}
    return {
        "phase": "Failed",
        "containerStatuses": statuses,
        "conditions": with_condition((item.get("status") or {}).get("conditions"), ready),
    }
