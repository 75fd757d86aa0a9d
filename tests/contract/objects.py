"""The objects and the watch reader the kubectl contract tests share."""

from __future__ import annotations

import subprocess
import time

from kubernetes import client

DRIVER = """
apiVersion: v1
kind: Pod
metadata:
  name: pi-driver
  labels: {spark-role: driver, spark-app-selector: spark-0001, spark-app-name: pi}
spec:
  containers: [{name: spark-kubernetes-driver, image: "apache/spark:3.5.1"}]
"""


def executor(name: str, exec_id: int) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "labels": {
                "spark-role": "executor",
                "spark-app-selector": "spark-0001",
                "spark-exec-id": str(exec_id),
            },
        },
        "spec": {
            "containers": [{"name": "spark-kubernetes-executor", "image": "apache/spark:3.5.1"}]
        },
    }


def bind(api, name: str, node: str, namespace: str = "default") -> None:
    body = {
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": {"name": name},
        "target": {"kind": "Node", "name": node},
    }
    client.CoreV1Api(api).create_namespaced_pod_binding(
        name, namespace, body, _preload_content=False
    )


def lines_until(watch: subprocess.Popen[str], word: str, seconds: float = 10) -> list[str]:
    """A watching kubectl's lines, up to the first that holds ``word`` (or the deadline)."""
    lines: list[str] = []
    deadline = time.monotonic() + seconds
    assert watch.stdout is not None
    while time.monotonic() < deadline and not any(word in line for line in lines):
        lines.append(watch.stdout.readline())
    return lines
