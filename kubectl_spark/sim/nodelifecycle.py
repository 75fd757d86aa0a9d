"""The node lifecycle and taint-eviction controllers, and PodGC's out-of-service path.

A node whose Lease is not renewed for the grace period becomes Ready=Unknown
(NodeStatusUnknown, "Kubelet stopped posting node status."), is tainted unreachable, its pods'
Ready conditions turn False, and after their tolerationSeconds the taint manager deletes them
gracefully (a delete that never completes while the kubelet is away).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from kubectl_spark.knowledge.times import parse_time, rfc3339

from . import objects
from .client import SimApiError, pod

if TYPE_CHECKING:
    from .world import World

GRACE_SECONDS = 40
UNREACHABLE = "node.kubernetes.io/unreachable"
OUT_OF_SERVICE = "node.kubernetes.io/out-of-service"


class NodeLifecycle:
    def __init__(self, world: World) -> None:
        self.world = world

    def tick(self) -> None:
        client = self.world.client
        now = self.world.clock.now()
        leases = {
            lease["metadata"]["name"]: lease
            for lease in client.list(
                "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases"
            )
        }
        all_pods: list[dict[str, Any]] | None = None
        for node in client.list("/api/v1/nodes"):
            name = node["metadata"]["name"]
            lease = leases.get(name)
            renew = (lease or {}).get("spec", {}).get("renewTime")
            stale = renew is None or (now - parse_time(renew)).total_seconds() > GRACE_SECONDS
            ready = objects.condition(node, "Ready") or {}
            taints = list(node["spec"].get("taints") or [])
            if stale and ready.get("status") != "Unknown":
                self._mark_unknown(node, now)
                if all_pods is None:
                    all_pods = client.list("/api/v1/pods")
                for item in all_pods:
                    if item["spec"].get("nodeName") == name and not objects.is_terminal(item):
                        self._pod_not_ready(item, now)
                fresh = client.get(f"/api/v1/nodes/{name}") or node
                taints = list(fresh["spec"].get("taints") or [])
            elif (
                not stale
                and ready.get("status") == "True"
                and any(t.get("key") == UNREACHABLE for t in taints)
            ):
                taints = [t for t in taints if t.get("key") != UNREACHABLE]
                client.patch(f"/api/v1/nodes/{name}", {"spec": {"taints": taints or None}})
            if any(t.get("effect") == "NoExecute" for t in taints):
                if all_pods is None:
                    all_pods = client.list("/api/v1/pods")
                self._taint_eviction(
                    name, taints, [p for p in all_pods if p["spec"].get("nodeName") == name], now
                )
                if (
                    any(t.get("key") == OUT_OF_SERVICE for t in taints)
                    and ready.get("status") != "True"
                ):
                    self._pod_gc_out_of_service(name, now)

    def _mark_unknown(self, node: dict[str, Any], now: datetime) -> None:
        stamp = rfc3339(now)
        name = node["metadata"]["name"]
        conditions = []
        for cond in (node.get("status") or {}).get("conditions") or []:
            conditions.append(
                {
                    **cond,
                    "status": "Unknown",
                    "reason": "NodeStatusUnknown",
                    "message": "Kubelet stopped posting node status.",
                    "lastTransitionTime": stamp,
                }
            )
        taints = [t for t in node["spec"].get("taints") or [] if t.get("key") != UNREACHABLE]
        taints += [
            {"key": UNREACHABLE, "effect": "NoSchedule", "timeAdded": stamp},
            {"key": UNREACHABLE, "effect": "NoExecute", "timeAdded": stamp},
        ]
        self.world.client.patch(
            f"/api/v1/nodes/{name}/status", {"status": {"conditions": conditions}}
        )
        self.world.client.patch(f"/api/v1/nodes/{name}", {"spec": {"taints": taints}})
        self.world.events.event(
            node,
            "NodeNotReady",
            f"Node {name} status is now: NodeNotReady",
            component="node-controller",
        )

    def _pod_not_ready(self, item: dict[str, Any], now: datetime) -> None:
        meta = item["metadata"]
        conditions = objects.with_condition(
            (item.get("status") or {}).get("conditions"),
            {
                "type": "Ready",
                "status": "False",
                "lastProbeTime": None,
                "lastTransitionTime": rfc3339(now),
            },
        )
        try:
            self.world.client.patch(
                pod(meta["namespace"], meta["name"]) + "/status",
                {"status": {"conditions": conditions}},
            )
        except SimApiError as err:
            if err.status != 404:
                raise
            return
        self.world.events.event(
            item, "NodeNotReady", "Node is not ready", type_="Warning", component="node-controller"
        )

    def _taint_eviction(
        self, node: str, taints: list[dict[str, Any]], bound: list[dict[str, Any]], now: datetime
    ) -> None:
        for item in bound:
            if objects.deleting(item):
                continue
            due: datetime | None = None
            for taint in taints:
                if taint.get("effect") != "NoExecute":
                    continue
                tolerated, seconds = objects.tolerates(item, taint)
                added = parse_time(taint["timeAdded"]) if taint.get("timeAdded") else now
                when = (
                    now
                    if not tolerated
                    else (None if seconds is None else added + timedelta(seconds=seconds))
                )
                if when is not None and (due is None or when < due):
                    due = when
            if due is not None and due <= now:
                self._evict(item, now)
        del node

    def _evict(self, item: dict[str, Any], now: datetime) -> None:
        meta = item["metadata"]
        conditions = objects.with_disruption(
            item,
            "DeletionByTaintManager",
            "Taint manager: deleting due to NoExecute taint",
            rfc3339(now),
        )
        try:
            self.world.client.patch(
                pod(meta["namespace"], meta["name"]) + "/status",
                {"status": {"conditions": conditions}},
            )
            self.world.events.event(
                item,
                "TaintManagerEviction",
                f"Marking for deletion Pod {meta['namespace']}/{meta['name']}",
                component="taint-eviction-controller",
            )
            self.world.client.delete(pod(meta["namespace"], meta["name"]), uid=meta["uid"])
        except SimApiError as err:
            if err.status not in (404, 409):
                raise

    def _pod_gc_out_of_service(self, node: str, now: datetime) -> None:
        """PodGC's non-graceful node shutdown path.

        Terminating pods on a NotReady node with the out-of-service taint are marked Failed and
        force-deleted.
        """
        for item in self.world.client.list("/api/v1/pods", fieldSelector=f"spec.nodeName={node}"):
            if not objects.deleting(item):
                continue
            meta = item["metadata"]
            conditions = objects.with_disruption(
                item, "DeletionByPodGC", "PodGC: node no longer exists", rfc3339(now)
            )
            try:
                if not objects.is_terminal(item):
                    self.world.client.patch(
                        pod(meta["namespace"], meta["name"]) + "/status",
                        {"status": {"phase": "Failed", "conditions": conditions}},
                    )
                self.world.client.delete(
                    pod(meta["namespace"], meta["name"]), grace=0, uid=meta["uid"]
                )
            except SimApiError as err:
                if err.status not in (404, 409):
                    raise
