"""The two backends a test can run on: the project's emulator and a real control plane.

Both give the same handles (URL, CA, admin token, a kubeconfig writer, a simulated World, log
writing, nodes), so one test body runs on either. The real control plane is started once per
test worker and emptied between tests (:func:`reset`): its start costs seconds, a reset less.
Where the two answer differently, the real control plane is right.
"""

from __future__ import annotations

import os
import time
from collections.abc import Generator
from pathlib import Path
from typing import Any, Protocol

import pytest

from kubectl_spark.cluster.apiserver.embedded import EmbeddedApiServer, EmulatorOptions
from kubectl_spark.knowledge.clock import Clock, SystemClock
from kubectl_spark.sim.client import Client, SimApiError
from kubectl_spark.sim.kubeletapi import KubeletApi
from kubectl_spark.sim.world import World
from tests.controlplane.build import built
from tests.controlplane.launcher import ControlPlane

BACKENDS = ("emulator", "real")
REQUIRE_REAL = "KUBECTL_SPARK_REQUIRE_CONTROLPLANE"
SYSTEM_NAMESPACES = {"default", "kube-system", "kube-public", "kube-node-lease"}


class Bed(Protocol):
    kind: str
    url: str
    ca_pem: bytes
    token: str

    def write_kubeconfig(self, path: str | os.PathLike[str], **kwargs: Any) -> Path: ...
    def world(self, clock: Clock | None = None) -> World: ...
    def add_node(self, name: str) -> None: ...
    def append_log(
        self, namespace: str, pod: str, container: str, text: str, *, rotate: bool = False
    ) -> None: ...


class EmulatorBed:
    kind = "emulator"

    def __init__(self, server: EmbeddedApiServer) -> None:
        self.server = server
        self.url = server.url
        self.ca_pem = server.ca_pem
        self.token = server.token

    def write_kubeconfig(self, path: str | os.PathLike[str], **kwargs: Any) -> Path:
        return self.server.write_kubeconfig(path, **kwargs)

    def world(self, clock: Clock | None = None) -> World:
        return World.for_server(self.server, clock or self.server.options.clock)

    def add_node(self, name: str) -> None:
        _create_node(Client(self.url, self.token, self.ca_pem), name, None)

    def append_log(
        self, namespace: str, pod: str, container: str, text: str, *, rotate: bool = False
    ) -> None:
        self.server.append_log(namespace, pod, container, text, rotate=rotate)


class RealBed:
    """A real control plane; nodes it adds answer log requests through a simulated kubelet."""

    kind = "real"

    def __init__(self, plane: ControlPlane) -> None:
        self.plane = plane
        self.url = plane.url
        self.ca_pem = plane.ca_pem
        self.token = plane.token
        self.kubelets = KubeletApi(SystemClock())
        self.worlds: list[World] = []

    def write_kubeconfig(self, path: str | os.PathLike[str], **kwargs: Any) -> Path:
        return self.plane.write_kubeconfig(path, **kwargs)

    def world(self, clock: Clock | None = None) -> World:
        made = World.for_control_plane(self.url, self.token, self.ca_pem, clock or SystemClock())
        self.worlds.append(made)
        return made

    def add_node(self, name: str) -> None:
        port = self.kubelets.open(name)
        _create_node(Client(self.url, self.token, self.ca_pem), name, ("127.0.0.1", port))

    def append_log(
        self, namespace: str, pod: str, container: str, text: str, *, rotate: bool = False
    ) -> None:
        client = Client(self.url, self.token, self.ca_pem)
        try:
            item = client.get(f"/api/v1/namespaces/{namespace}/pods/{pod}")
        finally:
            client.close()
        assert item is not None, f"no pod {namespace}/{pod}"
        uid = item["metadata"]["uid"]
        if rotate:
            self.kubelets.rotate(namespace, pod, uid, container)
        self.kubelets.append(namespace, pod, uid, container, text)

    def close(self) -> None:
        for made in self.worlds:
            made.close()
        self.worlds.clear()
        self.kubelets.stop()


def grant_edit_to_default_account(client: Client, name: str) -> None:
    """RBAC on the real control plane (the emulator allows by default): the default service
    account of "default" may edit, as a Spark driver's account may create and delete pods."""
    client.create(
        "/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings",
        {
            "metadata": {"name": name},
            "roleRef": {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "ClusterRole",
                "name": "edit",
            },
            "subjects": [{"kind": "ServiceAccount", "name": "default", "namespace": "default"}],
        },
    )


def _create_node(client: Client, name: str, endpoint: tuple[str, int] | None) -> None:
    address, port = endpoint or ("10.0.0.9", 10250)
    try:
        client.create("/api/v1/nodes", {"metadata": {"name": name}})
        client.patch(
            f"/api/v1/nodes/{name}/status",
            {
                "status": {
                    "addresses": [{"type": "InternalIP", "address": address}],
                    "daemonEndpoints": {"kubeletEndpoint": {"Port": port}},
                }
            },
        )
    finally:
        client.close()


# ------------------------------------------------------------------------------ the real one
def real_available() -> bool:
    return built() is not None


def skip_or_fail_without_real() -> None:
    if not real_available():
        message = (
            "the real control plane is not built (python -m tests.controlplane.build; "
            "scripts/dev test builds it where Go is installed)"
        )
        if os.environ.get(REQUIRE_REAL):
            pytest.fail(f"{message}, and {REQUIRE_REAL} requires it")
        pytest.skip(message)


def reset(plane: ControlPlane) -> None:
    """Empty what a test left: its namespaces, pods, Jobs, CRs, Events, nodes and leases.

    Pods go with grace 0 and no finalizers (no kubelet would ever finish them); the reset
    returns once the nodes and pods are gone, so the next test starts on an empty cluster.
    """
    client = Client(plane.url, plane.token, plane.ca_pem)
    try:
        _reset(client)
    finally:
        client.close()


KEPT_NAMES = {"kube-root-ca.crt", "kubernetes"}  # what the control plane itself keeps


def _reset(client: Client) -> None:
    _remove_objects(client)
    deadline = time.monotonic() + 30
    _wait_nodes_and_pods_gone(client, deadline)
    _remove_namespaces(client, deadline)


def _not_system(item: dict[str, Any]) -> bool:
    meta = item["metadata"]
    return (
        meta.get("namespace") != "kube-system"
        and meta["name"] not in KEPT_NAMES
        and not meta["name"].startswith("system:")  # the bootstrap RBAC of kube-public
    )


def _remove_objects(client: Client) -> None:
    paths = [
        # A fence's admission policy outlives its test otherwise, and refuses the next one's pods.
        "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings",
        "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies",
        "/apis/rbac.authorization.k8s.io/v1/rolebindings",
        "/apis/sparkoperator.k8s.io/v1beta2/sparkapplications",
        "/apis/spark.apache.org/v1/sparkapplications",
        "/apis/spark.apache.org/v1/sparkclusters",
        "/apis/batch/v1/jobs",
        "/api/v1/pods",
        *(f"/api/v1/{p}" for p in ("configmaps", "events", "persistentvolumeclaims", "services")),
        "/apis/policy/v1/poddisruptionbudgets",
        "/apis/networking.k8s.io/v1/networkpolicies",
        "/apis/coordination.k8s.io/v1/leases",
        "/api/v1/nodes",
        "/api/v1/persistentvolumes",
    ]
    # An APIService whose server is gone fails discovery, and a namespace is then never
    # deleted (the namespace controller must know every resource to empty it).
    for item in client.list("/apis/apiregistration.k8s.io/v1/apiservices"):
        if (item.get("spec") or {}).get("service"):
            client.delete(f"/apis/apiregistration.k8s.io/v1/apiservices/{item['metadata']['name']}")
    # What `kubectl spark recorder` makes outside its namespace (cluster-wide RBAC, the front
    # proxy's trust reader in kube-system), by the manifests' label.
    rbac = "/apis/rbac.authorization.k8s.io/v1"
    for path in (f"{rbac}/clusterroles", f"{rbac}/clusterrolebindings",
                 f"{rbac}/namespaces/kube-system/rolebindings"):  # fmt: skip
        for item in client.list(
            path, labelSelector="app.kubernetes.io/name=kubectl-spark-recorder"
        ):
            client.delete(f"{path}/{item['metadata']['name']}")
    policies = 0
    for path in paths:
        for item in client.list(path):
            if _not_system(item):
                _remove(client, path, item)
                policies += "admissionregistration" in path
    if policies:
        time.sleep(2)  # kube-apiserver drops a deleted policy from its informer a moment later


def _wait_nodes_and_pods_gone(client: Client, deadline: float) -> None:
    """A node deleted with a finalizer lingers: the next test's kubelet would find it and then
    lose it. Wait until the cluster-wide things a test makes are gone."""
    while client.list("/api/v1/nodes") or [
        p for p in client.list("/api/v1/pods") if _not_system(p)
    ]:
        if time.monotonic() > deadline:
            raise AssertionError("nodes or pods still there 30 s after the reset")
        for item in client.list("/api/v1/pods"):
            if _not_system(item):
                _remove(client, "/api/v1/pods", item)
        time.sleep(0.1)


def _remove_namespaces(client: Client, deadline: float) -> None:
    collections: list[tuple[str, bool]] | None = None
    for item in client.list("/api/v1/namespaces"):
        name = item["metadata"]["name"]
        if name not in SYSTEM_NAMESPACES:
            try:
                client.delete(f"/api/v1/namespaces/{name}")
            except SimApiError as err:
                if err.status != 404:
                    raise
            if collections is None:
                collections = _namespaced_collections(client)
            _finish(client, name, collections)
    left: list[str] = []
    while time.monotonic() < deadline:
        left = [
            n["metadata"]["name"]
            for n in client.list("/api/v1/namespaces")
            if n["metadata"]["name"] not in SYSTEM_NAMESPACES
        ]
        if not left:
            return
        for name in left:  # what a test created in them since
            for item in client.list(f"/api/v1/namespaces/{name}/pods"):
                _remove(client, "/api/v1/pods", item)
        time.sleep(0.2)
    raise AssertionError(f"namespaces still terminating after 30 s: {left}")


def _namespaced_collections(client: Client) -> list[tuple[str, bool]]:
    """Each namespaced resource that can be listed, as a path with ``{namespace}`` in it, and
    whether it can be deleted as a collection: what the namespace controller empties
    (``deletion``'s discovery of the preferred versions, kubernetes
    pkg/controller/namespace/deletion)."""
    found: list[tuple[str, bool]] = []
    versions = ["v1"] + [
        group["preferredVersion"]["groupVersion"]
        for group in client.request("GET", "/apis")["groups"]
    ]
    for version in versions:
        base = "/api/v1" if version == "v1" else f"/apis/{version}"
        try:
            resources = client.request("GET", base)["resources"]
        except SimApiError:
            continue  # an aggregated API whose server is gone
        found += [
            (f"{base}/namespaces/{{namespace}}/{r['name']}", "deletecollection" in r["verbs"])
            for r in resources
            if r.get("namespaced") and "/" not in r["name"] and "list" in (r.get("verbs") or ())
        ]
    return found


def _finish(client: Client, name: str, collections: list[tuple[str, bool]]) -> None:
    """A deleted namespace emptied and finalized now, as its controller would 5 s later.

    kube-controller-manager waits 5 s before it empties a deleted namespace
    (``namespaceDeletionGracePeriod``, pkg/controller/namespace/namespace_controller.go: for
    HA API servers to see the deletion), which every test on the real control plane waited in
    its reset. Nothing can be created in a terminating namespace, so once each of its
    collections is deleted and every one listed empty, nothing is left for the controller to
    do: the namespace is finalized (its ``finalize`` subresource, with no finalizer). Where
    anything is left (an object with finalizers, or of a kind that cannot be deleted as a
    collection), the controller finishes it as before: no object outlives its namespace.
    """
    options = {"kind": "DeleteOptions", "apiVersion": "v1", "gracePeriodSeconds": 0}
    try:
        for path, whole in collections:
            if whole:
                client.request("DELETE", path.format(namespace=name), options)
        for path, _ in collections:
            if client.request("GET", path.format(namespace=name), query={"limit": 1})["items"]:
                return
        namespace = client.get(f"/api/v1/namespaces/{name}")
        if namespace is None:
            return
        namespace["spec"] = {"finalizers": []}
        client.request("PUT", f"/api/v1/namespaces/{name}/finalize", namespace)
    except SimApiError:
        return  # the controller's way, as before


def _remove(client: Client, collection: str, item: dict[str, Any]) -> None:
    meta = item["metadata"]
    ns = meta.get("namespace")
    base = collection.rsplit("/", 1)
    path = (
        f"{base[0]}/namespaces/{ns}/{base[1]}/{meta['name']}"
        if ns
        else (f"{collection}/{meta['name']}")
    )
    try:
        if meta.get("finalizers"):
            client.patch(path, {"metadata": {"finalizers": None}})
        client.delete(path, grace=0, propagation="Background")
    except SimApiError as err:
        if err.status not in (404, 409):
            raise


def emulator_bed() -> Generator[EmulatorBed, None, None]:
    with EmbeddedApiServer(EmulatorOptions(bookmark_interval=0.5)) as server:
        yield EmulatorBed(server)
