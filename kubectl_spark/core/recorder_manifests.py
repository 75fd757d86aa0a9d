"""The in-cluster recorder's manifests: what ``kubectl spark recorder`` prints or applies.

A Deployment of two replicas of ``kubectl-spark record --in-cluster --leader-elect -A`` (one
records, the other stands by watching), its ServiceAccount, the least RBAC it needs, a Service
for its port (its metrics, and what it kept, which the plugin reads through the API server's
service proxy: ``kube/recorder_api.py``), and a claim for its store.

The RBAC is read off what the recorder requests (``RULES`` is checked against its ``-v=6``
trace by the tests): the lists and watches of ``kube.resources.ALL``, a get of a pod by name (a
client-mode driver its executors name), pods/log (the last lines of a stopped container),
pods/proxy (Spark's own executor list from a running driver) and, in its own namespace only,
its Lease. Nothing that writes but the Lease. ``pods/proxy`` is cluster-wide because Spark's
drivers are: Spark's own executor list (``/api/v1/applications/<id>/allexecutors`` on a
driver's UI, the words Spark wrote for each loss) is reachable only through it; the
ClusterRole says so in an annotation, where a review reads it.

A security review's checks (issue 49): the pod runs at the ``restricted`` Pod Security level
(non-root, seccomp RuntimeDefault, read-only root, no capabilities, no privilege escalation),
has liveness and readiness probes on ``/healthz``, a PodDisruptionBudget keeps one recorder
through a drain, and a NetworkPolicy admits to its port only the API server (its service
proxy: the addresses of the ``kubernetes`` Service's endpoints, or ``--apiserver-cidr``) and
Prometheus' pods (``app.kubernetes.io/name=prometheus``, the Prometheus Operator's label).
The image is pinned by digest when one is given.

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
UID = 65532  # the image's non-root user (Dockerfile)
# Prometheus' pods, as the Prometheus Operator labels them, in any namespace.
PROMETHEUS_LABELS = {"app.kubernetes.io/name": "prometheus"}
WHY_PODS_PROXY = (
    "pods/proxy: Spark's own executor list, with the loss reason Spark wrote for each "
    "executor, is served by each running driver's UI (/api/v1/applications/<id>/allexecutors) "
    "and reached through the API server's pod proxy; drivers run in any namespace."
)

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
    image_digest: str = ""  # sha256:...: the image pinned by it
    apiserver_cidrs: tuple[str, ...] = ()  # where the API server's proxy connects from

    @property
    def image_reference(self) -> str:
        """``image@digest`` when a digest is given (a tag then only informs)."""
        return f"{self.image}@{self.image_digest}" if self.image_digest else self.image


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
        "securityContext": {
            "runAsNonRoot": True,
            "runAsUser": UID,
            "runAsGroup": UID,
            "fsGroup": UID,
            "seccompProfile": {"type": "RuntimeDefault"},
        },
        "containers": [
            {
                "name": "recorder",
                "image": opts.image_reference,
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
                "readinessProbe": {
                    "httpGet": {"path": "/healthz", "port": PORT_NAME},
                    "periodSeconds": 10,
                },
                "livenessProbe": {
                    "httpGet": {"path": "/healthz", "port": PORT_NAME},
                    "periodSeconds": 20,
                    "timeoutSeconds": 5,
                    "failureThreshold": 3,
                },
                "resources": {
                    "requests": {"cpu": "100m", "memory": "256Mi"},
                    "limits": {"memory": "1Gi"},
                },
                "securityContext": {
                    "allowPrivilegeEscalation": False,
                    "readOnlyRootFilesystem": True,
                    "runAsNonRoot": True,
                    "capabilities": {"drop": ["ALL"]},
                    "seccompProfile": {"type": "RuntimeDefault"},
                },
                "volumeMounts": [{"name": "store", "mountPath": STORE_MOUNT}],
            }
        ],
        "volumes": [{"name": "store", "persistentVolumeClaim": {"claimName": NAME}}],
    }
    if opts.access_mode != "ReadWriteOnce" and opts.replicas > 1:
        # A shared store every node can mount: the replicas go to different nodes, so a lost
        # node leaves the standby (ScheduleAnyway: a one-node cluster still runs both).
        pod_spec["topologySpreadConstraints"] = [
            {
                "maxSkew": 1,
                "topologyKey": "kubernetes.io/hostname",
                "whenUnsatisfiable": "ScheduleAnyway",
                "labelSelector": {"matchLabels": dict(LABELS)},
            }
        ]
    if opts.access_mode == "ReadWriteOnce" and opts.replicas > 1:
        # A claim one node mounts: the replicas must share that node (see the docstring).
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
    role_meta = {**cluster_meta, "annotations": {"kubectl-spark.io/why-pods-proxy": WHY_PODS_PROXY}}
    return [
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": meta},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
         "metadata": role_meta, "rules": _rules(RULES)},
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
        network_policy(opts, meta),
        {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": meta,
         "spec": {"maxUnavailable": 1,
                  "selector": {"matchLabels": dict(LABELS)}}},
        {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta,
         "spec": {"replicas": opts.replicas, "selector": {"matchLabels": dict(LABELS)},
                  "strategy": {"type": "Recreate"},
                  "template": {"metadata": {"labels": dict(LABELS)}, "spec": pod_spec}}},
    ]  # fmt: skip


def network_policy(opts: RecorderOptions, meta: dict[str, Any]) -> dict[str, Any]:
    """Only the API server's proxy and Prometheus reach the port; nothing else does.

    The API server is no pod: it is admitted by its addresses (``ipBlock``). Without any, the
    policy admits Prometheus alone, and the plugin's reads through the proxy are refused: the
    command that renders it asks for them (``--apiserver-cidr``) rather than guess.
    """
    sources: list[dict[str, Any]] = [{"ipBlock": {"cidr": cidr}} for cidr in opts.apiserver_cidrs]
    sources.append(
        {"namespaceSelector": {}, "podSelector": {"matchLabels": dict(PROMETHEUS_LABELS)}}
    )
    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "NetworkPolicy",
        "metadata": meta,
        "spec": {
            "podSelector": {"matchLabels": dict(LABELS)},
            "policyTypes": ["Ingress"],
            "ingress": [{"from": sources, "ports": [{"protocol": "TCP", "port": PORT_NAME}]}],
        },
    }
