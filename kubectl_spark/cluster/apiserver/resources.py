"""The resources the emulator serves, and the discovery documents that describe them.

kubectl maps `kubectl get pods` or `kubectl get sparkapp` to a URL only through discovery, so
each entry carries what kube-apiserver publishes: plural, singular, kind, scope, verbs, short
names and subresources.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

ALL_VERBS = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")


@dataclass(frozen=True)
class Subresource:
    name: str
    kind: str
    verbs: tuple[str, ...]
    group: str | None = None  # set when the subresource's kind lives in another group
    version: str | None = None


@dataclass(frozen=True)
class ResourceType:
    group: str
    version: str
    plural: str
    singular: str
    kind: str
    namespaced: bool
    verbs: tuple[str, ...] = ALL_VERBS
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    subresources: tuple[Subresource, ...] = ()
    # Built-in types accept strategic-merge patches; custom resources do not.
    builtin: bool = True
    # Objects live in the storage of another resource (events.k8s.io events are core events).
    storage: str = ""
    stored: bool = True  # False for review-style resources that are created but never kept
    # A custom resource served at a version other than its storage version: the apiVersion it is
    # stored under (conversion strategy None, as kube-apiserver does: only apiVersion changes).
    stored_as: str = ""

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def resource(self) -> str:
        """``<plural>.<group>``: what names a resource across groups (pods., jobs.batch)."""
        return f"{self.plural}.{self.group}"

    @property
    def key(self) -> str:
        """The storage key: objects of two resources with the same key are the same objects."""
        return self.storage or f"{self.plural}.{self.group}"

    @property
    def has_status(self) -> bool:
        return any(s.name == "status" for s in self.subresources)

    def subresource(self, name: str) -> Subresource | None:
        for sub in self.subresources:
            if sub.name == name:
                return sub
        return None


def _status(kind: str) -> Subresource:
    return Subresource("status", kind, ("get", "patch", "update"))


SPARK_APPLICATIONS = ResourceType(
    "sparkoperator.k8s.io",
    "v1beta2",
    "sparkapplications",
    "sparkapplication",
    "SparkApplication",
    namespaced=True,
    short_names=("sparkapp",),
    categories=("all",),
    subresources=(_status("SparkApplication"),),
    builtin=False,
)


def _apache(plural: str, kind: str, version: str) -> ResourceType:
    """A CRD of the Apache Spark Kubernetes Operator (build-tools/helm/…/crds in its repository).

    Both versions are served, v1 is stored; their schemas differ in nothing the plugin reads.
    Its short names are the chart's: ``sparkapp`` (the Kubeflow CRD's too) and ``sparkcluster``.
    """
    return ResourceType(
        APACHE_GROUP,
        version,
        plural,
        plural[:-1],
        kind,
        namespaced=True,
        short_names=("sparkapp" if kind == "SparkApplication" else "sparkcluster",),
        subresources=(_status(kind),),
        builtin=False,
        storage="" if version == "v1" else f"{plural}.{APACHE_GROUP}",
        stored_as="" if version == "v1" else f"{APACHE_GROUP}/v1",
    )


APACHE_GROUP = "spark.apache.org"
APACHE_CRDS: tuple[ResourceType, ...] = tuple(
    _apache(plural, kind, version)
    for plural, kind in (
        ("sparkapplications", "SparkApplication"),
        ("sparkclusters", "SparkCluster"),
    )
    for version in ("v1", "v1beta1")  # the preferred version first
)

BUILTIN: tuple[ResourceType, ...] = (
    ResourceType(
        "",
        "v1",
        "pods",
        "pod",
        "Pod",
        namespaced=True,
        short_names=("po",),
        categories=("all",),
        subresources=(
            Subresource("binding", "Binding", ("create",)),
            Subresource("eviction", "Eviction", ("create",), group="policy", version="v1"),
            Subresource("log", "Pod", ("get",)),
            Subresource("exec", "PodExecOptions", ("create", "get")),
            Subresource("proxy", "PodProxyOptions", ("create", "delete", "get", "patch", "update")),
            _status("Pod"),
        ),
    ),
    ResourceType(
        "",
        "v1",
        "nodes",
        "node",
        "Node",
        namespaced=False,
        short_names=("no",),
        subresources=(_status("Node"),),
    ),
    ResourceType(
        "",
        "v1",
        "namespaces",
        "namespace",
        "Namespace",
        namespaced=False,
        short_names=("ns",),
        verbs=("create", "delete", "get", "list", "patch", "update", "watch"),
        subresources=(_status("Namespace"),),
    ),
    ResourceType("", "v1", "events", "event", "Event", namespaced=True, short_names=("ev",)),
    ResourceType(
        "", "v1", "configmaps", "configmap", "ConfigMap", namespaced=True, short_names=("cm",)
    ),
    ResourceType(
        "",
        "v1",
        "serviceaccounts",
        "serviceaccount",
        "ServiceAccount",
        namespaced=True,
        short_names=("sa",),
        # TokenRequest: a token bound to a pod, as the kubelet asks for a pod's projected token.
        subresources=(
            Subresource(
                "token", "TokenRequest", ("create",), group="authentication.k8s.io", version="v1"
            ),
        ),
    ),
    ResourceType(
        "",
        "v1",
        "services",
        "service",
        "Service",
        namespaced=True,
        short_names=("svc",),
        categories=("all",),
        subresources=(
            # The service proxy (server_subresources._service_proxy): what the plugin reads
            # an in-cluster recorder through.
            Subresource(
                "proxy", "ServiceProxyOptions", ("create", "delete", "get", "patch", "update")
            ),
            _status("Service"),
        ),
        verbs=("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"),
    ),
    ResourceType(
        "", "v1", "endpoints", "endpoints", "Endpoints", namespaced=True, short_names=("ep",)
    ),
    ResourceType(
        "",
        "v1",
        "persistentvolumeclaims",
        "persistentvolumeclaim",
        "PersistentVolumeClaim",
        namespaced=True,
        short_names=("pvc",),
        subresources=(_status("PersistentVolumeClaim"),),
    ),
    # Stored with no binder behind them (kube-controller-manager's persistentvolume-binder):
    # what binds a claim is the simulator's provisioner, or a test.
    ResourceType(
        "",
        "v1",
        "persistentvolumes",
        "persistentvolume",
        "PersistentVolume",
        namespaced=False,
        short_names=("pv",),
        subresources=(_status("PersistentVolume"),),
    ),
    ResourceType(
        "batch",
        "v1",
        "jobs",
        "job",
        "Job",
        namespaced=True,
        categories=("all",),
        subresources=(_status("Job"),),
    ),
    ResourceType("coordination.k8s.io", "v1", "leases", "lease", "Lease", namespaced=True),
    # Served and stored, with no controller behind them: Spark 3.3+'s StatefulSet and 4.2's
    # Deployment allocators own executors through them (tests create the pods themselves).
    ResourceType(
        "apps",
        "v1",
        "statefulsets",
        "statefulset",
        "StatefulSet",
        namespaced=True,
        short_names=("sts",),
        categories=("all",),
        subresources=(_status("StatefulSet"),),
    ),
    ResourceType(
        "apps",
        "v1",
        "deployments",
        "deployment",
        "Deployment",
        namespaced=True,
        short_names=("deploy",),
        categories=("all",),
        subresources=(_status("Deployment"),),
    ),
    ResourceType(
        "apps",
        "v1",
        "replicasets",
        "replicaset",
        "ReplicaSet",
        namespaced=True,
        short_names=("rs",),
        categories=("all",),
        subresources=(_status("ReplicaSet"),),
    ),
    ResourceType(
        "policy",
        "v1",
        "poddisruptionbudgets",
        "poddisruptionbudget",
        "PodDisruptionBudget",
        namespaced=True,
        short_names=("pdb",),
        subresources=(_status("PodDisruptionBudget"),),
    ),
    ResourceType(
        "networking.k8s.io",
        "v1",
        "networkpolicies",
        "networkpolicy",
        "NetworkPolicy",
        namespaced=True,
        short_names=("netpol",),
    ),
    ResourceType(
        "storage.k8s.io",
        "v1",
        "volumeattachments",
        "volumeattachment",
        "VolumeAttachment",
        namespaced=False,
        subresources=(_status("VolumeAttachment"),),
    ),
    ResourceType(
        "admissionregistration.k8s.io",
        "v1",
        "validatingadmissionpolicies",
        "validatingadmissionpolicy",
        "ValidatingAdmissionPolicy",
        namespaced=False,
        subresources=(_status("ValidatingAdmissionPolicy"),),
    ),
    ResourceType(
        "admissionregistration.k8s.io",
        "v1",
        "validatingadmissionpolicybindings",
        "validatingadmissionpolicybinding",
        "ValidatingAdmissionPolicyBinding",
        namespaced=False,
    ),
    ResourceType(
        "events.k8s.io",
        "v1",
        "events",
        "event",
        "Event",
        namespaced=True,
        short_names=("ev",),
        storage="events.",
    ),
    ResourceType(
        "authorization.k8s.io",
        "v1",
        "selfsubjectaccessreviews",
        "selfsubjectaccessreview",
        "SelfSubjectAccessReview",
        namespaced=False,
        verbs=("create",),
        stored=False,
    ),
    # What an aggregated API server asks (aggregation.py): may this user, who is this token.
    ResourceType(
        "authorization.k8s.io",
        "v1",
        "subjectaccessreviews",
        "subjectaccessreview",
        "SubjectAccessReview",
        namespaced=False,
        verbs=("create",),
        stored=False,
    ),
    ResourceType(
        "authentication.k8s.io",
        "v1",
        "tokenreviews",
        "tokenreview",
        "TokenReview",
        namespaced=False,
        verbs=("create",),
        stored=False,
    ),
    ResourceType(
        "apiregistration.k8s.io",
        "v1",
        "apiservices",
        "apiservice",
        "APIService",
        namespaced=False,
        subresources=(_status("APIService"),),
    ),
)

# kube-apiserver lists groups in this order in /apis; kubectl resolves ambiguous short names
# (e.g. "events") by it, preferring the core group.
GROUP_ORDER = (
    "apps",
    "batch",
    "networking.k8s.io",
    "policy",
    "storage.k8s.io",
    "admissionregistration.k8s.io",
    "coordination.k8s.io",
    "events.k8s.io",
    "authentication.k8s.io",
    "authorization.k8s.io",
    "apiregistration.k8s.io",
    # CRD groups after the built-in ones, by name: "spark.apache.org" sorts before
    # "sparkoperator.k8s.io", so where both are installed kubectl's `sparkapp` and
    # `sparkapplications` mean the Apache operator's (as the real control plane answers).
    "spark.apache.org",
    "sparkoperator.k8s.io",
)


@dataclass
class Registry:
    types: list[ResourceType] = field(default_factory=list)

    @classmethod
    def default(
        cls,
        *,
        spark_operator_crd: bool = True,
        apache_versions: tuple[str, ...] = ("v1", "v1beta1"),
    ) -> Registry:
        types = list(BUILTIN)
        if spark_operator_crd:
            types.append(SPARK_APPLICATIONS)
        # v1 stores when served; an older release's v1beta1 alone stores itself
        types.extend(
            rt if "v1" in apache_versions else dataclasses.replace(rt, storage="", stored_as="")
            for rt in APACHE_CRDS
            if rt.version in apache_versions
        )
        return cls(types)

    def lookup(self, group: str, version: str, plural: str) -> ResourceType | None:
        for rt in self.types:
            if rt.group == group and rt.version == version and rt.plural == plural:
                return rt
        return None

    def by_kind(self, api_version: str, kind: str) -> ResourceType | None:
        for rt in self.types:
            if rt.kind == kind and rt.api_version == api_version:
                return rt
        return None

    def by_kind_any_version(self, kind: str, group: str) -> ResourceType | None:
        for rt in self.types:
            if rt.kind == kind and rt.group == group and not rt.storage:
                return rt
        return None

    def group_versions(self) -> list[tuple[str, str]]:
        seen: list[tuple[str, str]] = []
        for rt in self.types:
            if rt.group and (rt.group, rt.version) not in seen:
                seen.append((rt.group, rt.version))
        order = {g: i for i, g in enumerate(GROUP_ORDER)}
        return sorted(seen, key=lambda gv: order.get(gv[0], len(order)))

    # ------------------------------------------------------------------ discovery documents
    def api_versions(self, server_address: str) -> dict[str, Any]:
        return {
            "kind": "APIVersions",
            "versions": ["v1"],
            "serverAddressByClientCIDRs": [
                {"clientCIDR": "0.0.0.0/0", "serverAddress": server_address}
            ],
        }

    def _group_entry(self, group: str) -> dict[str, Any]:
        """A group with every version it serves, the first registered preferred (v1 over v1beta1)."""
        versions = [
            {"groupVersion": f"{g}/{v}", "version": v}
            for g, v in self.group_versions()
            if g == group
        ]
        return {"name": group, "versions": versions, "preferredVersion": versions[0]}

    def api_group_list(self) -> dict[str, Any]:
        groups = [self._group_entry(g) for g in dict.fromkeys(g for g, _ in self.group_versions())]
        return {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}

    def api_group(self, group: str) -> dict[str, Any] | None:
        if any(g == group for g, _ in self.group_versions()):
            return {"kind": "APIGroup", "apiVersion": "v1", **self._group_entry(group)}
        return None

    def resource_list(self, group: str, version: str) -> dict[str, Any] | None:
        resources: list[dict[str, Any]] = []
        for rt in self.types:
            if rt.group != group or rt.version != version:
                continue
            entry: dict[str, Any] = {
                "name": rt.plural,
                "singularName": rt.singular,
                "namespaced": rt.namespaced,
                "kind": rt.kind,
                "verbs": list(rt.verbs),
            }
            if rt.short_names:
                entry["shortNames"] = list(rt.short_names)
            if rt.categories:
                entry["categories"] = list(rt.categories)
            resources.append(entry)
            for sub in rt.subresources:
                sub_entry: dict[str, Any] = {
                    "name": f"{rt.plural}/{sub.name}",
                    "singularName": "",
                    "namespaced": rt.namespaced,
                    "kind": sub.kind,
                    "verbs": list(sub.verbs),
                }
                if sub.group is not None:
                    sub_entry["group"] = sub.group
                    sub_entry["version"] = sub.version
                resources.append(sub_entry)
        if not resources:
            return None
        gv = f"{group}/{version}" if group else version
        return {
            "kind": "APIResourceList",
            "apiVersion": "v1",
            "groupVersion": gv,
            "resources": resources,
        }
