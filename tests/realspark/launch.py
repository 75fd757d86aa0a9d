"""Spark launched as users launch it: spark-submit in cluster mode, a driver Job, both operators.

Both run Spark's own code: spark-submit from this machine's pyspark creates the driver pod, its
headless Service and its ConfigMap (KubernetesClientApplication); the Job's pod runs the image's
``driver`` entrypoint, a client-mode driver inside the cluster, as SPARK-23980 proposed.
"""

from __future__ import annotations

import json
import os
import subprocess
import uuid
from datetime import UTC, datetime
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
        env={**os.environ, "SPARK_HOME": str(home), **bed.image.java_environment()},
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


def _owned_by(cluster: Cluster, sparkapp: dict[str, Any]) -> str:
    """A driver pod template naming ``sparkapp`` as its controller, written for spark-submit.

    Both operators make the driver pod a child of its SparkApplication: kubeflow's mutating
    webhook adds the reference (``addOwnerReference``), the Apache operator's driver spec
    carries it. spark-submit keeps the template's metadata (KubernetesUtils.loadPodFromTemplate).
    """
    meta = sparkapp["metadata"]
    template = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "ownerReferences": [
                {
                    "apiVersion": sparkapp["apiVersion"],
                    "kind": "SparkApplication",
                    "name": meta["name"],
                    "uid": meta["uid"],
                    "controller": True,
                }
            ]
        },
        "spec": {"containers": []},  # Spark's container is made from the confs
    }
    path = cluster.tmp / f"{meta['name']}-{meta['uid']}-driver-template.json"
    path.write_text(json.dumps(template))
    return str(path)


def kubeflow_app(
    cluster: Cluster, name: str, app: str, *args: str, conf: dict[str, str] | None = None
) -> dict[str, Any]:
    """A SparkApplication as kubeflow/spark-operator runs it: its spark-submit, Spark's driver.

    The operator itself runs ``spark-submit --deploy-mode cluster`` with its own confs
    (internal/controller/sparkapplication/submission.go: ``driverPodNameOption`` →
    ``<name>-driver``, ``driverConfOption``/``executorConfOption`` → the app-name,
    launched-by-spark-operator and submission-id labels on both roles, never waiting for the
    app), then reports the submission in the status (SUBMITTED, its submission id, the driver
    pod), as the simulated operator does (kubectl_spark/sim/operator.py).
    """
    ns = cluster.namespace
    path = f"/apis/sparkoperator.k8s.io/v1beta2/namespaces/{ns}/sparkapplications"
    made = cluster.client.create(
        path,
        {
            "apiVersion": "sparkoperator.k8s.io/v1beta2",
            "kind": "SparkApplication",
            "metadata": {"name": name},
            "spec": {
                "type": "Python",
                "mode": "cluster",
                "image": IMAGE,
                "sparkVersion": "4.1.1",
                "mainApplicationFile": f"local://{APPS / app}",
                "restartPolicy": {"type": "Never"},
                "driver": {"memory": SMALL["spark.driver.memory"]},
                "executor": {"instances": 1, "memory": SMALL["spark.executor.memory"]},
            },
        },
    )
    submission = str(uuid.uuid4())
    labels = {
        "sparkoperator.k8s.io/app-name": name,
        "sparkoperator.k8s.io/launched-by-spark-operator": "true",
        "sparkoperator.k8s.io/mutated-by-spark-operator": "true",
        "sparkoperator.k8s.io/submission-id": submission,
    }
    own = {"spark.kubernetes.driver.pod.name": f"{name}-driver"}
    _submit_for(cluster, made, app, args, labels, {**own, **(conf or {})})
    status = {
        "submissionID": submission,
        "lastSubmissionAttemptTime": _now(),
        "submissionAttempts": 1,
        "executionAttempts": 1,
        "applicationState": {"state": "SUBMITTED"},
        "driverInfo": {"podName": f"{name}-driver", "webUIPort": 4040},
    }
    return cluster.client.patch(f"{path}/{name}/status", {"status": status})


def apache_app(
    cluster: Cluster, name: str, app: str, *args: str, conf: dict[str, str] | None = None
) -> dict[str, Any]:
    """A SparkApplication as apache/spark-kubernetes-operator runs it, with Spark's own builder.

    The operator builds the driver with Spark's KubernetesDriverBuilder in its own JVM
    (SparkAppSubmissionWorker): app id ``<name>-<attemptId>`` (``generateSparkAppId``; the
    first attempt is 0), every resource named from that id (SparkAppDriverConf), the
    ``spark.operator/*`` labels, and a driver owned by the SparkApplication. spark-submit
    builds the same pod from the same confs. Its status: one state per transition, as the
    simulated operator writes it (kubectl_spark/sim/apache_operator.py).
    """
    ns = cluster.namespace
    path = f"/apis/spark.apache.org/v1/namespaces/{ns}/sparkapplications"
    made = cluster.client.create(
        path,
        {
            "apiVersion": "spark.apache.org/v1",
            "kind": "SparkApplication",
            "metadata": {"name": name},
            "spec": {
                "pyFiles": f"local://{APPS / app}",
                "runtimeVersions": {"sparkVersion": "4.1.1"},
                "sparkConf": {"spark.executor.instances": "1"},
            },
        },
    )
    app_id = f"{name}-0"
    labels = {
        "spark.operator/name": "spark-kubernetes-operator",
        "spark.operator/spark-app-name": name,
    }
    own = {
        "spark.app.id": app_id,
        "spark.kubernetes.driver.pod.name": f"{app_id}-driver",
        "spark.kubernetes.executor.podNamePrefix": app_id,
    }
    _submit_for(cluster, made, app, args, labels, {**own, **(conf or {})})
    info = {"id": 0, "restartCounter": 0, "failureRestartCounter": 0,
            "schedulingFailureRestartCounter": 0}  # fmt: skip
    history = {
        str(i): {"currentStateSummary": summary, "lastTransitionTime": _now()}
        for i, summary in enumerate(("Submitted", "DriverRequested"))
    }
    status = {
        "currentState": history[str(len(history) - 1)],
        "stateTransitionHistory": history,
        "currentAttemptSummary": {"attemptInfo": info},
    }
    return cluster.client.request("PUT", f"{path}/{name}/status", {**made, "status": status})


ROLES = ("driver", "executor")


def _submit_for(
    cluster: Cluster,
    sparkapp: dict[str, Any],
    app: str,
    args: tuple[str, ...],
    labels: dict[str, str],
    settings: dict[str, str],
) -> None:
    """spark-submit as an operator submits ``sparkapp``: its labels on both roles, its driver
    owned by it, one executor (two JVMs per application keep the tier light)."""
    spark_submit(
        cluster,
        sparkapp["metadata"]["name"],
        app,
        *args,
        conf={
            "spark.kubernetes.driver.podTemplateFile": _owned_by(cluster, sparkapp),
            "spark.executor.instances": "1",
            **{
                f"spark.kubernetes.{role}.label.{k}": v for role in ROLES for k, v in labels.items()
            },
            **settings,
        },
    )


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
