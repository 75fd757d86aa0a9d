"""The attach/detach controller for ReadWriteOnce volumes.

A volume is attached to one node at a time (a VolumeAttachment). A pod on another node waits in
ContainerCreating with FailedAttachVolume "Multi-Attach error" events until no pod object on the
old node uses the volume any more (or the old node is tainted out-of-service).
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Any

from . import objects
from .client import VOLUME_ATTACHMENTS, SimApiError

if TYPE_CHECKING:
    from .world import World

ATTACHER = "csi.sim.kubectl-spark.io"


def rwo_volumes(item: dict[str, Any], claims: dict[tuple[str, str], dict[str, Any]]) -> list[str]:
    """The persistent volume names of the pod's ReadWriteOnce claims."""
    out = []
    for vol in item["spec"].get("volumes") or []:
        claim = (vol.get("persistentVolumeClaim") or {}).get("claimName")
        pvc = claims.get((item["metadata"]["namespace"], claim)) if claim else None
        if pvc and "ReadWriteOnce" in (pvc.get("spec") or {}).get("accessModes", []):
            out.append(str(pvc["spec"].get("volumeName") or f"pv-{pvc['metadata']['uid'][:8]}"))
    return out


class AttachDetach:
    def __init__(self, world: World) -> None:
        self.world = world

    def tick(self) -> None:
        client = self.world.client
        claims = {
            (c["metadata"]["namespace"], c["metadata"]["name"]): c
            for c in client.list("/api/v1/persistentvolumeclaims")
        }
        if not claims:
            return
        all_pods = client.list("/api/v1/pods")
        nodes = {n["metadata"]["name"]: n for n in client.list("/api/v1/nodes")}
        attachments = client.list(VOLUME_ATTACHMENTS)
        in_use: dict[tuple[str, str], list[dict[str, Any]]] = {}
        for item in all_pods:
            node = item["spec"].get("nodeName")
            if node and not objects.is_terminal(item):
                for pv in rwo_volumes(item, claims):
                    in_use.setdefault((pv, node), []).append(item)
        # detach what no pod on that node uses any more (or what out-of-service released)
        for va in attachments:
            pv = va["spec"]["source"].get("persistentVolumeName")
            node = va["spec"]["nodeName"]
            out_of_service = any(
                t.get("key") == "node.kubernetes.io/out-of-service"
                for t in (nodes.get(node) or {}).get("spec", {}).get("taints") or []
            )
            ready = any(
                c.get("type") == "Ready" and c.get("status") == "True"
                for c in ((nodes.get(node) or {}).get("status") or {}).get("conditions") or []
            )
            # From an unreachable node nothing is detached (the kubelet cannot confirm the unmount;
            # the 6-minute forced detach is off, disable-force-detach-on-timeout): only the
            # out-of-service taint, or someone deleting the VolumeAttachment, frees the volume.
            if out_of_service or ((pv, node) not in in_use and ready):
                client.delete(f"{VOLUME_ATTACHMENTS}/{va['metadata']['name']}")
        attachments = client.list(VOLUME_ATTACHMENTS)
        attached = {va["spec"]["source"].get("persistentVolumeName"): va for va in attachments}
        for (pv, node), users in sorted(in_use.items()):
            current = attached.get(pv)
            if current is None:
                name = "csi-" + hashlib.sha256(f"{ATTACHER}/{pv}/{node}".encode()).hexdigest()[:40]
                try:
                    va = client.create(
                        VOLUME_ATTACHMENTS,
                        {
                            "metadata": {"name": name},
                            "spec": {
                                "attacher": ATTACHER,
                                "nodeName": node,
                                "source": {"persistentVolumeName": pv},
                            },
                        },
                    )
                    client.patch(
                        f"{VOLUME_ATTACHMENTS}/{name}/status", {"status": {"attached": True}}
                    )
                    attached[pv] = va
                except SimApiError as err:
                    if err.status != 409:
                        raise
            elif current["spec"]["nodeName"] != node:
                for user in users:
                    self.world.events.event(
                        user,
                        "FailedAttachVolume",
                        f'Multi-Attach error for volume "{pv}" Volume is already exclusively attached to one node and can\'t be attached to another',
                        type_="Warning",
                        component="attachdetach-controller",
                    )

    def ready(self, item: dict[str, Any], node: str) -> bool:
        client = self.world.client
        claims = {
            (c["metadata"]["namespace"], c["metadata"]["name"]): c
            for c in client.list(
                f"/api/v1/namespaces/{item['metadata']['namespace']}/persistentvolumeclaims"
            )
        }
        volumes = rwo_volumes(item, claims)
        if not volumes:
            return True
        attached = {
            va["spec"]["source"].get("persistentVolumeName"): va
            for va in client.list(VOLUME_ATTACHMENTS)
        }
        return all(
            pv in attached
            and attached[pv]["spec"]["nodeName"] == node
            and (attached[pv].get("status") or {}).get("attached")
            for pv in volumes
        )
