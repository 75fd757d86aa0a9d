"""What a simulated kubelet reports of its pods: waiting reasons, container exits and restarts, evictions, the end of a deletion."""

from __future__ import annotations

import hashlib
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from kubectl_spark.knowledge.times import parse_time, rfc3339

from . import objects
from .client import pod
from .processes import CRASH_BACKOFF_MAX, SIGTERM_EXIT_SECONDS, Process

if TYPE_CHECKING:
    from .kubelet import Kubelet


class StatusManager:
    """The kubelet's status manager: what it writes of its pods' status, and when a deletion ends.

    Its own class (pkg/kubelet/status in the kubelet), given the kubelet whose node, clock and
    client it writes with.
    """

    def __init__(self, kubelet: Kubelet) -> None:
        self.kubelet = kubelet

    def report_waiting(self, item: dict[str, Any], reason: str, message: str | None) -> None:
        now = rfc3339(self.kubelet.now())
        statuses = objects.waiting_statuses(item, reason, message)
        conditions = (item.get("status") or {}).get("conditions")
        for kind, value in (
            ("PodReadyToStartContainers", "False"),
            ("Initialized", "True"),
            ("Ready", "False"),
            ("ContainersReady", "False"),
        ):
            cond = {"type": kind, "status": value, "lastProbeTime": None, "lastTransitionTime": now}
            if value == "False" and kind in ("Ready", "ContainersReady"):
                cond.update(
                    {
                        "reason": "ContainersNotReady",
                        "message": f"containers with unready status: [{' '.join(c['name'] for c in item['spec']['containers'])}]",
                    }
                )
            conditions = objects.with_condition(conditions, cond)
        status = {
            "phase": "Pending",
            "hostIP": self.kubelet.node_ip(),
            "conditions": conditions,
            "containerStatuses": statuses,
            "startTime": (item.get("status") or {}).get("startTime") or now,
        }
        if (item.get("status") or {}).get("containerStatuses") != statuses or (
            item.get("status") or {}
        ).get("phase") != "Pending":
            self.kubelet.client.patch(
                pod(item["metadata"]["namespace"], item["metadata"]["name"]) + "/status",
                {"status": status},
            )

    def handle_exits(self, item: dict[str, Any], proc: Process) -> None:
        policy = item["spec"].get("restartPolicy", "Always")
        now = self.kubelet.now()
        for c in proc.containers.values():
            if c.terminated is None:
                if c.backoff_until is not None and c.backoff_until <= now:
                    c.backoff_until = None
                continue
            restart = policy == "Always" or (
                policy == "OnFailure" and c.terminated["exitCode"] != 0
            )
            if not restart:
                continue
            if c.backoff_until is None:
                delay = min(self.kubelet.backoff_base() * 2**c.restarts, CRASH_BACKOFF_MAX)
                c.backoff_until = now + timedelta(seconds=delay)
                self.kubelet.world.events.event(
                    item,
                    "BackOff",
                    f"Back-off restarting failed container {c.name} in pod {proc.name}_{proc.namespace}({proc.uid})",
                    type_="Warning",
                    host=self.kubelet.node.name,
                )
                self.kubelet.world.rotate_log(item, c.name)
                c.last_terminated = c.terminated
                c.restarts += 1
                c.exit_at = None
                c.terminated = None
                c.started = c.backoff_until
                self.kubelet.world.events.event(
                    item, "Started", f"Started container {c.name}", host=self.kubelet.node.name
                )

    def report(self, item: dict[str, Any], proc: Process) -> None:
        now = self.kubelet.now()
        stamp = rfc3339(now)
        statuses = []
        spec_containers = {c["name"]: c for c in item["spec"]["containers"]}
        for c in proc.containers.values():
            image = spec_containers.get(c.name, {}).get("image")
            entry: dict[str, Any] = {
                "name": c.name,
                "image": image,
                "imageID": f"{image}@sha256:0",
                "restartCount": c.restarts,
                "containerID": self.kubelet.cid(proc, c),
                "lastState": {},
            }
            if c.last_terminated:
                entry["lastState"] = {"terminated": c.last_terminated}
            if c.terminated is not None:
                entry.update(ready=False, started=False, state={"terminated": c.terminated})
            elif c.backoff_until is not None and c.backoff_until > now:
                delay = min(self.kubelet.backoff_base() * 2 ** (c.restarts - 1), CRASH_BACKOFF_MAX)
                entry.update(
                    ready=False,
                    started=False,
                    state={
                        "waiting": {
                            "reason": "CrashLoopBackOff",
                            "message": f"back-off {delay}s restarting failed container={c.name} pod={proc.name}_{proc.namespace}({proc.uid})",
                        }
                    },
                )
            else:
                entry.update(
                    ready=True, started=True, state={"running": {"startedAt": rfc3339(c.started)}}
                )
            statuses.append(entry)
        statuses = objects.in_status_order(statuses)
        policy = item["spec"].get("restartPolicy", "Always")
        all_done = all(c.terminated is not None for c in proc.containers.values())
        restarting = any(
            c.terminated is not None
            and (policy == "Always" or (policy == "OnFailure" and c.terminated["exitCode"] != 0))
            for c in proc.containers.values()
        )
        if all_done and not restarting:
            phase = (
                "Succeeded"
                if all(
                    c.terminated and c.terminated["exitCode"] == 0 for c in proc.containers.values()
                )
                else "Failed"
            )
        else:
            phase = "Running"
        ready = phase == "Running" and all(s["ready"] for s in statuses)
        conditions = (item.get("status") or {}).get("conditions")
        for kind, value in (
            ("PodReadyToStartContainers", "True"),
            ("Initialized", "True"),
            ("Ready", "True" if ready else "False"),
            ("ContainersReady", "True" if ready else "False"),
        ):
            cond: dict[str, Any] = {
                "type": kind,
                "status": value,
                "lastProbeTime": None,
                "lastTransitionTime": stamp,
            }
            if value == "False":
                cond["reason"] = "PodCompleted" if phase != "Running" else "ContainersNotReady"
            conditions = objects.with_condition(conditions, cond)
        status = {
            **(item.get("status") or {}),
            "phase": phase,
            "conditions": conditions,
            "containerStatuses": statuses,
            "hostIP": self.kubelet.node_ip(),
            "podIP": self.pod_ip(item, proc.uid),
            "startTime": (item.get("status") or {}).get("startTime") or stamp,
        }
        if phase == "Running":
            status.pop("reason", None)
        if status != item.get("status"):
            self.kubelet.client.patch(
                pod(proc.namespace, proc.name) + "/status", {"status": status}
            )
            if phase != "Running":
                self.kubelet.world.on_finished(item, phase)

    def pod_ip(self, item: dict[str, Any], uid: str) -> str:
        """A pod's IP: its node's InternalIP for a host network pod, else one of the pod network's.

        The kubelet reports the host's IPs for a host network pod (pkg/kubelet/kubelet_pods.go).
        """
        if (item.get("spec") or {}).get("hostNetwork") is True:
            return self.kubelet.internal_endpoint()[0]
        n = int(hashlib.sha256(uid.encode()).hexdigest(), 16)
        return f"10.244.{n % 250}.{n // 250 % 250 + 2}"

    def report_evicted(self, item: dict[str, Any], proc: Process) -> None:
        stamp = rfc3339(self.kubelet.now())
        message = proc.evicted or ""
        statuses = []
        for c in proc.containers.values():
            statuses.append(
                {
                    "name": c.name,
                    "image": next(
                        (s.get("image") for s in item["spec"]["containers"] if s["name"] == c.name),
                        "",
                    ),
                    "ready": False,
                    "started": False,
                    "restartCount": c.restarts,
                    "state": {
                        "terminated": {
                            "exitCode": 137,
                            "reason": "Error",
                            "startedAt": rfc3339(c.started),
                            "finishedAt": stamp,
                        }
                    },
                    "lastState": {"terminated": c.last_terminated} if c.last_terminated else {},
                }
            )
        conditions = objects.with_disruption(item, "TerminationByKubelet", message, stamp)
        conditions = objects.with_condition(
            conditions,
            {
                "type": "Ready",
                "status": "False",
                "lastProbeTime": None,
                "lastTransitionTime": stamp,
                "reason": "PodFailed",
            },
        )
        status = {
            **(item.get("status") or {}),
            "phase": "Failed",
            "reason": "Evicted",
            "message": message,
            "conditions": conditions,
            "containerStatuses": objects.in_status_order(statuses),
        }
        self.kubelet.world.events.event(
            item, "Evicted", message, type_="Warning", host=self.kubelet.node.name
        )
        self.kubelet.client.patch(pod(proc.namespace, proc.name) + "/status", {"status": status})
        del self.kubelet.node.processes[proc.uid]
        self.kubelet.world.on_finished(item, "Failed")

    def finish_deletion(self, item: dict[str, Any], proc: Process | None) -> None:
        """Finish a graceful deletion, as the kubelet does.

        SIGTERM the containers; they exit (143) within SIGTERM_EXIT_SECONDS, or are killed (137)
        when the grace period ends; report, then delete with grace 0 and a UID precondition.
        """
        meta = item["metadata"]
        now = self.kubelet.now()
        if proc is not None and proc.alive:
            grace = int(meta.get("deletionGracePeriodSeconds") or 0)
            deadline = parse_time(meta["deletionTimestamp"])
            asked = deadline - timedelta(seconds=grace)
            exits = min(asked + timedelta(seconds=SIGTERM_EXIT_SECONDS), deadline)
            if now < exits:
                if proc.terminating_since is None:
                    proc.terminating_since = now
                    first = next(iter(proc.containers))
                    self.kubelet.world.events.event(
                        item, "Killing", f"Stopping container {first}", host=self.kubelet.node.name
                    )
                return
            stamp = rfc3339(now)
            code = (
                143 if exits < deadline else 137
            )  # exited on SIGTERM, or SIGKILLed at the deadline
            for c in proc.containers.values():
                if c.terminated is None:
                    c.terminated = {
                        "exitCode": code,
                        "reason": "Error",
                        "startedAt": rfc3339(c.started),
                        "finishedAt": stamp,
                        "containerID": self.kubelet.cid(proc, c),
                    }
            self.report(item, proc)
        self.kubelet.node.processes.pop(meta["uid"], None)
        self.kubelet.client.delete(pod(meta["namespace"], meta["name"]), grace=0, uid=meta["uid"])
