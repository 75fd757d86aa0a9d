"""kube-scheduler: binds pending pods to Ready nodes with room, or says why it cannot.

Filters (Ready, schedulable, taints, nodeSelector, cpu/memory requests, ReadWriteOncePod claims),
least-allocated scoring with the node name as tie-break (deterministic), and preemption of
lower-priority pods. Messages are kube-scheduler's (``pkg/scheduler/framework/types.go``,
``FitError.Error``; the preemption part from ``framework/preemption``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kubectl_spark.knowledge.times import rfc3339

from . import objects
from .client import SimApiError, pod

if TYPE_CHECKING:
    from .world import World


# volumerestrictions.ErrReasonReadWriteOncePodConflict: a ReadWriteOncePod claim admits one pod
# in the whole cluster, whichever node it is on (the pod may be Terminating on a lost node).
RWOP_CONFLICT = (
    "node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod access mode"
)
# Filter failures that evicting lower-priority pods could cure (Unschedulable, not
# UnschedulableAndUnresolvable): preemption looks for victims there.
RESOLVABLE = ("Insufficient cpu", "Insufficient memory", RWOP_CONFLICT)


class Scheduler:
    def __init__(self, world: World) -> None:
        self.world = world
        self.rwop_claims: set[tuple[str, str]] = set()
        self.claim_users: dict[tuple[str, str], set[str]] = {}

    def tick(self) -> None:
        client = self.world.client
        nodes = client.list("/api/v1/nodes")
        all_pods = client.list("/api/v1/pods")
        pending = sorted(
            (
                p
                for p in all_pods
                if not p["spec"].get("nodeName")
                and not objects.deleting(p)
                and not objects.is_terminal(p)
                and p["spec"].get("schedulerName", "default-scheduler") == "default-scheduler"
            ),
            # FIFO within a priority, as the scheduling queue is: creation order, not names
            key=lambda p: (
                -int(p["spec"].get("priority") or 0),
                p["metadata"]["creationTimestamp"],
                int(p["metadata"].get("resourceVersion") or 0),
            ),
        )
        if not pending:
            return
        used: dict[str, list[float]] = {n["metadata"]["name"]: [0.0, 0.0] for n in nodes}
        for p in all_pods:
            node = p["spec"].get("nodeName")
            if node in used and not objects.is_terminal(p):
                cpu, mem = objects.requests(p)
                used[node][0] += cpu
                used[node][1] += mem
        self._read_claims(all_pods)
        for item in pending:
            self._schedule(item, nodes, used, all_pods)

    def _read_claims(self, all_pods: list[dict[str, Any]]) -> None:
        self.rwop_claims = {
            (c["metadata"]["namespace"], c["metadata"]["name"])
            for c in self.world.client.list("/api/v1/persistentvolumeclaims")
            if "ReadWriteOncePod" in ((c.get("spec") or {}).get("accessModes") or [])
        }
        self.claim_users = {}
        for p in all_pods:
            if p["spec"].get("nodeName") and not objects.is_terminal(p):
                self._use_claims(p)

    def _rwop_claims_of(self, item: dict[str, Any]) -> list[tuple[str, str]]:
        ns = item["metadata"]["namespace"]
        names = [
            (v.get("persistentVolumeClaim") or {}).get("claimName")
            for v in item["spec"].get("volumes") or []
        ]
        return [(ns, n) for n in names if n and (ns, n) in self.rwop_claims]

    def _use_claims(self, item: dict[str, Any]) -> None:
        for claim in self._rwop_claims_of(item):
            self.claim_users.setdefault(claim, set()).add(item["metadata"]["uid"])

    def _fits(
        self, item: dict[str, Any], node: dict[str, Any], used: dict[str, list[float]]
    ) -> str | None:
        """None if the pod fits on the node, else the scheduler's reason."""
        name = node["metadata"]["name"]
        ready = objects.condition(node, "Ready")
        if node["spec"].get("unschedulable"):
            return "node(s) were unschedulable"
        for taint in node["spec"].get("taints") or []:
            if (
                taint.get("effect") in ("NoSchedule", "NoExecute")
                and not objects.tolerates(item, taint)[0]
            ):
                return f"node(s) had untolerated taint {{{taint['key']}: {taint.get('value', '')}}}"
        if ready is None or ready.get("status") != "True":
            return "node(s) were not ready"
        selector = item["spec"].get("nodeSelector") or {}
        node_labels = node["metadata"].get("labels") or {}
        if any(node_labels.get(k) != v for k, v in selector.items()):
            return "node(s) didn't match Pod's node affinity/selector"
        cpu, mem = objects.requests(item)
        alloc = (node.get("status") or {}).get("allocatable") or {}
        if used[name][0] + cpu > objects.quantity(alloc.get("cpu")) + 1e-9:
            return "Insufficient cpu"
        if used[name][1] + mem > objects.quantity(alloc.get("memory")) + 1e-9:
            return "Insufficient memory"
        uid = item["metadata"]["uid"]
        if any(self.claim_users.get(c, set()) - {uid} for c in self._rwop_claims_of(item)):
            return RWOP_CONFLICT
        return None

    def _schedule(
        self,
        item: dict[str, Any],
        nodes: list[dict[str, Any]],
        used: dict[str, list[float]],
        all_pods: list[dict[str, Any]],
    ) -> None:
        reasons: dict[str, int] = {}
        fitting = []
        for node in nodes:
            why = self._fits(item, node, used)
            if why is None:
                fitting.append(node)
            else:
                reasons[why] = reasons.get(why, 0) + 1
        meta = item["metadata"]
        if fitting:

            def score(node: dict[str, Any]) -> tuple[float, str]:
                alloc = (node.get("status") or {}).get("allocatable") or {}
                name = node["metadata"]["name"]
                cpu_frac = used[name][0] / max(objects.quantity(alloc.get("cpu")), 1e-9)
                mem_frac = used[name][1] / max(objects.quantity(alloc.get("memory")), 1e-9)
                return (cpu_frac + mem_frac, name)

            target = min(fitting, key=score)["metadata"]["name"]
            try:
                self.world.client.create(
                    pod(meta["namespace"], meta["name"]) + "/binding",
                    {
                        "apiVersion": "v1",
                        "kind": "Binding",
                        "metadata": {"name": meta["name"]},
                        "target": {"apiVersion": "v1", "kind": "Node", "name": target},
                    },
                )
            except SimApiError as err:
                if err.status in (404, 409):
                    return
                raise
            cpu, mem = objects.requests(item)
            used[target][0] += cpu
            used[target][1] += mem
            self._use_claims(item)
            self.world.events.event(
                item,
                "Scheduled",
                f"Successfully assigned {meta['namespace']}/{meta['name']} to {target}",
                component="default-scheduler",
            )
            return
        if self._preempt(item, nodes, used, all_pods):
            return
        detail = ", ".join(sorted(f"{n} {r}" for r, n in reasons.items()))
        no_victims = sum(n for r, n in reasons.items() if r in RESOLVABLE)
        preemption = ", ".join(
            sorted(
                [f"{no_victims} No preemption victims found for incoming pod"] * bool(no_victims)
                + [f"{len(nodes) - no_victims} Preemption is not helpful for scheduling"]
                * bool(len(nodes) - no_victims)
            )
        )
        message = f"0/{len(nodes)} nodes are available: {detail}. preemption: 0/{len(nodes)} nodes are available: {preemption}."
        cond = objects.condition(item, "PodScheduled")
        if cond is None or cond.get("message") != message:
            conditions = objects.with_condition(
                (item.get("status") or {}).get("conditions"),
                {
                    "type": "PodScheduled",
                    "status": "False",
                    "lastProbeTime": None,
                    "lastTransitionTime": rfc3339(self.world.clock.now()),
                    "reason": "Unschedulable",
                    "message": message,
                },
            )
            self.world.client.patch(
                pod(meta["namespace"], meta["name"]) + "/status",
                {"status": {"conditions": conditions}},
            )
            self.world.events.event(
                item, "FailedScheduling", message, type_="Warning", component="default-scheduler"
            )

    def _preempt(
        self,
        item: dict[str, Any],
        nodes: list[dict[str, Any]],
        used: dict[str, list[float]],
        all_pods: list[dict[str, Any]],
    ) -> bool:
        priority = int(item["spec"].get("priority") or 0)
        if priority <= 0 or item["spec"].get("preemptionPolicy") == "Never":
            return False
        cpu, mem = objects.requests(item)
        best: tuple[int, str, list[dict[str, Any]]] | None = None
        for node in nodes:
            name = node["metadata"]["name"]
            victims_pool = sorted(
                (
                    p
                    for p in all_pods
                    if p["spec"].get("nodeName") == name
                    and not objects.is_terminal(p)
                    and not objects.deleting(p)
                    and int(p["spec"].get("priority") or 0) < priority
                ),
                key=lambda p: (
                    int(p["spec"].get("priority") or 0),
                    p["metadata"]["creationTimestamp"],
                ),
            )
            trial = {k: list(v) for k, v in used.items()}
            victims = []
            for victim in victims_pool:
                if self._fits(item, node, trial) is None:
                    break
                vc, vm = objects.requests(victim)
                trial[name][0] -= vc
                trial[name][1] -= vm
                victims.append(victim)
            if (
                victims
                and self._fits(item, node, trial) is None
                and (best is None or len(victims) < best[0])
            ):
                best = (len(victims), name, victims)
        if best is None:
            return False
        _, node_name, victims = best
        for victim in victims:
            self.world.preempt(victim, item, node_name)
        meta = item["metadata"]
        self.world.client.patch(
            pod(meta["namespace"], meta["name"]) + "/status",
            {"status": {"nominatedNodeName": node_name}},
        )
        del cpu, mem
        return True
