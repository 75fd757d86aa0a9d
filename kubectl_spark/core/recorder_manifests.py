"""The in-cluster recorder's manifests: what ``kubectl spark recorder`` prints or applies.

A Deployment of two replicas of ``kubectl-spark record --in-cluster --leader-elect -A`` (one
records, the other stands by watching), its ServiceAccount, the least RBAC it needs, a Service
for its HTTPS port (its metrics, and what it kept), the APIService that makes that port the
aggregated API ``recorder.kubectl-spark.io`` (the plugin reads it through the API server, each
caller authenticated and authorised: ``kube/recorder_api.py``, ``kube/delegation.py``) with
the bindings an aggregated server needs, and a claim for its store.

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
through a drain, and a NetworkPolicy admits to its port only the API server (its aggregation
layer: the addresses of the ``kubernetes`` Service's endpoints, or ``--apiserver-cidr``) and
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

from .jsonvalue import Body

NAME = "kubectl-spark-recorder"
LABELS = {"app.kubernetes.io/name": NAME, "app.kubernetes.io/component": "recorder"}
STORE_MOUNT = "/var/lib/kubectl-spark"
PORT = 9443
PORT_NAME = "https"  # the Service's port the APIService names (the aggregator speaks TLS)
SERVICE_PORT = 443  # an APIService's default port
# The recorder is an aggregated API (as metrics-server's metrics.k8s.io): kube-apiserver
# authenticates the person, checks RBAC for these resources, and passes the user on
# (kube/delegation.py); the recorder then asks whether they may read the pods themselves.
API_GROUP = "recorder.kubectl-spark.io"
API_VERSION = "v1alpha1"
API_PATH = f"/apis/{API_GROUP}/{API_VERSION}"
# What the recorder kept, by the kind it kept: lists, in a namespace or across all.
KEPT_RESOURCES = {"pods": "keptpods", "events": "keptevents"}
LOGS_RESOURCE = "keptlogs"  # a gone container's last lines, by its pod's uid
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

# What the two bindings every aggregated API server has grant it, as the recorder uses them:
# its front-proxy trust (``extension-apiserver-authentication-reader``, kube-system) and the
# API server's answers about its callers (``system:auth-delegator``): kube/delegation.py.
DELEGATION_RULES: tuple[tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]], ...] = (
    (("",), ("configmaps",), ("get",)),
    (("authentication.k8s.io",), ("tokenreviews",), ("create",)),
    (("authorization.k8s.io",), ("subjectaccessreviews",), ("create",)),
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


def manifests(opts: RecorderOptions) -> list[Body]:
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
                    "httpGet": {"path": "/healthz", "port": PORT_NAME, "scheme": "HTTPS"},
                    "periodSeconds": 10,
                },
                "livenessProbe": {
                    "httpGet": {"path": "/healthz", "port": PORT_NAME, "scheme": "HTTPS"},
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
        *_delegation(ns, cluster_meta, subject),
        {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": meta, "spec": claim},
        {"apiVersion": "v1", "kind": "Service", "metadata": meta,
         "spec": {"selector": dict(LABELS),
                  "ports": [{"name": PORT_NAME, "port": SERVICE_PORT,
                             "targetPort": PORT_NAME}]}},
        network_policy(opts, meta),
        {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": meta,
         "spec": {"maxUnavailable": 1,
                  "selector": {"matchLabels": dict(LABELS)}}},
        {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta,
         "spec": {"replicas": opts.replicas, "selector": {"matchLabels": dict(LABELS)},
                  "strategy": {"type": "Recreate"},
                  "template": {"metadata": {"labels": dict(LABELS)}, "spec": pod_spec}}},
        api_service(ns),
    ]  # fmt: skip


def api_service(namespace: str, port: int = 0) -> Body:
    """The recorder registered as ``recorder.kubectl-spark.io/v1alpha1``.

    Its serving certificate is self-signed (``app/recorder_tls.py``), so, as metrics-server's
    own manifests do, the API server does not verify it; what the recorder verifies is the API
    server's front-proxy certificate, which is what carries the caller.
    """
    return {
        "apiVersion": "apiregistration.k8s.io/v1",
        "kind": "APIService",
        "metadata": {"name": f"{API_VERSION}.{API_GROUP}", "labels": dict(LABELS)},
        "spec": {
            "group": API_GROUP,
            "version": API_VERSION,
            "service": {"namespace": namespace, "name": NAME, "port": port or SERVICE_PORT},
            "groupPriorityMinimum": 100,
            "versionPriority": 100,
            "insecureSkipTLSVerify": True,
        },
    }


def _delegation(
    ns: str, cluster_meta: dict[str, Any], subject: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """What an aggregated API server needs, and who may read it.

    The recorder asks the API server who a caller is and what they may read
    (``system:auth-delegator``: TokenReviews and SubjectAccessReviews) and reads its front-proxy
    trust (``extension-apiserver-authentication-reader`` in kube-system), as metrics-server
    does. Readers: the kept resources join the ``view``, ``edit`` and ``admin`` roles by
    aggregation, so whoever may view a namespace may ask the recorder about it; the recorder
    then checks that they may read its pods (or Events, or logs) themselves.
    """
    rbac = "rbac.authorization.k8s.io"
    reader_labels = dict(LABELS) | {
        f"rbac.authorization.k8s.io/aggregate-to-{role}": "true"
        for role in ("view", "edit", "admin")
    }
    return [
        {"apiVersion": f"{rbac}/v1", "kind": "ClusterRoleBinding",
         "metadata": {**cluster_meta, "name": f"{cluster_meta['name']}:auth-delegator"},
         "roleRef": {"apiGroup": rbac, "kind": "ClusterRole", "name": "system:auth-delegator"},
         "subjects": subject},
        {"apiVersion": f"{rbac}/v1", "kind": "RoleBinding",
         "metadata": {"name": f"{NAME}-{ns}:auth-reader", "namespace": "kube-system",
                      "labels": dict(LABELS)},
         "roleRef": {"apiGroup": rbac, "kind": "Role",
                     "name": "extension-apiserver-authentication-reader"},
         "subjects": subject},
        {"apiVersion": f"{rbac}/v1", "kind": "ClusterRole",
         "metadata": {"name": f"{NAME}:reader", "labels": reader_labels},
         "rules": [{"apiGroups": [API_GROUP], "resources": list(KEPT_RESOURCES.values()),
                    "verbs": ["list"]},
                   {"apiGroups": [API_GROUP], "resources": [LOGS_RESOURCE], "verbs": ["get"]}]},
    ]  # fmt: skip


def network_policy(opts: RecorderOptions, meta: Body) -> Body:
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
