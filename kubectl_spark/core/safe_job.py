"""A driver Job that avoids SPARK-23980's hazards by construction (``kubectl spark job``).

A restartable driver as a Job is what the upstream thread proposed; what it found can go wrong
with it, and how each is closed here:

- **Two drivers at once.** By default the Job controller starts a replacement as soon as the
  old pod is terminating (deleted, or on a node gone NotReady), while that driver may still
  run. ``podReplacementPolicy: Failed`` (batch/v1, on by default since Kubernetes 1.29) waits
  until the old pod is Failed: on an unreachable node, until pod GC marks it so (the
  out-of-service taint, or the node's deletion) — ``force-kill --out-of-service`` is that step.
- **Disruptions counted as failures.** Evictions, preemptions and node drains count toward
  ``backoffLimit`` unless a ``podFailurePolicy`` ignores pods with the ``DisruptionTarget``
  condition (GA in 1.31; it requires ``restartPolicy: Never``).
- **Attempts that share an executor prefix or an app id.** Spark names executors
  ``<spark.kubernetes.executor.podNamePrefix>-exec-<id>`` and selects them by the
  ``spark-app-selector`` label (``spark.app.id``); a fixed value in the template makes each
  attempt collide with (409), count and at its end delete the previous attempt's executors.
  Here both come from the pod's own name through the downward API (``$(POD_NAME)``), as do
  ``spark.kubernetes.driver.pod.name`` and ``spark.driver.host`` (the app id is taken from
  ``spark.app.id`` when set: ``KubernetesClusterSchedulerBackend.applicationId``).
- **A zombie on a partitioned node.** A ReadWriteOncePod claim mounted by the driver is a fence
  the scheduler enforces: no second driver pod is placed while the first holds it (GA in 1.29).
- **The Lease.** Spark does not check one; a wrapper that takes the Lease named in the Job's
  annotation before it starts spark-submit, and exits when it loses it, closes the rest.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kubectl_spark.knowledge.labels import APP_NAME, ROLE

from .jsonvalue import Body

DRIVER_CONTAINER = "spark-kubernetes-driver"
LOCK_MOUNT = "/var/run/kubectl-spark/lock"
LEASE_ANNOTATION = "kubectl-spark.io/lease"


@dataclass(frozen=True)
class JobOptions:
    name: str
    namespace: str
    image: str
    resource: str  # the application's jar or Python file, as spark-submit takes it
    main_class: str = ""
    app_args: tuple[str, ...] = ()
    executors: int = 2
    backoff_limit: int = 3
    service_account: str = "spark"
    storage_class: str = ""
    conf: tuple[tuple[str, str], ...] = field(default_factory=tuple)


def lock_claim_name(name: str) -> str:
    return f"{name}-driver-lock"[:253]


def driver_job(options: JobOptions) -> list[Body]:
    """The ReadWriteOncePod claim and the Job, in the order they are applied."""
    o = options
    claim = lock_claim_name(o.name)
    pvc: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": claim, "namespace": o.namespace, "labels": {APP_NAME: o.name}},
        "spec": {
            "accessModes": ["ReadWriteOncePod"],
            "resources": {"requests": {"storage": "1Mi"}},
        },
    }
    if o.storage_class:
        pvc["spec"]["storageClassName"] = o.storage_class
    conf = [
        ("spark.app.name", o.name),
        ("spark.app.id", "$(POD_NAME)"),
        ("spark.kubernetes.executor.podNamePrefix", "$(POD_NAME)"),
        ("spark.kubernetes.driver.pod.name", "$(POD_NAME)"),
        ("spark.driver.host", "$(POD_IP)"),
        ("spark.kubernetes.namespace", o.namespace),
        ("spark.kubernetes.container.image", o.image),
        ("spark.executor.instances", str(o.executors)),
        *o.conf,
    ]
    args = ["driver", "--master", "k8s://https://kubernetes.default.svc"]
    for key, value in conf:
        args += ["--conf", f"{key}={value}"]
    if o.main_class:
        args += ["--class", o.main_class]
    args += [o.resource, *o.app_args]
    field_env = (
        ("POD_NAME", "metadata.name"),
        ("POD_IP", "status.podIP"),
        ("SPARK_DRIVER_BIND_ADDRESS", "status.podIP"),
    )
    container = {
        "name": DRIVER_CONTAINER,
        "image": o.image,
        "args": args,
        "env": [
            {"name": env, "valueFrom": {"fieldRef": {"fieldPath": path}}} for env, path in field_env
        ],
        "volumeMounts": [{"name": "driver-lock", "mountPath": LOCK_MOUNT}],
    }
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": o.name,
            "namespace": o.namespace,
            "labels": {APP_NAME: o.name},
            "annotations": {LEASE_ANNOTATION: f"kubectl-spark-{o.name}"[:253]},
        },
        "spec": {
            "backoffLimit": o.backoff_limit,
            "parallelism": 1,
            "completions": 1,
            "podReplacementPolicy": "Failed",
            "podFailurePolicy": {
                "rules": [
                    {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]},
                ]
            },
            "template": {
                "metadata": {"labels": {ROLE: "driver", APP_NAME: o.name}},
                "spec": {
                    "restartPolicy": "Never",
                    "serviceAccountName": o.service_account,
                    "containers": [container],
                    "volumes": [
                        {"name": "driver-lock", "persistentVolumeClaim": {"claimName": claim}}
                    ],
                },
            },
        },
    }
    return [pvc, job]
