"""A large cluster for the benchmarks: many applications, thousands of pods, built through the API.

Pods are created already bound (``spec.nodeName``, as a client may) and their status is then
written through the status subresource, the way kubelets would report it, with a realistic mix
of running, OOM-killed, failed and evicted executors. Only the API is used, in parallel.
"""

from __future__ import annotations

import hashlib
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from kubectl_spark.knowledge import labels as spark_labels
from kubectl_spark.knowledge.clock import Clock
from kubectl_spark.knowledge.times import rfc3339

from .client import Client, SimApiError, pod, pods
from .sparkapp import IMAGE, SPARK_VERSION


def _app_id(index: int) -> str:
    return "spark-" + hashlib.sha256(f"generated-{index}".encode()).hexdigest()[:32]


def _status(index: int, stamp: str, failure: str | None) -> dict[str, Any]:
    container: dict[str, Any] = {
        "name": "c",
        "image": IMAGE,
        "ready": failure is None,
        "restartCount": 0,
        "started": failure is None,
    }
    status: dict[str, Any] = {
        "phase": "Running",
        "hostIP": "10.0.0.2",
        "podIP": f"10.244.{index // 250 % 250}.{index % 250 + 2}",
        "startTime": stamp,
    }
    if failure is None:
        container["state"] = {"running": {"startedAt": stamp}}
    else:
        code, reason = {"oom": (137, "OOMKilled"), "jvm": (52, "Error"), "evicted": (137, "Error")}[
            failure
        ]
        container["state"] = {
            "terminated": {
                "exitCode": code,
                "reason": reason,
                "startedAt": stamp,
                "finishedAt": stamp,
            }
        }
        status["phase"] = "Failed"
        if failure == "evicted":
            status.update(reason="Evicted", message="The node was low on resource: memory. ")
    status["containerStatuses"] = [container]
    return status


def generate(
    client: Client,
    clock: Clock,
    *,
    apps: int = 100,
    pods_per_app: int = 100,
    namespaces: int = 4,
    nodes: int = 50,
    threads: int = 8,
) -> int:
    """Create ``apps`` applications of ``pods_per_app`` pods (one driver each); return the count."""
    stamp = rfc3339(clock.now())
    for n in range(namespaces):
        try:
            client.create("/api/v1/namespaces", {"metadata": {"name": f"spark-{n}"}})
        except SimApiError as err:
            if err.status != 409:
                raise
    for n in range(nodes):
        try:
            client.create(
                "/api/v1/nodes",
                {
                    "metadata": {
                        "name": f"node-{n:03d}",
                        "labels": {"kubernetes.io/hostname": f"node-{n:03d}"},
                    }
                },
            )
        except SimApiError as err:
            if err.status != 409:
                raise
        ready = {"type": "Ready", "status": "True", "reason": "KubeletReady"}
        client.patch(
            f"/api/v1/nodes/node-{n:03d}/status",
            {"status": {"conditions": [{**ready, "lastTransitionTime": stamp}]}},
        )

    def make_app(index: int) -> int:
        ns = f"spark-{index % namespaces}"
        app_id = _app_id(index)
        name = f"app-{index:03d}"
        labels = {
            spark_labels.APP_ID: app_id,
            "spark-app-name": name,
            "spark-version": SPARK_VERSION,
        }
        driver = {
            "metadata": {
                "name": f"{name}-driver",
                "labels": {**labels, spark_labels.ROLE: "driver"},
            },
            "spec": {
                "nodeName": f"node-{index % nodes:03d}",
                "restartPolicy": "Never",
                "containers": [{"name": "spark-kubernetes-driver", "image": IMAGE}],
            },
        }
        created = client.create(pods(ns), driver)
        client.patch(
            pod(ns, f"{name}-driver") + "/status",
            {"status": _status(index, stamp, None)},
        )
        owner = [
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "name": created["metadata"]["name"],
                "uid": created["metadata"]["uid"],
                "controller": True,
                "blockOwnerDeletion": True,
            }
        ]
        for e in range(1, pods_per_app):
            exec_name = f"{name}-{app_id[-16:]}-exec-{e}"
            body = {
                "metadata": {
                    "name": exec_name,
                    "ownerReferences": owner,
                    "labels": {
                        **labels,
                        spark_labels.ROLE: "executor",
                        spark_labels.EXEC_ID: str(e),
                        "spark-exec-resourceprofile-id": "0",
                    },
                },
                "spec": {
                    "nodeName": f"node-{(index + e) % nodes:03d}",
                    "restartPolicy": "Never",
                    "containers": [
                        {
                            "name": "spark-kubernetes-executor",
                            "image": IMAGE,
                            "resources": {"requests": {"cpu": "1", "memory": "4Gi"}},
                        }
                    ],
                },
            }
            client.create(pods(ns), body)
            failure = {7: "oom", 13: "jvm", 29: "evicted"}.get(e % 37)
            client.patch(pod(ns, exec_name) + "/status", {"status": _status(e, stamp, failure)})
        return pods_per_app

    with ThreadPoolExecutor(threads) as pool:
        return sum(pool.map(make_app, range(apps)))
