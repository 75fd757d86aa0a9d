"""The Deployment and ReplicaSet controllers, as far as Spark 4.2's Deployment allocator needs them.

A stand-in for the emulator (on the real control plane kube-controller-manager runs them): a
Deployment gets one ReplicaSet ``<name>-<pod-template-hash>`` it controls, with its replicas; a
ReplicaSet keeps that many live pods ``<rs>-<5 chars>`` from its template (labels plus
``pod-template-hash``), creating the missing ones and deleting the surplus, those with the
lowest ``controller.kubernetes.io/pod-deletion-cost`` first (pkg/controller/replicaset). A
failed pod (evicted, say) is no longer live and is replaced; a container that exits restarts
in place (the template's restartPolicy Always). No rollouts, no status beyond replicas.
"""

from __future__ import annotations

import copy
import hashlib
import json
from typing import TYPE_CHECKING, Any

from . import objects
from .client import SimApiError, pod, pods

if TYPE_CHECKING:
    from .world import World

DELETION_COST = "controller.kubernetes.io/pod-deletion-cost"
APPS = "/apis/apps/v1"


def _owned_by(item: dict[str, Any], uid: str) -> bool:
    return any(
        r.get("uid") == uid and r.get("controller")
        for r in item["metadata"].get("ownerReferences") or []
    )


class DeploymentControllers:
    def __init__(self, world: World) -> None:
        self.world = world

    def tick(self) -> None:
        client = self.world.client
        deployments = client.list(f"{APPS}/deployments")
        if not deployments:
            return
        sets = client.list(f"{APPS}/replicasets")
        for deployment in deployments:
            try:
                self._deployment(deployment, sets)
            except SimApiError as err:
                if err.status not in (404, 409):
                    raise
        for rs in client.list(f"{APPS}/replicasets"):
            try:
                self._replicaset(rs)
            except SimApiError as err:
                if err.status not in (404, 409):
                    raise

    def _deployment(self, deployment: dict[str, Any], sets: list[dict[str, Any]]) -> None:
        meta = deployment["metadata"]
        if meta.get("deletionTimestamp"):
            return
        ns = meta["namespace"]
        spec = deployment.get("spec") or {}
        template = copy.deepcopy(spec.get("template") or {})
        digest = hashlib.sha256(json.dumps(template, sort_keys=True).encode()).hexdigest()[:10]
        replicas = int(spec.get("replicas") or 0)
        mine = next((s for s in sets if _owned_by(s, meta["uid"])), None)
        if mine is None:
            labels = {
                **(template.get("metadata") or {}).get("labels", {}),
                "pod-template-hash": digest,
            }
            template.setdefault("metadata", {})["labels"] = labels
            self.world.client.create(
                f"{APPS}/namespaces/{ns}/replicasets",
                {
                    "metadata": {
                        "name": f"{meta['name']}-{digest}",
                        "labels": labels,
                        "ownerReferences": [objects.owner_ref(deployment)],
                    },
                    "spec": {
                        "replicas": replicas,
                        "selector": {"matchLabels": labels},
                        "template": template,
                    },
                },
            )
        elif int((mine.get("spec") or {}).get("replicas") or 0) != replicas:
            self.world.client.patch(
                f"{APPS}/namespaces/{ns}/replicasets/{mine['metadata']['name']}",
                {"spec": {"replicas": replicas}},
            )

    def _replicaset(self, rs: dict[str, Any]) -> None:
        meta = rs["metadata"]
        if meta.get("deletionTimestamp"):
            return
        ns = meta["namespace"]
        client = self.world.client
        owned = [
            p
            for p in client.list(pods(ns))
            if _owned_by(p, meta["uid"]) and not objects.deleting(p) and not objects.is_terminal(p)
        ]
        want = int((rs.get("spec") or {}).get("replicas") or 0)
        template = (rs.get("spec") or {}).get("template") or {}
        for _ in range(want - len(owned)):
            body = copy.deepcopy(template)
            body.setdefault("metadata", {})
            body["metadata"]["generateName"] = f"{meta['name']}-"
            body["metadata"]["ownerReferences"] = [objects.owner_ref(rs)]
            client.create(pods(ns), body)
        surplus = len(owned) - want
        if surplus > 0:  # the lowest deletion cost first, then the newest (ActivePodsWithRanks)

            def cost(item: dict[str, Any]) -> int:
                value = (item["metadata"].get("annotations") or {}).get(DELETION_COST, "0")
                return int(value) if str(value).lstrip("-").isdigit() else 0

            newest = sorted(owned, key=lambda p: p["metadata"]["creationTimestamp"], reverse=True)
            for item in sorted(newest, key=cost)[:surplus]:
                client.delete(pod(ns, item["metadata"]["name"]), uid=item["metadata"]["uid"])
