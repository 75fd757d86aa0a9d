"""The part of each object the core reads, so long-lived views hold thousands of pods cheaply.

A watched pod is kept for as long as the view is open; a full pod (environment, volumes,
tolerations, managedFields) is several times the size of what grouping, loss reasons and
alerts read. ``slim`` keeps the API's JSON shape, so the core cannot tell the difference:
``tests/functional/test_live_analysis.py`` checks that the analysis of slim objects equals the
analysis of whole ones in each kind of scenario. Views that show a whole object (YAML, an action's
plan) read it again from the API.
"""

from __future__ import annotations

from typing import Any

# Large annotations nothing here reads (kubectl apply's copy of the whole object).
_DROPPED_ANNOTATIONS = ("kubectl.kubernetes.io/last-applied-configuration",)
_METADATA = (
    "name",
    "namespace",
    "uid",
    "labels",
    "annotations",
    "ownerReferences",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "resourceVersion",
)
_POD_SPEC = ("nodeName", "restartPolicy", "priority", "priorityClassName")
# podIP: Spark's executor list names an executor by host:port, the pod IP (Deployment executors)
_POD_STATUS = ("phase", "reason", "message", "startTime", "conditions", "podIP")
_CONTAINER_STATUS = ("name", "state", "lastState", "restartCount", "ready", "started")
# Of the init containers' specs only what tells a sidecar (restartPolicy Always): its restarts
# count in RESTARTS as kubectl counts them.
_INIT_CONTAINER = ("name", "restartPolicy")
_NODE_SPEC = ("taints", "unschedulable")
# Of the containers' specs only their names and ports: the driver's spark-ui port is where its
# executor list is asked for (``kube.sparkapi``).
_CONTAINER = ("name", "ports")
# Of the volumes only the claims (``core.alerts`` reads which claim two attempts share).
_VOLUME = ("name", "persistentVolumeClaim")


def _pick(obj: Any, keys: tuple[str, ...]) -> dict[str, Any]:
    return {k: obj[k] for k in keys if k in obj} if isinstance(obj, dict) else {}


def _metadata(obj: dict[str, Any]) -> dict[str, Any]:
    meta = _pick(obj.get("metadata"), _METADATA)
    notes = meta.get("annotations")
    if isinstance(notes, dict) and any(k in notes for k in _DROPPED_ANNOTATIONS):
        meta["annotations"] = {k: v for k, v in notes.items() if k not in _DROPPED_ANNOTATIONS}
    return meta


def pod(obj: Any) -> Any:
    if not isinstance(obj, dict):
        return obj  # malformed: the core's accessors cope, and it is rare
    status = _pick(obj.get("status"), _POD_STATUS)
    whole = obj.get("status")
    for key in ("containerStatuses", "initContainerStatuses"):
        containers = whole.get(key) if isinstance(whole, dict) else None
        if isinstance(containers, list):
            status[key] = [_pick(c, _CONTAINER_STATUS) for c in containers]
    spec = _pick(obj.get("spec"), _POD_SPEC)
    inits = obj["spec"].get("initContainers") if isinstance(obj.get("spec"), dict) else None
    if isinstance(inits, list):
        spec["initContainers"] = [_pick(c, _INIT_CONTAINER) for c in inits]
    containers = obj["spec"].get("containers") if isinstance(obj.get("spec"), dict) else None
    if isinstance(containers, list) and any(
        isinstance(c, dict) and "ports" in c for c in containers
    ):
        spec["containers"] = [_pick(c, _CONTAINER) for c in containers]
    volumes = obj["spec"].get("volumes") if isinstance(obj.get("spec"), dict) else None
    if isinstance(volumes, list):
        # Claims only: a ReadWriteOncePod claim an earlier attempt holds is why a new one waits.
        claims = [_pick(v, _VOLUME) for v in volumes if isinstance(v, dict) and _VOLUME[1] in v]
        if claims:
            spec["volumes"] = claims
    return {"metadata": _metadata(obj), "spec": spec, "status": status}


def node(obj: Any) -> Any:
    if not isinstance(obj, dict):
        return obj
    return {
        "metadata": _metadata(obj),
        "spec": _pick(obj.get("spec"), _NODE_SPEC),
        "status": {"conditions": (obj.get("status") or {}).get("conditions") or []}
        if isinstance(obj.get("status"), dict)
        else {},
    }


def other(obj: Any) -> Any:
    """Jobs, Events, SparkApplications, volumes: small, read in many places; only metadata slims."""
    if not isinstance(obj, dict) or not isinstance(obj.get("metadata"), dict):
        return obj
    return {**obj, "metadata": _metadata(obj)}


def slim(kind: str, obj: Any) -> Any:
    """``kind`` is a LiveCluster resource key: pods, nodes, or anything else."""
    if kind == "pods":
        return pod(obj)
    if kind == "nodes":
        return node(obj)
    return other(obj)
