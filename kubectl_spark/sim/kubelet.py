"""A kubelet per node: runs the pods bound to it and reports their status through the API.

The processes it runs live here, not in the API: when the node is partitioned they keep running
(and nothing is reported); when it shuts down they are gone; when it comes back it reconciles
with what the API says (pods deleted meanwhile are killed, never resurrected).
"""

from __future__ import annotations

import hashlib
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from kubectl_spark.knowledge.times import rfc3339, rfc3339_micro

from . import nodestatus, objects
from .client import SimApiError, pod
from .kubelet_status import StatusManager
from .processes import (
    CRASH_BACKOFF_BASE,
    LEASE_RENEW_SECONDS,
    Container,
    NodeState,
    Process,
)

if TYPE_CHECKING:
    from .world import World


class Kubelet:
    def __init__(self, world: World, node: NodeState) -> None:
        self.world = world
        self.node = node
        self.pull_failures: set[str] = set()  # pod names (ns/name) whose image pull fails
        self.config_failures: set[str] = set()
        self.status = StatusManager(self)

    @property
    def client(self) -> Any:
        return self.world.client

    def now(self) -> datetime:
        return self.world.clock.now()

    def backoff_base(self) -> float:
        """CrashLoopBackOff's first delay: a kubelet's 10 s, or the test bed's shorter one."""
        return self.world.side.crash_backoff_seconds or CRASH_BACKOFF_BASE

    # ------------------------------------------------------------------------ node object
    def register(self) -> None:
        now = rfc3339(self.now())
        body = nodestatus.node_object(self.node.name, self.node.labels)
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
        status = nodestatus.ready_status(
            self.node.name,
            now,
            self._capacity(),
            self.internal_endpoint(),
            "containerd://1.7.24",
            "v1.32.0",
        )
        node = self.client.get(f"/api/v1/nodes/{self.node.name}")
        if node is not None:
            old = objects.condition(node, "Ready")
            if old is None or old.get("status") != "True":
                self.world.events.event(
                    node,
                    "NodeReady",
                    f"Node {self.node.name} status is now: NodeReady",
                    component="kubelet",
                    host=self.node.name,
                )
            self.client.patch(f"/api/v1/nodes/{self.node.name}/status", {"status": status})

    def node_ip(self) -> str:
        if self.node.address:
            return self.node.address
        index = int(hashlib.sha256(self.node.name.encode()).hexdigest(), 16) % 250 + 2
        return f"10.0.0.{index}"

    def internal_endpoint(self) -> tuple[str, int]:
        """The node's InternalIP and its kubelet's port, as its status says them.

        A node given an address keeps it on the real bed too (its kubelet API then goes
        unreached: it listens on loopback), for its host network pods' sake.
        """
        endpoint = self.world.side.node_endpoint(self.node.name)
        address, port = endpoint or (self.node_ip(), 10250)
        return self.node.address or address, port

    def _renew_lease(self) -> None:
        path = f"{nodestatus.LEASES}/{self.node.name}"
        now = rfc3339_micro(self.now())
        lease = self.client.get(path)
        if lease is None:
            self.client.create(nodestatus.LEASES, nodestatus.lease(self.node.name, now))
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
        # Every pod, filtered here: one list serves every kubelet of the tick (tick_cache).
        bound = [
            p
            for p in self.client.list("/api/v1/pods")
            if (p.get("spec") or {}).get("nodeName") == self.node.name
        ]
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
                        "containerID": self.cid(proc, c),
                    }

    def cid(self, proc: Process, c: Container) -> str:
        return (
            "containerd://"
            + hashlib.sha256(f"{proc.uid}/{c.name}/{c.restarts}".encode()).hexdigest()[:64]
        )

    # ------------------------------------------------------------------------------- sync
    def _sync(self, item: dict[str, Any]) -> None:
        uid = item["metadata"]["uid"]
        proc = self.node.processes.get(uid)
        if objects.deleting(item):
            self.status.finish_deletion(item, proc)
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
            self.status.report_evicted(item, proc)
            return
        self.status.handle_exits(item, proc)
        self.status.report(item, proc)

    def _was_started(self, item: dict[str, Any]) -> bool:
        return any(
            (s.get("state") or {}).get("running") or (s.get("state") or {}).get("terminated")
            for s in (item.get("status") or {}).get("containerStatuses") or []
        )

    def _lost_after_reboot(self, item: dict[str, Any]) -> None:
        """The node came back without the pod's containers (a shutdown or reboot)."""
        status = objects.lost_status(item, rfc3339(self.now()))
        self.client.patch(
            pod(item["metadata"]["namespace"], item["metadata"]["name"]) + "/status",
            {"status": status},
        )

    def _start(self, item: dict[str, Any]) -> None:
        meta = item["metadata"]
        key = f"{meta['namespace']}/{meta['name']}"
        now = self.now()
        if not self.world.volumes_ready(item, self.node.name):
            self.status.report_waiting(item, "ContainerCreating", None)
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
            self.status.report_waiting(item, reason, message)
            self.world.events.event(
                item,
                "Failed",
                f'Failed to pull image "{image}": not found',
                type_="Warning",
                host=self.node.name,
            )
            if already:
                self.world.events.event(
                    item,
                    "BackOff",
                    f'Back-off pulling image "{image}"',
                    type_="Warning",
                    host=self.node.name,
                )
            return
        if key in self.config_failures:
            self.status.report_waiting(
                item, "CreateContainerConfigError", 'configmap "spark-conf" not found'
            )
            self.world.events.event(
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
            self.world.events.event(
                item,
                "Pulled",
                f'Container image "{c.get("image")}" already present on machine',
                host=self.node.name,
            )
            self.world.events.event(
                item, "Created", f"Created container: {c['name']}", host=self.node.name
            )
            self.world.events.event(
                item, "Started", f"Started container {c['name']}", host=self.node.name
            )
        self.world.on_started(item, self.node.name)
        # This sync reports ContainerCreating; the next one reports the running containers.
        self.status.report_waiting(item, "ContainerCreating", None)

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
