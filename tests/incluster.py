"""Reaching a process on this machine as the cluster would: through a Service's endpoint.

The API server's service proxy takes an Endpoints address only if it is a pod's IP, and
kube-apiserver refuses a loopback one; so a test's process listens on every address and a host
network pod, on a node whose InternalIP is this machine's own address, stands for it.
"""

from __future__ import annotations

import contextlib
import copy
import ipaddress
import socket
import time
from typing import Any

import pytest

from kubectl_spark.sim.client import SimApiError

HOST = "in-cluster-host"  # the node the standing-in pods run on


def machine_address() -> str:
    """This machine's own non-loopback IPv4 address: an Endpoints address may not be loopback
    (kube-apiserver's ValidateEndpointIP), and the recorder listens on every address."""
    candidates = []
    with contextlib.suppress(OSError), socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.connect(("192.0.2.1", 9))  # no packet is sent: the route picks the address
        candidates.append(probe.getsockname()[0])
    with contextlib.suppress(OSError):
        candidates += [
            i[4][0] for i in socket.getaddrinfo(socket.gethostname(), None, socket.AF_INET)
        ]
    for address in candidates:
        ip = ipaddress.ip_address(address)
        if not (ip.is_loopback or ip.is_link_local or ip.is_unspecified):
            return str(address)
    pytest.fail(
        f"this machine has no non-loopback IPv4 address for the recorder's endpoint: {candidates}"
    )


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def expose(stage: Any, service: dict[str, Any], port: int) -> None:
    """Create ``service`` (its first port set to ``port``) and a host network pod its selector
    matches, on a node at this machine's address: the endpoint is this machine's ``port``."""
    client = stage.world.client
    service = copy.deepcopy(service)
    namespace = service["metadata"]["namespace"]
    with contextlib.suppress(SimApiError):  # there already
        client.create("/api/v1/namespaces", {"metadata": {"name": namespace}})
    spec_port = service["spec"]["ports"][0]
    spec_port["port"] = port
    client.create(f"/api/v1/namespaces/{namespace}/services", service)
    if client.get(f"/api/v1/nodes/{HOST}") is None:
        stage.world.add_node(HOST, address=machine_address())
    name = service["metadata"]["name"]
    pod = {
        "metadata": {"name": f"{name}-0", "labels": dict(service["spec"]["selector"])},
        "spec": {
            "nodeName": HOST,
            "hostNetwork": True,
            "automountServiceAccountToken": False,
            "containers": [
                {
                    "name": "main",
                    "image": f"{name}:test",
                    "ports": [{"name": spec_port.get("targetPort", "http"), "containerPort": port}],
                }
            ],
        },
    }
    deadline = time.monotonic() + 30
    while True:  # a new namespace's default ServiceAccount comes a moment later
        try:
            client.create(f"/api/v1/namespaces/{namespace}/pods", pod)
            break
        except SimApiError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.3)
    stage.until(
        f"the endpoint of {namespace}/{name}",
        lambda: any(
            sub.get("addresses")
            for sub in (client.get(f"/api/v1/namespaces/{namespace}/endpoints/{name}") or {})
            .get("subsets") or []
        ),
    )  # fmt: skip


def register(stage: Any, namespace: str, port: int) -> None:
    """The recorder's APIService (as rendered) on ``port``, and wait until it answers.

    kube-aggregator marks it Available once its discovery answers through the endpoint.
    """
    from kubectl_spark.core.recorder_manifests import API_PATH, api_service

    client = stage.world.client
    client.create("/apis/apiregistration.k8s.io/v1/apiservices", api_service(namespace, port))

    def served() -> bool:
        try:
            return client.get(API_PATH) is not None
        except SimApiError:
            return False

    deadline = time.monotonic() + 60
    while not served():
        if time.monotonic() > deadline:
            pytest.fail(f"the recorder's APIService never answered at {API_PATH}")
        time.sleep(0.3)


def token_of(kubeconfig: Any) -> str:
    """The bearer token a test kubeconfig carries (the admin's)."""
    from pathlib import Path

    import yaml

    document = yaml.safe_load(Path(kubeconfig).read_text())
    return str(document["users"][0]["user"]["token"])


def start_recorder(kubeconfig: Any, port: int, db: Any) -> Any:
    """``record -A`` serving ``port`` on every address, as the Service's endpoint reaches it."""
    import subprocess
    import sys

    return subprocess.Popen(
        [sys.executable, "-m", "kubectl_spark.cli.main", "--kubeconfig", str(kubeconfig),
         "record", "-A", "-q", "--port", str(port), "--address", "0.0.0.0",
         "--history-db", str(db)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
