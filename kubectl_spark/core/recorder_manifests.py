"""The in-cluster recorder's manifests: what ``kubectl spark recorder`` prints or applies.

A Deployment of two replicas of ``kubectl-spark record --in-cluster --leader-elect -A`` (one
records, the other stands by watching), its ServiceAccount, the least RBAC it needs, a Service
for its port (its metrics, and what it kept, which the plugin reads through the API server's
service proxy: ``kube/recorder_api.py``), and a claim for its store.

The RBAC is read off what the recorder requests (``RULES`` is checked against its ``-v=6``
trace by the tests): the lists and watches of ``kube.resources.ALL``, a get of a pod by name (a
client-mode driver its executors name), pods/log (the last lines of a stopped container),
pods/proxy (Spark's own executor list from a running driver) and, in its own namespace only,
its Lease. Nothing that writes but the Lease.

The two replicas share the store's volume, a ReadWriteOnce claim, so a required pod affinity
keeps them on one node: leader election then guards the store against two writers and covers
a recorder that restarts or is evicted, not a lost node (with ``--access-mode ReadWriteMany``
the affinity is left out).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

NAME = "kubectl-spark-recorder"
LABELS = {"app.kubernetes.io/name": NAME, "app.kubernetes.io/component": "recorder"}
STORE_MOUNT = "/var/lib/kubectl-spark"
PORT = 9090
PORT_NAME = "http"  # the Service's port the plugin asks the service proxy for
IMAGE = "ghcr.io/kubectl-spark/recorder:{version}"

# (apiGroups, resources, verbs), cluster-wide.
RULES: tuple[tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]], ...] = (
    (("",), ("pods",), ("get", "list", "watch")),
    (("",), ("events", "nodes", "persistentvolumeclaims"), ("list", "watch")),
    (("",), ("pods/log", "pods/proxy"), ("get",)),
    (("batch",), ("jobs",), ("list", "watch")),
    (("storage.k8s.io",), ("volumeattachments",), ("list", "watch")),
    (("sparkoperator.k8s.io",), ("sparkapplications",), ("list", "watch")),
    (("spark.apache.org",), ("sparkapplications", "sparkclusters"), ("list", "watch")),
)
# In its own namespace: its Lease.
LEASE_RULES: tuple[tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]], ...] = (
    (("coordination.k8s.io",), ("leases",), ("get", "create", "update")),
)


@dataclass(frozen=True)
class RecorderOptions:
    namespace: str
    image: str
    replicas: int = 2
    storage: str = "1Gi"
    storage_class: str = ""
    access_mode: str = "ReadWriteOnce"


def _rules(
    rules: tuple[tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]], ...],
) -> list[Any]:
    return [
        {"apiGroups": list(groups), "resources": list(resources), "verbs": list(verbs)}
        for groups, resources, verbs in rules
    ]


def manifests(opts: RecorderOptions) -> list[dict[str, Any]]:
    """The objects, in the order they are applied (identity and rights before the pods)."""
    ns = opts.namespace
    meta = {"name": NAME, "namespace": ns, "labels": dict(LABELS)}
    cluster_meta = {"name": f"{NAME}-{ns}", "labels": dict(LABELS)}
    subject = [{"kind": "ServiceAccount", "name": NAME, "namespace": ns}]
    claim: dict[str, Any] = {
        "accessModes": [opts.access_mode],
        "resources": {"requests": {"storage": opts.storage}},
    }
    if opts.storage_class:
        claim["storageClassName"] = opts.storage_class
    pod_spec: dict[str, Any] = {
        "serviceAccountName": NAME,
        "securityContext": {"runAsNonRoot": True, "runAsUser": 65532, "fsGroup": 65532},
        "containers": [
            {
                "name": "recorder",
                "image": opts.image,
                "args": [
                    "record",
                    "--in-cluster",
                    "--leader-elect",
                    "--all-namespaces",
                    "--history-db",
                    f"{STORE_MOUNT}/history.db",
                    "--port",
                    str(PORT),
                ],
                "env": [
                    {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}
                ],
                "ports": [{"name": PORT_NAME, "containerPort": PORT}],
                "readinessProbe": {"httpGet": {"path": "/healthz", "port": PORT_NAME}},
                "resources": {
                    "requests": {"cpu": "100m", "memory": "256Mi"},
                    "limits": {"memory": "1Gi"},
                },
                "securityContext": {
                    "allowPrivilegeEscalation": False,
                    "readOnlyRootFilesystem": True,
                    "capabilities": {"drop": ["ALL"]},
                },
                "volumeMounts": [{"name": "store", "mountPath": STORE_MOUNT}],
            }
        ],
        "volumes": [{"name": "store", "persistentVolumeClaim": {"claimName": NAME}}],
    }
    if opts.access_mode == "ReadWriteOnce" and opts.replicas > 1:
        pod_spec["affinity"] = {
            "podAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {
                        "labelSelector": {"matchLabels": dict(LABELS)},
                        "topologyKey": "kubernetes.io/hostname",
                    }
                ]
            }
        }
    return [
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": meta},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
         "metadata": cluster_meta, "rules": _rules(RULES)},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
         "metadata": cluster_meta,
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                     "name": cluster_meta["name"]},
         "subjects": subject},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": meta,
         "rules": _rules(LEASE_RULES)},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": meta,
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": NAME},
         "subjects": subject},
        {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": meta, "spec": claim},
        {"apiVersion": "v1", "kind": "Service", "metadata": meta,
         "spec": {"selector": dict(LABELS),
                  "ports": [{"name": PORT_NAME, "port": PORT, "targetPort": PORT_NAME}]}},
        {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta,
         "spec": {"replicas": opts.replicas, "selector": {"matchLabels": dict(LABELS)},
                  "strategy": {"type": "Recreate"},
                  "template": {"metadata": {"labels": dict(LABELS)}, "spec": pod_spec}}},
    ]  # fmt: skip
