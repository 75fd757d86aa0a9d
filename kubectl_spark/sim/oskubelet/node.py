"""The OS kubelet's node agent: a Node registered, Ready heartbeats and its Lease renewed.

As pkg/kubelet's node status and node lease controllers, at the test bed's short period (the
real control plane there runs with a 6 s node-monitor grace).
"""

from __future__ import annotations

import time
from typing import Any

from kubectl_spark.knowledge.clock import Clock
from kubectl_spark.knowledge.times import rfc3339, rfc3339_micro
from kubectl_spark.sim import nodestatus, objects
from kubectl_spark.sim.client import Client, SimApiError

from .runs import NodeRun

LEASE_RENEW_SECONDS = 1.0


class NodeAgent:
    def __init__(self, client: Client, clock: Clock) -> None:
        self.client = client
        self.clock = clock

    def register(self, node: NodeRun) -> None:
        try:
            self.client.create("/api/v1/nodes", nodestatus.node_object(node.name))
        except SimApiError as err:
            if err.status != 409:
                raise
        self.beat(node, force=True)

    def _status(self, node: NodeRun) -> dict[str, Any]:
        return nodestatus.ready_status(
            node.name,
            rfc3339(self.clock.now()),
            {"cpu": "8", "memory": "32Gi", "pods": "110"},
            ("127.0.0.1", node.port),
            "kubectl-spark-os://1",
            "v1.33.0",
        )

    def beat(self, node: NodeRun, *, force: bool = False) -> None:
        if node.state != "up":
            return
        now = time.monotonic()
        if not force and now - node.last_lease < LEASE_RENEW_SECONDS:
            return
        current = self.client.get(f"/api/v1/nodes/{node.name}")
        ready = objects.condition(current, "Ready") if current else None
        if force or ready is None or ready.get("status") != "True":
            self.client.patch(f"/api/v1/nodes/{node.name}/status", {"status": self._status(node)})
        path = f"{nodestatus.LEASES}/{node.name}"
        renewed = rfc3339_micro(self.clock.now())
        if self.client.get(path) is None:
            self.client.create(nodestatus.LEASES, nodestatus.lease(node.name, renewed))
        else:
            self.client.patch(path, {"spec": {"renewTime": renewed}})
        node.last_lease = now
