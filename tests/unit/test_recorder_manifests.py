"""The recorder's manifests pass a security review's checks (issue 49, point 3), pure.

The same objects are admitted by the real control plane's Pod Security admission at the
``restricted`` level in tests/functional/test_recorder_security.py.
"""

from __future__ import annotations

from typing import Any

from kubectl_spark.core.recorder_manifests import (
    API_GROUP,
    API_VERSION,
    LABELS,
    NAME,
    PORT_NAME,
    PROMETHEUS_LABELS,
    RecorderOptions,
    manifests,
)
from tests.helpers import sent

DIGEST = "sha256:" + "ab" * 32


def _by_kind(opts: RecorderOptions) -> dict[str, dict[str, Any]]:
    return {str(m["kind"]): m for m in sent(manifests(opts))}


def _pod(objects: dict[str, dict[str, Any]]) -> dict[str, Any]:
    spec: dict[str, Any] = objects["Deployment"]["spec"]["template"]["spec"]
    return spec


def test_the_pod_is_at_the_restricted_pod_security_level() -> None:
    pod = _pod(_by_kind(RecorderOptions("ns", "img:1")))
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
    (container,) = pod["containers"]
    context = container["securityContext"]
    assert context["allowPrivilegeEscalation"] is False
    assert context["readOnlyRootFilesystem"] is True
    assert context["capabilities"] == {"drop": ["ALL"]}
    assert not pod.get("hostNetwork") and not container.get("ports", [{}])[0].get("hostPort")
    for probe in ("livenessProbe", "readinessProbe"):
        assert container[probe]["httpGet"] == {
            "path": "/healthz", "port": PORT_NAME, "scheme": "HTTPS"
        }  # fmt: skip


def test_a_network_policy_admits_only_the_api_server_and_prometheus() -> None:
    policy = _by_kind(RecorderOptions("ns", "img", apiserver_cidrs=("10.0.0.1/32",)))[
        "NetworkPolicy"
    ]
    assert policy["spec"]["podSelector"] == {"matchLabels": LABELS}
    assert policy["spec"]["policyTypes"] == ["Ingress"]
    (rule,) = policy["spec"]["ingress"]
    assert rule["from"] == [
        {"ipBlock": {"cidr": "10.0.0.1/32"}},
        {"namespaceSelector": {}, "podSelector": {"matchLabels": PROMETHEUS_LABELS}},
    ]
    assert rule["ports"] == [{"protocol": "TCP", "port": PORT_NAME}]


def test_a_disruption_budget_keeps_one_recorder_through_a_drain() -> None:
    pdb = _by_kind(RecorderOptions("ns", "img"))["PodDisruptionBudget"]
    assert pdb["apiVersion"] == "policy/v1"
    assert pdb["spec"] == {"maxUnavailable": 1, "selector": {"matchLabels": LABELS}}


def test_replicas_spread_over_nodes_where_the_store_allows_it() -> None:
    shared = _pod(_by_kind(RecorderOptions("ns", "img", access_mode="ReadWriteMany")))
    (spread,) = shared["topologySpreadConstraints"]
    assert spread["topologyKey"] == "kubernetes.io/hostname" and spread["maxSkew"] == 1
    assert "affinity" not in shared
    one_node = _pod(_by_kind(RecorderOptions("ns", "img")))  # a ReadWriteOnce claim
    assert "topologySpreadConstraints" not in one_node and "podAffinity" in one_node["affinity"]


def test_the_image_is_pinned_by_digest_when_given_one() -> None:
    pod = _pod(_by_kind(RecorderOptions("ns", "reg/recorder:1.0", image_digest=DIGEST)))
    assert pod["containers"][0]["image"] == f"reg/recorder:1.0@{DIGEST}"


def test_cluster_wide_pod_proxy_says_why() -> None:
    named = {
        (m["kind"], m["metadata"]["name"]): m for m in sent(manifests(RecorderOptions("ns", "img")))
    }
    role = named[("ClusterRole", f"{NAME}-ns")]
    proxy_rules = [r for r in role["rules"] if "pods/proxy" in r["resources"]]
    assert proxy_rules and proxy_rules[0]["verbs"] == ["get"]
    why = role["metadata"]["annotations"]["kubectl-spark.io/why-pods-proxy"]
    assert "allexecutors" in why
    writes = {"create", "update", "patch", "delete", "deletecollection"}
    assert not [r for r in role["rules"] if writes & set(r["verbs"])]


def test_the_recorder_is_an_aggregated_api_with_the_rights_one_needs() -> None:
    """As metrics-server's manifests: APIService, auth-delegator, the trust reader, readers."""
    objects = sent(manifests(RecorderOptions("ns", "img")))
    named = {(m["kind"], m["metadata"]["name"]): m for m in objects}
    service = named[("APIService", f"{API_VERSION}.{API_GROUP}")]["spec"]
    assert service["service"] == {"namespace": "ns", "name": NAME, "port": 443}
    assert (service["group"], service["version"]) == (API_GROUP, API_VERSION)
    (port,) = named[("Service", NAME)]["spec"]["ports"]
    assert port == {"name": PORT_NAME, "port": 443, "targetPort": PORT_NAME}
    delegator = named[("ClusterRoleBinding", f"{NAME}-ns:auth-delegator")]
    assert delegator["roleRef"]["name"] == "system:auth-delegator"
    trust = named[("RoleBinding", f"{NAME}-ns:auth-reader")]
    assert trust["metadata"]["namespace"] == "kube-system"
    assert trust["roleRef"]["name"] == "extension-apiserver-authentication-reader"
    for binding in (delegator, trust):
        assert binding["subjects"] == [{"kind": "ServiceAccount", "name": NAME, "namespace": "ns"}]
    reader = named[("ClusterRole", f"{NAME}:reader")]
    assert {
        k
        for k, v in reader["metadata"]["labels"].items()
        if k.endswith(("-view", "-edit", "-admin"))
    } == {f"rbac.authorization.k8s.io/aggregate-to-{r}" for r in ("view", "edit", "admin")}
    writes = {"create", "update", "patch", "delete", "deletecollection", "watch"}
    assert all(
        not writes & set(r["verbs"]) and r["apiGroups"] == [API_GROUP] for r in reader["rules"]
    )
    assert objects[-1]["kind"] == "APIService"  # registered once its pods are asked for
