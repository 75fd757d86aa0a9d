"""The OS kubelet's status manager: what it writes of a pod, as pkg/kubelet/status does.

``generateAPIPodStatus`` and the status manager's patch: the phase from the containers' states
and the restart policy, each container's ``state`` and ``lastState`` (the process's real exit
status as ``terminated``), the Ready conditions, the pod's IP; ``Pending`` with a waiting reason
before the containers start; ``ContainerStatusUnknown`` for a pod whose processes the node lost.
It writes only what changed, and keeps each pod's last status after the pod is gone.
"""

from __future__ import annotations

from typing import Any

from kubectl_spark.knowledge.clock import Clock
from kubectl_spark.knowledge.times import rfc3339
from kubectl_spark.sim import objects
from kubectl_spark.sim.client import Client, pod

from .runs import ContainerRun, PodRun


class StatusManager:
    def __init__(self, client: Client, clock: Clock) -> None:
        self.client = client
        self.clock = clock
        #: Each pod's last status written, by uid, kept after the pod is gone: what Spark read of
        #: a pod it has since deleted (a test compares Spark's words with it).
        self.reported: dict[str, dict[str, Any]] = {}

    def terminated(
        self, c: ContainerRun, code: int, reason: str, message: str = ""
    ) -> dict[str, Any]:
        now = self.clock.now()
        found: dict[str, Any] = {
            "exitCode": code,
            "reason": reason,
            "startedAt": rfc3339(c.started or now),
            "finishedAt": rfc3339(now),
            "containerID": f"os://{c.process.pid if c.process else 0}",
        }
        if message:
            found["message"] = message
        return found

    def container_status(self, c: ContainerRun) -> dict[str, Any]:
        state: dict[str, Any]
        if c.terminated is not None and c.backoff_until:
            state = {
                "waiting": {
                    "reason": "CrashLoopBackOff",
                    "message": f"back-off restarting failed container {c.name}",
                }
            }
        elif c.terminated is not None:
            state = {"terminated": c.terminated}
        else:
            state = {"running": {"startedAt": rfc3339(c.started or self.clock.now())}}
        running = "running" in state
        return {
            "name": c.name,
            "image": c.image,
            "imageID": "",
            "containerID": f"os://{c.process.pid if c.process else 0}",
            "ready": running,
            "started": running,
            "restartCount": c.restarts,
            "state": state,
            "lastState": {"terminated": c.last_terminated} if c.last_terminated else {},
        }

    def report(self, item: dict[str, Any], run: PodRun) -> None:
        statuses = objects.in_status_order(
            [self.container_status(c) for c in run.containers.values()]
        )
        ended = [c.terminated for c in run.containers.values()]
        policy = item["spec"].get("restartPolicy", "Always")
        if all(t is not None for t in ended) and not any(
            c.backoff_until for c in run.containers.values()
        ):
            failed = any(t["exitCode"] != 0 for t in ended if t)
            phase = "Failed" if failed else "Succeeded"
            if policy == "Always" or (policy == "OnFailure" and failed):
                phase = "Running"
        else:
            phase = "Running"
        ready = phase == "Running" and all(s["ready"] for s in statuses)
        now = rfc3339(self.clock.now())
        conditions = (item.get("status") or {}).get("conditions")
        for kind, value in (
            ("PodReadyToStartContainers", "True" if run.alive() else "False"),
            ("Initialized", "True"),
            ("ContainersReady", "True" if ready else "False"),
            ("Ready", "True" if ready else "False"),
        ):
            old = objects.condition(item, kind)
            if old is None or old.get("status") != value:
                entry: dict[str, Any] = {
                    "type": kind,
                    "status": value,
                    "lastProbeTime": None,
                    "lastTransitionTime": now,
                }
                if value == "False" and kind in ("Ready", "ContainersReady"):
                    entry["reason"] = "PodCompleted" if phase != "Running" else "ContainersNotReady"
                conditions = objects.with_condition(conditions, entry)
        status = {
            "phase": phase,
            "hostIP": "127.0.0.1",
            "hostIPs": [{"ip": "127.0.0.1"}],
            "podIP": run.address.api,
            "podIPs": [{"ip": run.address.api}],
            "startTime": (item.get("status") or {}).get("startTime") or now,
            "conditions": conditions,
            "containerStatuses": statuses,
        }
        if run.reported == status:
            return
        self.client.patch(pod(run.namespace, run.name) + "/status", {"status": status})
        run.reported = status
        self.reported[run.uid] = status

    def report_waiting(self, item: dict[str, Any], reason: str, message: str | None) -> None:
        statuses = objects.waiting_statuses(item, reason, message)
        if (item.get("status") or {}).get("containerStatuses") == statuses:
            return
        status = {
            "phase": "Pending",
            "hostIP": "127.0.0.1",
            "startTime": (item.get("status") or {}).get("startTime") or rfc3339(self.clock.now()),
            "containerStatuses": statuses,
        }
        meta = item["metadata"]
        self.client.patch(pod(meta["namespace"], meta["name"]) + "/status", {"status": status})

    def lost(self, item: dict[str, Any]) -> None:
        """A Running pod with no process here: the node lost it (power-off, reboot)."""
        meta = item["metadata"]
        self.client.patch(
            pod(meta["namespace"], meta["name"]) + "/status",
            {"status": objects.lost_status(item, rfc3339(self.clock.now()))},
        )
