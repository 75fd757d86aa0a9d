"""A Spark application as the simulator plays it: its configuration, state and pods.

Its configuration, a driver's state, and the pods Spark builds for it: the driver's, as
spark-submit asks for it; an executor's, as the driver's allocator does; as plain JSON.

What the pods hold follows Spark's own builders (BasicDriverFeatureStep,
BasicExecutorFeatureStep): labels, owner references, ports, resources, environment.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from kubectl_spark.knowledge import labels as spark_labels

from . import objects
from .sparkrest import SparkUI

SPARK_VERSION = "3.5.1"
IMAGE = f"apache/spark:{SPARK_VERSION}"


@dataclass
class AppConfig:
    """How one application behaves (what a user's code and configuration would decide)."""

    name: str
    namespace: str = "default"
    launch: str = "submit"  # submit (bare driver pod), job, operator (Kubeflow), apache
    # The Apache operator's spec.applicationTolerations (restartConfig, applicationTimeoutConfig)
    apache_tolerations: dict[str, Any] = field(default_factory=dict)
    executors: int = 2
    executor_prefix: str = "fresh"  # fresh per attempt, or fixed across attempts
    delete_on_termination: bool = True
    ui: bool = True  # spark.ui.enabled: the REST API kubectl spark reads through the pod proxy
    retained_dead_executors: int = 100  # spark.ui.retainedDeadExecutors
    driver_node: str | None = None
    driver_memory: str = "2Gi"
    executor_memory: str = "4Gi"
    executor_cpu: str = "1"
    driver_exit_after: float | None = None
    driver_exit_code: int = 0
    backoff_limit: int = 3
    pod_replacement_policy: str | None = None
    pod_failure_policy: dict[str, Any] | None = None
    restart_policy: dict[str, Any] = field(default_factory=lambda: {"type": "Never"})
    pvc: str | None = None
    executor_priority: int = 0
    driver_restart_policy: str = "Never"  # Spark hard-codes Never; a Job template may say OnFailure
    executor_restart_policy: str = (
        "Never"  # the seed's surprise: anything but Never restarts in place
    )
    app_id: str = ""
    # spark.kubernetes.allocation.pods.allocator: direct (one pod per executor) or deployment
    # (4.2: one Deployment spark-d-<appId>-<rp> whose ReplicaSet makes the executor pods)
    allocator: str = "direct"
    spark_version: str = SPARK_VERSION

    def __post_init__(self) -> None:
        if not self.app_id:
            self.app_id = (
                "spark-" + hashlib.sha256(f"{self.namespace}/{self.name}".encode()).hexdigest()[:32]
            )


@dataclass
class DriverState:
    uid: str
    app: AppConfig
    prefix: str
    next_id: int = 1
    known: dict[str, str] = field(default_factory=dict)  # exec id → pod uid
    set_up: bool = False
    finished: bool = False
    collisions: int = 0
    ui: SparkUI | None = None
    # Deployment allocator: executor id by (pod uid, container restarts) — each JVM that
    # registers gets the next id, a restarted one a new id in the same pod.
    registered: dict[tuple[str, int], str] = field(default_factory=dict)
    # Ended executor pods told to Spark, by pod uid, with when: deleted a processing round later.
    ended: dict[str, datetime] = field(default_factory=dict)


def configured(driver: dict[str, Any], key: str) -> str:
    """``--conf key=value`` in the driver's args ("" when absent), as its JVM sees it.

    The kubelet expands ``$(VAR)`` in args from the container's environment, the downward
    API's fields included (``metadata.name``, ``metadata.uid``, ``status.podIP``): a Job's
    template can so give each of its pods its own app id and executor prefix.
    """
    for container in driver["spec"].get("containers") or []:
        args = [str(a) for a in container.get("args") or []]
        for i, arg in enumerate(args[:-1]):
            if arg == "--conf" and args[i + 1].startswith(key + "="):
                return _expanded(args[i + 1].split("=", 1)[1], driver, container)
    return ""


def _expanded(value: str, pod: dict[str, Any], container: dict[str, Any]) -> str:
    fields = {
        "metadata.name": pod["metadata"].get("name", ""),
        "metadata.namespace": pod["metadata"].get("namespace", ""),
        "metadata.uid": pod["metadata"].get("uid", ""),
        "status.podIP": (pod.get("status") or {}).get("podIP", ""),
    }
    env: dict[str, str] = {}
    for item in container.get("env") or []:
        path = ((item.get("valueFrom") or {}).get("fieldRef") or {}).get("fieldPath")
        env[str(item.get("name"))] = fields.get(path, "") if path else str(item.get("value", ""))
    return re.sub(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)", lambda m: env.get(m[1], m[0]), value)


def configured_prefix(driver: dict[str, Any]) -> str:
    """``--conf spark.kubernetes.executor.podNamePrefix=...`` in the driver's args wins, as in Spark."""
    return configured(driver, "spark.kubernetes.executor.podNamePrefix")


def app_id_of(driver: dict[str, Any]) -> str:
    """spark.app.id: the conf when given, else the label spark-submit wrote from it.

    Spark's KubernetesClusterSchedulerBackend.applicationId takes the conf first.
    """
    return configured(driver, "spark.app.id") or objects.labels(driver).get(spark_labels.APP_ID, "")


def resource_prefix(name: str, salt: str) -> str:
    return f"{name}-{hashlib.sha256(salt.encode()).hexdigest()[:16]}"


def driver_pod(
    app: AppConfig, *, name: str | None = None, extra_labels: dict[str, str] | None = None
) -> dict[str, Any]:
    """The driver pod spark-submit (or an operator, or a Job's template) asks for."""
    labels = {
        spark_labels.APP_ID: app.app_id,
        spark_labels.ROLE: "driver",
        "spark-app-name": app.name,
        "spark-version": app.spark_version,
        **(extra_labels or {}),
    }
    spec: dict[str, Any] = {
        "restartPolicy": app.driver_restart_policy,
        "containers": [
            {
                "name": "spark-kubernetes-driver",
                "image": IMAGE,
                "args": ["driver", "--class", "org.apache.spark.examples.SparkPi"],
                "ports": [
                    {"name": "driver-rpc-port", "containerPort": 7078},
                    {"name": "blockmanager", "containerPort": 7079},
                    {"name": "spark-ui", "containerPort": 4040},
                ],
                "resources": {
                    "requests": {"cpu": "1", "memory": app.driver_memory},
                    "limits": {"memory": app.driver_memory},
                },
            }
        ],
    }
    if app.driver_node:
        spec["nodeSelector"] = {"kubernetes.io/hostname": app.driver_node}
    if app.pvc:
        spec["volumes"] = [{"name": "checkpoint", "persistentVolumeClaim": {"claimName": app.pvc}}]
        spec["containers"][0]["volumeMounts"] = [{"name": "checkpoint", "mountPath": "/checkpoint"}]
    meta: dict[str, Any] = {"labels": labels}
    if name:
        meta["name"] = name
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


def executor_pod(driver: dict[str, Any], state: DriverState, exec_id: str) -> dict[str, Any]:
    """An executor pod as the driver's allocator builds it (``EXECID``: a template's)."""
    app = state.app
    labels = {
        spark_labels.APP_ID: app.app_id,
        spark_labels.ROLE: "executor",
        spark_labels.EXEC_ID: exec_id,
        "spark-exec-resourceprofile-id": "0",
        "spark-app-name": app.name,
        "spark-version": app.spark_version,
    }
    labels.update(
        {
            k: v
            for k, v in objects.labels(driver).items()
            # Both operators pass their labels on (spark.kubernetes.executor.label.*).
            if k.startswith(("sparkoperator.k8s.io/", "spark.operator/"))
        }
    )
    # spark-operator#2961: executors also name the SparkApplication, as a non-controller owner
    owners = [objects.owner_ref(driver)]
    owners.extend(
        {**ref, "controller": False}
        for ref in driver["metadata"].get("ownerReferences") or []
        if ref.get("kind") == "SparkApplication"
        and str(ref.get("apiVersion")).startswith("sparkoperator.k8s.io/")
    )
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": f"{state.prefix}-exec-{exec_id}",
            "labels": labels,
            "ownerReferences": owners,
        },
        "spec": {
            "restartPolicy": app.executor_restart_policy,
            "priority": app.executor_priority,
            "containers": [
                {
                    "name": "spark-kubernetes-executor",
                    "image": IMAGE,
                    "args": ["executor"],
                    "env": [
                        {"name": "SPARK_EXECUTOR_ID", "value": exec_id},
                        {"name": "SPARK_APPLICATION_ID", "value": app.app_id},
                    ],
                    "resources": {
                        "requests": {"cpu": app.executor_cpu, "memory": app.executor_memory},
                        "limits": {"memory": app.executor_memory},
                    },
                }
            ],
        },
    }
