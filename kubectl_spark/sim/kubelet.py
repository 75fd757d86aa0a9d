"""A kubelet per node: runs the pods bound to it and reports their status through the API.

The processes it runs live here, not in the API: when the node is partitioned they keep running
(and nothing is reported); when it shuts down they are gone; when it comes back it reconciles
with what the API says (pods deleted meanwhile are killed, never resurrected).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from kubectl_spark.knowledge.times import parse_time, rfc3339, rfc3339_micro

from . import objects
from .client import SimApiError, pod

if TYPE_CHECKING:
    from .world import World

LEASE_RENEW_SECONDS = 10
# How long a container takes to exit on SIGTERM (a JVM's shutdown hooks); capped by the grace.
SIGTERM_EXIT_SECONDS = 2
CRASH_BACKOFF_BASE = 10
CRASH_BACKOFF_MAX = 300


@dataclass
class Container:
    name: str
    started: datetime
    restarts: int = 0
    exit_at: datetime | None = None
    exit_code: int = 0
    exit_reason: str = ""
    terminated: dict[str, Any] | None = None
    last_terminated: dict[str, Any] | None = None
    backoff_until: datetime | None = None


@dataclass
class Process:
    """A pod sandbox on the node and its containers: what `crictl ps` would show."""

    uid: str
    namespace: str
    name: str
    containers: dict[str, Container] = field(default_factory=dict)
    evicted: str | None = None  # the kubelet's eviction message, once decided
    terminating_since: datetime | None = None

    @property
    def alive(self) -> bool:
        return any(c.terminated is None for c in self.containers.values())


@dataclass
class NodeState:
    name: str
    status: str = "up"  # up, partitioned, down
    cpu: float = 8.0
    memory: float = 32 * 1024**3
    labels: dict[str, str] = field(default_factory=dict)
    processes: dict[str, Process] = field(default_factory=dict)
    last_lease: datetime | None = None
    rebooted: bool = False


class Kubelet:
    def __init__(self, world: World, node: NodeState) -> None:
        self.world = world
        self.node = node
        self.pull_failures: set[str] = set()  # pod names (ns/name) whose image pull fails
        self.config_failures: set[str] = set()

    @property
    def client(self) -> Any:
        return self.world.client

    def now(self) -> datetime:
        return self.world.clock.now()

    def _backoff_base(self) -> float:
        """CrashLoopBackOff's first delay: a kubelet's 10 s, or the test bed's shorter one."""
        return self.world.side.crash_backoff_seconds or CRASH_BACKOFF_BASE

    # ------------------------------------------------------------------------ node object
    def register(self) -> None:
        now = rfc3339(self.now())
        body = {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {
                "name": self.node.name,
                "labels": {
                    "kubernetes.io/hostname": self.node.name,
                    "kubernetes.io/os": "linux",
                    "kubernetes.io/arch": "amd64",
                    **self.node.labels,
                },
            },
            "spec": {},
        }
        try:
            self.client.create("/api/v1/nodes", body)
        except SimApiError as err:
            if err.status != 409:
                raise
        self._post_ready(now)
        self._renew_lease()

    def _capacity(self) -> dict[str, str]:
        return {
            "cpu": str(int(self.node.cpu)),
            "memory": f"{int(self.node.memory // 1024**2)}Mi",
            "pods": "110",
        }

    def _post_ready(self, now: str) -> None:
        conditions = [
            {
                "type": t,
                "status": "False",
                "reason": f"KubeletHas{r}",
                "message": m,
                "lastHeartbeatTime": now,
                "lastTransitionTime": now,
            }
            for t, r, m in (
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
        endpoint = self.world.side.node_endpoint(self.node.name)
        address, port = endpoint or (self._node_ip(), 10250)
        status = {
            "capacity": self._capacity(),
            "allocatable": self._capacity(),
            "conditions": conditions,
            "addresses": [
                {"type": "InternalIP", "address": address},
                {"type": "Hostname", "address": self.node.name},
            ],
            "daemonEndpoints": {"kubeletEndpoint": {"Port": port}},
            "nodeInfo": {
                "kubeletVersion": "v1.32.0",
                "containerRuntimeVersion": "containerd://1.7.24",
                "operatingSystem": "linux",
                "architecture": "amd64",
            },
        }
        node = self.client.get(f"/api/v1/nodes/{self.node.name}")
        if node is not None:
            old = objects.condition(node, "Ready")
            if old is None or old.get("status") != "True":
                self.world.recorder.event(
                    node,
                    "NodeReady",
                    f"Node {self.node.name} status is now: NodeReady",
                    component="kubelet",
                    host=self.node.name,
                )
            self.client.patch(f"/api/v1/nodes/{self.node.name}/status", {"status": status})

    def _node_ip(self) -> str:
        index = int(hashlib.sha256(self.node.name.encode()).hexdigest(), 16) % 250 + 2
        return f"10.0.0.{index}"

    def _renew_lease(self) -> None:
        path = f"/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/{self.node.name}"
        now = rfc3339_micro(self.now())
        lease = self.client.get(path)
        if lease is None:
            self.client.create(
                "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases",
                {
                    "metadata": {"name": self.node.name},
                    "spec": {
                        "holderIdentity": self.node.name,
                        "leaseDurationSeconds": 40,
                        "renewTime": now,
                    },
                },
            )
        else:
            self.client.patch(path, {"spec": {"renewTime": now}})
        self.node.last_lease = self.now()

    # ------------------------------------------------------------------------------ ticks
    def tick(self) -> None:
        if self.node.status == "down":
            self.node.processes.clear()
            return
        self._advance_processes()
        if self.node.status != "up":
            return  # partitioned: the processes run on, nothing reaches the API
        if self.node.rebooted:
            self.node.rebooted = False
            self._post_ready(rfc3339(self.now()))
        elif self.node.last_lease is None or (
            self.now() - self.node.last_lease
        ).total_seconds() >= (self.world.side.lease_renew_seconds or LEASE_RENEW_SECONDS):
            node = self.client.get(f"/api/v1/nodes/{self.node.name}")
            ready = objects.condition(node, "Ready") if node else None
            if ready is None or ready.get("status") != "True":
                self._post_ready(rfc3339(self.now()))
            self._renew_lease()
        bound = self.client.list("/api/v1/pods", fieldSelector=f"spec.nodeName={self.node.name}")
        present = {p["metadata"]["uid"] for p in bound}
        for uid in list(self.node.processes):
            if uid not in present:
                del self.node.processes[uid]  # deleted in the API: kill, never bring back
        for item in bound:
            try:
                self._sync(item)
            except SimApiError as err:
                if err.status not in (404, 409):
                    raise

    def _advance_processes(self) -> None:
        now = self.now()
        for proc in self.node.processes.values():
            for c in proc.containers.values():
                if c.terminated is None and c.exit_at is not None and c.exit_at <= now:
                    c.terminated = {
                        "exitCode": c.exit_code,
                        "reason": c.exit_reason or ("Completed" if c.exit_code == 0 else "Error"),
                        "startedAt": rfc3339(c.started),
                        "finishedAt": rfc3339(c.exit_at),
                        "containerID": self._cid(proc, c),
                    }

    def _cid(self, proc: Process, c: Container) -> str:
        return (
            "containerd://"
            + hashlib.sha256(f"{proc.uid}/{c.name}/{c.restarts}".encode()).hexdigest()[:64]
        )

    # ------------------------------------------------------------------------------- sync
    def _sync(self, item: dict[str, Any]) -> None:
        uid = item["metadata"]["uid"]
        proc = self.node.processes.get(uid)
        if objects.deleting(item):
            self._finish_deletion(item, proc)
            return
        if objects.is_terminal(item):
            return
        if proc is None:
            if objects.phase(item) == "Running" or self._was_started(item):
                self._lost_after_reboot(item)
                return
            self._start(item)
            return
        if proc.evicted is not None:
            self._report_evicted(item, proc)
            return
        self._handle_exits(item, proc)
        self._report(item, proc)

    def _was_started(self, item: dict[str, Any]) -> bool:
        return any(
            (s.get("state") or {}).get("running") or (s.get("state") or {}).get("terminated")
            for s in (item.get("status") or {}).get("containerStatuses") or []
        )

    def _lost_after_reboot(self, item: dict[str, Any]) -> None:
        """The node came back without the pod's containers (a shutdown or reboot)."""
        now = rfc3339(self.now())
        statuses = []
        for s in (item.get("status") or {}).get("containerStatuses") or []:
            started = ((s.get("state") or {}).get("running") or {}).get("startedAt")
            statuses.append(
                {
                    **s,
                    "ready": False,
                    "started": False,
                    "state": {
                        "terminated": {
                            "exitCode": 137,
                            "reason": "ContainerStatusUnknown",
                            "message": "The container could not be located when the pod was terminated",
                            **({"startedAt": started} if started else {}),
                            "finishedAt": now,
                        }
                    },
                }
            )
        status = {
            "phase": "Failed",
            "containerStatuses": statuses,
            "conditions": objects.with_condition(
                (item.get("status") or {}).get("conditions"),
                {
                    "type": "Ready",
                    "status": "False",
                    "lastTransitionTime": now,
                    "reason": "PodFailed",
                },
            ),
        }
        self.client.patch(
            pod(item["metadata"]["namespace"], item["metadata"]["name"]) + "/status",
            {"status": status},
        )

    def _start(self, item: dict[str, Any]) -> None:
        meta = item["metadata"]
        key = f"{meta['namespace']}/{meta['name']}"
        now = self.now()
        if not self.world.volumes_ready(item, self.node.name):
            self._report_waiting(item, "ContainerCreating", None)
            return
        if key in self.pull_failures or any(
            c.get("image", "").endswith(":missing") for c in item["spec"]["containers"]
        ):
            image = item["spec"]["containers"][0].get("image", "")
            already = any(
                ((s.get("state") or {}).get("waiting") or {}).get("reason") == "ErrImagePull"
                for s in (item.get("status") or {}).get("containerStatuses") or []
            )
            reason = "ImagePullBackOff" if already else "ErrImagePull"
            message = (
                f'Back-off pulling image "{image}"'
                if already
                else f'failed to pull and unpack image "{image}": not found'
            )
            self._report_waiting(item, reason, message)
            self.world.recorder.event(
                item,
                "Failed",
                f'Failed to pull image "{image}": not found',
                type_="Warning",
                host=self.node.name,
            )
            if already:
                self.world.recorder.event(
                    item,
                    "BackOff",
                    f'Back-off pulling image "{image}"',
                    type_="Warning",
                    host=self.node.name,
                )
            return
        if key in self.config_failures:
            self._report_waiting(
                item, "CreateContainerConfigError", 'configmap "spark-conf" not found'
            )
            self.world.recorder.event(
                item,
                "Failed",
                'Error: configmap "spark-conf" not found',
                type_="Warning",
                host=self.node.name,
            )
            return
        proc = Process(meta["uid"], meta["namespace"], meta["name"])
        for c in item["spec"]["containers"]:
            proc.containers[c["name"]] = Container(c["name"], now)
        self.node.processes[meta["uid"]] = proc
        for c in item["spec"]["containers"]:
            self.world.recorder.event(
                item,
                "Pulled",
                f'Container image "{c.get("image")}" already present on machine',
                host=self.node.name,
            )
            self.world.recorder.event(
                item, "Created", f"Created container: {c['name']}", host=self.node.name
            )
            self.world.recorder.event(
                item, "Started", f"Started container {c['name']}", host=self.node.name
            )
        self.world.on_started(item, self.node.name)
        # This sync reports ContainerCreating; the next one reports the running containers.
        self._report_waiting(item, "ContainerCreating", None)

    def _report_waiting(self, item: dict[str, Any], reason: str, message: str | None) -> None:
        now = rfc3339(self.now())
        waiting: dict[str, Any] = {"reason": reason}
        if message:
            waiting["message"] = message
        statuses = [
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
            "hostIP": self._node_ip(),
            "conditions": conditions,
            "containerStatuses": statuses,
            "startTime": (item.get("status") or {}).get("startTime") or now,
        }
        if (item.get("status") or {}).get("containerStatuses") != statuses or (
            item.get("status") or {}
        ).get("phase") != "Pending":
            self.client.patch(
                pod(item["metadata"]["namespace"], item["metadata"]["name"]) + "/status",
                {"status": status},
            )

    def _handle_exits(self, item: dict[str, Any], proc: Process) -> None:
        policy = item["spec"].get("restartPolicy", "Always")
        now = self.now()
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
                delay = min(self._backoff_base() * 2**c.restarts, CRASH_BACKOFF_MAX)
                c.backoff_until = now + timedelta(seconds=delay)
                self.world.recorder.event(
                    item,
                    "BackOff",
                    f"Back-off restarting failed container {c.name} in pod {proc.name}_{proc.namespace}({proc.uid})",
                    type_="Warning",
                    host=self.node.name,
                )
                self.world.rotate_log(item, c.name)
                c.last_terminated = c.terminated
                c.restarts += 1
                c.exit_at = None
                c.terminated = None
                c.started = c.backoff_until
                self.world.recorder.event(
                    item, "Started", f"Started container {c.name}", host=self.node.name
                )

    def _report(self, item: dict[str, Any], proc: Process) -> None:
        now = self.now()
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
                "containerID": self._cid(proc, c),
                "lastState": {},
            }
            if c.last_terminated:
                entry["lastState"] = {"terminated": c.last_terminated}
            if c.terminated is not None:
                entry.update(ready=False, started=False, state={"terminated": c.terminated})
            elif c.backoff_until is not None and c.backoff_until > now:
                delay = min(self._backoff_base() * 2 ** (c.restarts - 1), CRASH_BACKOFF_MAX)
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
            "hostIP": self._node_ip(),
            "podIP": self._pod_ip(proc.uid),
            "startTime": (item.get("status") or {}).get("startTime") or stamp,
        }
        if phase == "Running":
            status.pop("reason", None)
        if status != item.get("status"):
            self.client.patch(pod(proc.namespace, proc.name) + "/status", {"status": status})
            if phase != "Running":
                self.world.on_finished(item, phase)

    def _pod_ip(self, uid: str) -> str:
        n = int(hashlib.sha256(uid.encode()).hexdigest(), 16)
        return f"10.244.{n % 250}.{n // 250 % 250 + 2}"

    def _report_evicted(self, item: dict[str, Any], proc: Process) -> None:
        stamp = rfc3339(self.now())
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
            "containerStatuses": statuses,
        }
        self.world.recorder.event(item, "Evicted", message, type_="Warning", host=self.node.name)
        self.client.patch(pod(proc.namespace, proc.name) + "/status", {"status": status})
        del self.node.processes[proc.uid]
        self.world.on_finished(item, "Failed")

    def _finish_deletion(self, item: dict[str, Any], proc: Process | None) -> None:
        """Finish a graceful deletion, as the kubelet does.

        SIGTERM the containers; they exit (143) within SIGTERM_EXIT_SECONDS, or are killed (137)
        when the grace period ends; report, then delete with grace 0 and a UID precondition.
        """
        meta = item["metadata"]
        now = self.now()
        if proc is not None and proc.alive:
            grace = int(meta.get("deletionGracePeriodSeconds") or 0)
            deadline = parse_time(meta["deletionTimestamp"])
            asked = deadline - timedelta(seconds=grace)
            exits = min(asked + timedelta(seconds=SIGTERM_EXIT_SECONDS), deadline)
            if now < exits:
                if proc.terminating_since is None:
                    proc.terminating_since = now
                    first = next(iter(proc.containers))
                    self.world.recorder.event(
                        item, "Killing", f"Stopping container {first}", host=self.node.name
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
                        "containerID": self._cid(proc, c),
                    }
            self._report(item, proc)
        self.node.processes.pop(meta["uid"], None)
        self.client.delete(pod(meta["namespace"], meta["name"]), grace=0, uid=meta["uid"])

    # ------------------------------------------------------------------------------ faults
    def plan_exit(
        self,
        uid: str,
        code: int,
        reason: str = "",
        container: str | None = None,
        after: float = 0.0,
    ) -> bool:
        proc = self.node.processes.get(uid)
        if proc is None or not proc.containers:
            return False
        c = proc.containers[container] if container else next(iter(proc.containers.values()))
        c.exit_at = self.now() + timedelta(seconds=after)
        c.exit_code = code
        c.exit_reason = reason
        return True

    def evict(self, uid: str, message: str) -> bool:
        proc = self.node.processes.get(uid)
        if proc is None:
            return False
        proc.evicted = message
        return True
