"""Spark launched as users launch it: spark-submit in cluster mode, and a driver Job.

Both run Spark's own code: spark-submit from this machine's pyspark creates the driver pod, its
headless Service and its ConfigMap (KubernetesClientApplication); the Job's pod runs the image's
``driver`` entrypoint, a client-mode driver inside the cluster, as SPARK-23980 proposed.
"""

from __future__ import annotations

import os
import subprocess
from typing import Any

from .bed import APPS, IMAGE, SMALL, Cluster


def _conf(pairs: dict[str, str]) -> list[str]:
    return [arg for key, value in pairs.items() for arg in ("--conf", f"{key}={value}")]


def spark_submit(
    cluster: Cluster, name: str, app: str, *args: str, conf: dict[str, str] | None = None
) -> str:
    """``spark-submit --deploy-mode cluster``; returns its output once the driver pod exists."""
    bed = cluster.bed
    settings = {
        **SMALL,
        "spark.kubernetes.namespace": cluster.namespace,
        "spark.kubernetes.container.image": IMAGE,
        "spark.executor.instances": "2",
        "spark.kubernetes.authenticate.submission.caCertFile": str(bed.ca),
        "spark.kubernetes.authenticate.submission.oauthToken": bed.token,
        "spark.kubernetes.submission.waitAppCompletion": "false",
        **(conf or {}),
    }
    home = bed.image.spark_home
    done = subprocess.run(
        [
            str(home / "bin" / "spark-submit"),
            "--master",
            f"k8s://{bed.url}",
            "--deploy-mode",
            "cluster",
            "--name",
            name,
            *_conf(settings),
            f"local://{APPS / app}",
            *args,
        ],
        env={**os.environ, "SPARK_HOME": str(home), "JAVA_HOME": str(bed.image.java_home)},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout + done.stderr


def driver_job(
    cluster: Cluster,
    name: str,
    app: str,
    *args: str,
    app_id: str = "",
    backoff_limit: int = 3,
    conf: dict[str, str] | None = None,
    template: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A restartable driver as a Job, in the shape SPARK-23980 proposed (seed 000).

    Each pod names itself the driver through the downward API, so its executors are owned by
    it. ``app_id``: one app id for every attempt, as spark-submit would write it into the
    template once; without it each driver JVM draws its own (``spark-<uuid>``). The
    Job controller's default podReplacementPolicy (TerminatingOrFailed) starts a replacement as
    soon as the old pod is terminating: the split brain the thread worried about.
    """
    settings = {
        **SMALL,
        "spark.app.name": name,
        **({"spark.app.id": app_id} if app_id else {}),
        "spark.kubernetes.namespace": cluster.namespace,
        "spark.kubernetes.container.image": IMAGE,
        "spark.kubernetes.driver.pod.name": "$(POD_NAME)",
        "spark.driver.host": "$(POD_IP)",
        "spark.executor.instances": "2",
        **(conf or {}),
    }
    env = [
        {"name": var, "valueFrom": {"fieldRef": {"fieldPath": path}}}
        for var, path in (
            ("POD_NAME", "metadata.name"),
            ("POD_IP", "status.podIP"),
            ("SPARK_DRIVER_BIND_ADDRESS", "status.podIP"),
        )
    ]
    pod_spec: dict[str, Any] = {
        "restartPolicy": "Never",
        "containers": [
            {
                "name": "spark-kubernetes-driver",
                "image": IMAGE,
                "args": [
                    "driver",
                    "--master",
                    "k8s://https://kubernetes.default.svc",
                    *_conf(settings),
                    f"local://{APPS / app}",
                    *args,
                ],
                "env": env,
                "ports": [
                    {"name": "driver-rpc-port", "containerPort": 7078},
                    {"name": "blockmanager", "containerPort": 7079},
                    {"name": "spark-ui", "containerPort": 4040},
                ],
                "resources": {"requests": {"cpu": "100m", "memory": "1Gi"}},
            }
        ],
        **(template or {}),
    }
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": f"{name}-driver", "labels": {"spark-app-name": name}},
        "spec": {
            "backoffLimit": backoff_limit,
            "template": {
                "metadata": {
                    "labels": {
                        "spark-app-name": name,
                        "spark-role": "driver",
                        **({"spark-app-selector": app_id} if app_id else {}),
                    }
                },
                "spec": pod_spec,
            },
        },
    }
    made: dict[str, Any] = cluster.client.create(
        f"/apis/batch/v1/namespaces/{cluster.namespace}/jobs", job
    )
    return made
