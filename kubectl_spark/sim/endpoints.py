"""The Endpoints controller, as far as the API server's service proxy needs it.

A stand-in for the emulator (on the real control plane kube-controller-manager's
``endpoint-controller`` runs; pkg/controller/endpoint/endpoints_controller.go): for each Service
with a selector, an Endpoints object of the same name whose addresses are the matching pods'
IPs with a ``targetRef`` to each pod (the service proxy checks it, pkg/registry/core/service/
storage/storage.go ``isValidAddress``), ready pods under ``addresses`` and the others under
``notReadyAddresses``; the ports are the Service's, a named ``targetPort`` looked up in the
pod's containers (``podutil.FindPort``). Terminal and deleting pods are left out
(``ShouldPodBeInEndpoints``). One subset per set of ports, as ``RepackSubsets`` leaves them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from . import objects
from .client import SimApiError

if TYPE_CHECKING:
    from .world import World

MANAGED_BY = "endpoints.kubernetes.io/managed-by"
CONTROLLER = "endpoint-controller"


def _port_of(pod: dict[str, Any], target: Any) -> int | None:
    if isinstance(target, int):
        return target
    for container in (pod.get("spec") or {}).get("containers") or []:
        for port in container.get("ports") or []:
            if port.get("name") == target:
                return int(port.get("containerPort") or 0) or None
    return None


def _ready(pod: dict[str, Any]) -> bool:
    ready = objects.condition(pod, "Ready")
    return ready is not None and ready.get("status") == "True"


def desired(service: dict[str, Any], pods: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The Endpoints subsets for a Service and the pods its selector matches."""
    by_ports: dict[tuple[tuple[str, int, str], ...], dict[str, list[dict[str, Any]]]] = {}
    for pod in pods:
        ip = (pod.get("status") or {}).get("podIP")
        if not ip or objects.is_terminal(pod) or objects.deleting(pod):
            continue
        ports = []
        for sp in (service.get("spec") or {}).get("ports") or []:
            number = _port_of(pod, sp.get("targetPort", sp.get("port")))
            if number is not None:
                ports.append((str(sp.get("name") or ""), number, str(sp.get("protocol") or "TCP")))
        if not ports:
            continue
        meta = pod["metadata"]
        address = {
            "ip": ip,
            "nodeName": (pod.get("spec") or {}).get("nodeName"),
            "targetRef": {
                "kind": "Pod",
                "namespace": meta["namespace"],
                "name": meta["name"],
                "uid": meta["uid"],
            },
        }
        lists = by_ports.setdefault(tuple(ports), {"addresses": [], "notReadyAddresses": []})
        lists["addresses" if _ready(pod) else "notReadyAddresses"].append(address)
    subsets = []
    for port_set, addresses in by_ports.items():
        subset: dict[str, Any] = {
            key: sorted(value, key=lambda a: a["ip"]) for key, value in addresses.items() if value
        }
        subset["ports"] = [{"name": n, "port": p, "protocol": proto} for n, p, proto in port_set]
        subsets.append(subset)
    return subsets


class EndpointsController:
    def __init__(self, world: World) -> None:
        self.world = world

    def tick(self) -> None:
        client = self.world.client
        services = [
            s for s in client.list("/api/v1/services") if (s.get("spec") or {}).get("selector")
        ]
        if not services:
            return
        pods = client.list("/api/v1/pods")
        for service in services:
            try:
                self._sync(service, pods)
            except SimApiError as err:
                # 422: an address the API refuses (a loopback one): the real controller logs
                # it and retries, the Endpoints left as they were.
                if err.status not in (404, 409, 422):
                    raise

    def _sync(self, service: dict[str, Any], pods: list[dict[str, Any]]) -> None:
        client = self.world.client
        meta = service["metadata"]
        namespace, name = meta["namespace"], meta["name"]
        selector = service["spec"]["selector"]
        matching = [
            p
            for p in pods
            if p["metadata"]["namespace"] == namespace
            and all((p["metadata"].get("labels") or {}).get(k) == v for k, v in selector.items())
        ]
        subsets = desired(service, matching)
        path = f"/api/v1/namespaces/{namespace}/endpoints"
        current = client.get(f"{path}/{name}")
        labels = {**(meta.get("labels") or {}), MANAGED_BY: CONTROLLER}
        if current is None:
            client.create(
                path,
                {
                    "apiVersion": "v1",
                    "kind": "Endpoints",
                    "metadata": {"name": name, "namespace": namespace, "labels": labels},
                    **({"subsets": subsets} if subsets else {}),  # none: omitted, as kube does
                },
            )
        elif (current.get("subsets") or []) != subsets:
            client.request("PUT", f"{path}/{name}", {**current, "subsets": subsets})
