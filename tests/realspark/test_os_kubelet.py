"""The OS kubelet itself, with small processes: what it reports is what a kubelet reports.

Each check is a kubelet behaviour the Spark scenarios rely on, tried with a Python one-liner in
a pod (an image that is not Spark's runs its command as given): the downward API and ``$(VAR)``
expansion, the kernel-OOM-killer stand-in (``OOMKilled``, 137), a restart by ``restartPolicy``
with ``lastState`` and the previous container's log (``kubectl logs -p``), and a graceful
delete (SIGTERM, exit 143, then the pod removed by the kubelet's own DELETE).
"""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest

from .bed import Cluster, until

pytestmark = [pytest.mark.realspark, pytest.mark.timeout(180)]


def python_pod(name: str, code: str, **spec: Any) -> dict[str, Any]:
    container = {"name": "main", "image": "python:3.11", "command": [sys.executable, "-c", code]}
    container.update(spec.pop("container", {}))
    return {"metadata": {"name": name}, "spec": {"containers": [container], **spec}}


def status_of(c: Cluster, name: str) -> dict[str, Any]:
    found = c.client.get(f"/api/v1/namespaces/{c.namespace}/pods/{name}")
    assert found is not None
    return found.get("status") or {}


def container_state(c: Cluster, name: str) -> dict[str, Any]:
    statuses = status_of(c, name).get("containerStatuses") or [{}]
    return statuses[0]


def kubectl(c: Cluster, *args: str) -> str:
    done = subprocess.run(
        ["kubectl", "--kubeconfig", str(c.bed.kubeconfig), "-n", c.namespace, *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    return done.stdout + done.stderr


def test_the_os_kubelet_reports_as_a_kubelet_does(cluster: Cluster) -> None:
    c = cluster
    c.kubelet.add_node("node-a")
    pods = f"/api/v1/namespaces/{c.namespace}/pods"
    env = c.client.create(
        pods,
        python_pod(
            "env",
            "import os, time; print(os.environ['ME'], os.environ['GREETING'], flush=True); "
            "time.sleep(60)",
            container={
                "env": [
                    {"name": "ME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
                    {"name": "GREETING", "value": "hello $(ME) $$(ME)"},
                ]
            },
        ),
    )
    c.client.create(
        pods,
        python_pod(
            "hog",
            "import time; x = bytearray(400 * 2**20); time.sleep(60)",
            container={"resources": {"limits": {"memory": "100Mi"}}},
            restartPolicy="Never",
        ),
    )
    c.client.create(
        pods,
        python_pod(
            "flaky",
            "import sys; print('run', flush=True); sys.exit(3)",
            restartPolicy="OnFailure",
        ),
    )

    until(lambda: "env hello env $(ME)" in kubectl(c, "logs", "env"), 60, "the env pod's log")
    until(lambda: status_of(c, "hog").get("phase") == "Failed", 60, "the memory hog OOM-killed")
    terminated = container_state(c, "hog")["state"]["terminated"]
    assert (terminated["exitCode"], terminated["reason"]) == (137, "OOMKilled"), terminated
    until(
        lambda: container_state(c, "flaky").get("restartCount", 0) >= 1,
        60,
        "the failing container restarted in place",
    )
    last = container_state(c, "flaky")["lastState"]["terminated"]
    assert (last["exitCode"], last["reason"]) == (3, "Error"), last
    assert "run" in kubectl(c, "logs", "flaky", "-p")

    c.client.delete(f"{pods}/env", grace=10)
    until(lambda: c.client.get(f"{pods}/env") is None, 30, "the deleted pod removed by its kubelet")
    assert "Killing" in kubectl(c, "get", "events", "--field-selector", "involvedObject.name=env")
    # Its last status, written before the kubelet's DELETE: ended by the SIGTERM (128 + 15).
    (last_env,) = c.kubelet.reported[env["metadata"]["uid"]]["containerStatuses"]
    assert last_env["state"]["terminated"]["exitCode"] == 143, last_env
