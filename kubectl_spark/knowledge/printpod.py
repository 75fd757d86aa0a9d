"""kubectl's printPod: a pod's READY, STATUS and RESTARTS as ``kubectl get pods`` shows them.

From ``pkg/printers/internalversion/printers.go`` (``printPod``): STATUS is the first unfinished
init container's state (``Init:Error``, ``Init:1/2``), else the last container's waiting or
terminated reason; RESTARTS counts the init containers' restarts while the pod initializes and,
once initialized, the containers' and the sidecars' (init containers that always restart). The
emulator serves these cells to kubectl; the core counts restarts the same way, so ``kubectl
spark`` and ``kubectl get pods`` never disagree. Pods may be malformed: nothing here raises.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class PrintedPod:
    ready: int
    total: int
    status: str
    restarts: int
    last_restart: str  # RFC 3339 of the last container stop before a restart, "" if none


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[dict[str, Any]]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def _count(container: dict[str, Any]) -> int:
    count = container.get("restartCount")
    return count if type(count) is int else 0


def _last_finished(container: dict[str, Any]) -> str:
    """When a container last stopped before its current run ("" if it never restarted)."""
    finished = _dict(_dict(container.get("lastState")).get("terminated")).get("finishedAt")
    return finished if isinstance(finished, str) else ""


def terminated_reason(terminated: dict[str, Any]) -> str:
    """A terminated state as printPod words it: its reason, else Signal:N, else ExitCode:N."""
    if terminated.get("reason"):
        return str(terminated["reason"])
    signal = terminated.get("signal")
    return f"Signal:{signal}" if signal else f"ExitCode:{terminated.get('exitCode', 0)}"


def _condition_true(conditions: list[dict[str, Any]], kind: str) -> bool:
    return any(c.get("type") == kind and c.get("status") == "True" for c in conditions)


@dataclass(slots=True)
class _Tally:
    status: str
    restarts: int = 0
    ready: int = 0
    last_restart: str = ""
    sidecar_restarts: int = 0
    sidecar_last_restart: str = ""
    initializing: bool = False


def _init_containers(pod: dict[str, Any], tally: _Tally, sidecars: set[str]) -> None:
    """Walk the init containers up to the one that runs or failed (``Init:…``)."""
    init_specs = _list(_dict(pod.get("spec")).get("initContainers"))
    for i, container in enumerate(_list(_dict(pod.get("status")).get("initContainerStatuses"))):
        count, finished = _count(container), _last_finished(container)
        tally.restarts += count
        tally.last_restart = max(tally.last_restart, finished)
        sidecar = isinstance(container.get("name"), str) and container["name"] in sidecars
        if sidecar:
            tally.sidecar_restarts += count
            tally.sidecar_last_restart = max(tally.sidecar_last_restart, finished)
        state = _dict(container.get("state"))
        waiting, terminated = _dict(state.get("waiting")), state.get("terminated")
        if isinstance(terminated, dict) and terminated.get("exitCode") in (0, None):
            continue  # completed; a missing exit code is Go's zero value
        if sidecar and container.get("started") is True:
            tally.ready += 1 if container.get("ready") else 0
            continue
        if isinstance(terminated, dict):  # initialization failed
            tally.status = "Init:" + terminated_reason(terminated)
        elif waiting.get("reason") and waiting.get("reason") != "PodInitializing":
            tally.status = f"Init:{waiting['reason']}"
        else:
            tally.status = f"Init:{i}/{len(init_specs)}"
        tally.initializing = True
        return


def _containers(pod: dict[str, Any], tally: _Tally, conditions: list[dict[str, Any]]) -> None:
    """The containers, last first: the last one's waiting or terminated reason is STATUS."""
    tally.restarts, tally.last_restart = tally.sidecar_restarts, tally.sidecar_last_restart
    has_running = False
    for container in reversed(_list(_dict(pod.get("status")).get("containerStatuses"))):
        tally.restarts += _count(container)
        tally.last_restart = max(tally.last_restart, _last_finished(container))
        state = _dict(container.get("state"))
        waiting, terminated = state.get("waiting"), state.get("terminated")
        if isinstance(waiting, dict) and waiting.get("reason"):
            tally.status = str(waiting["reason"])
        elif isinstance(terminated, dict):
            tally.status = terminated_reason(terminated)
        elif container.get("ready") and isinstance(state.get("running"), dict):
            has_running = True
            tally.ready += 1
    if tally.status == "Completed" and has_running:
        tally.status = "Running" if _condition_true(conditions, "Ready") else "NotReady"


def print_pod(pod: Any) -> PrintedPod:
    pod = _dict(pod)
    meta, spec, status = (
        _dict(pod.get("metadata")),
        _dict(pod.get("spec")),
        _dict(pod.get("status")),
    )
    phase = str(status.get("phase") or "")
    conditions = _list(status.get("conditions"))
    tally = _Tally(str(status.get("reason") or "") or phase)
    if any(
        c.get("type") == "PodScheduled" and c.get("reason") == "SchedulingGated" for c in conditions
    ):
        tally.status = "SchedulingGated"
    sidecars = {
        c["name"]
        for c in _list(spec.get("initContainers"))
        if c.get("restartPolicy") == "Always" and isinstance(c.get("name"), str)
    }
    _init_containers(pod, tally, sidecars)
    if not tally.initializing or _condition_true(conditions, "Initialized"):
        _containers(pod, tally, conditions)
    if meta.get("deletionTimestamp") and status.get("reason") == "NodeLost":
        tally.status = "Unknown"
    elif meta.get("deletionTimestamp") and phase not in ("Succeeded", "Failed"):
        tally.status = "Terminating"
    total = len(_list(spec.get("containers"))) + len(sidecars)
    return PrintedPod(tally.ready, total, tally.status, tally.restarts, tally.last_restart)


def restarts(pod: Any) -> int:
    """RESTARTS as a number (``kubectl_spark.core`` counts a driver's restarts with it)."""
    return print_pod(pod).restarts
