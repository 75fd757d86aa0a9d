"""kube-apiserver's subresources as the emulator serves them: eviction, authorization and
access reviews, logs, exec — each checked over real HTTPS."""

from __future__ import annotations

from kubectl_spark.cluster.apiserver.embedded import EmbeddedApiServer
from tests.helpers import MERGE, PODS, bind, make, raw


# ------------------------------------------------------------------------ subresources
def test_eviction_sets_disruption_target_and_honours_budgets(api) -> None:
    make(api, "ev", {"app": "x"})
    bind(api, "ev")
    raw(api, "PATCH", f"{PODS}/ev/status", {"status": {"phase": "Running"}}, content_type=MERGE)
    _, _pdb = raw(
        api,
        "POST",
        "/apis/policy/v1/namespaces/default/poddisruptionbudgets",
        {"metadata": {"name": "budget"}, "spec": {"selector": {"matchLabels": {"app": "x"}}}},
    )
    eviction = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "ev"}}
    status, body = raw(api, "POST", f"{PODS}/ev/eviction", eviction)
    assert (status, body["reason"]) == (429, "TooManyRequests")
    raw(api, "DELETE", "/apis/policy/v1/namespaces/default/poddisruptionbudgets/budget")
    status, body = raw(api, "POST", f"{PODS}/ev/eviction", eviction)
    assert (status, body["status"]) == (201, "Success")
    _, evicted = raw(api, "GET", f"{PODS}/ev")
    assert evicted["metadata"]["deletionTimestamp"]
    target = [c for c in evicted["status"]["conditions"] if c["type"] == "DisruptionTarget"]
    assert target[0]["reason"] == "EvictionByEvictionAPI"


def test_authorization_policy_and_self_subject_access_review(
    api, emulator: EmbeddedApiServer
) -> None:
    emulator.set_policy(
        {
            "rules": [
                {
                    "effect": "deny",
                    "verbs": ["list"],
                    "resources": ["pods"],
                    "namespaces": ["kube-system"],
                }
            ]
        }
    )
    status, body = raw(api, "GET", "/api/v1/namespaces/kube-system/pods")
    assert (status, body["reason"]) == (403, "Forbidden")
    assert body["message"] == (
        'pods is forbidden: User "kubectl-spark-admin" cannot list resource "pods" '
        'in API group "" in the namespace "kube-system"'
    )
    assert raw(api, "GET", PODS)[0] == 200

    def review(**attrs) -> bool:
        status, body = raw(
            api,
            "POST",
            "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
            {"spec": {"resourceAttributes": attrs}},
        )
        assert status == 201
        return body["status"]["allowed"]

    assert review(verb="list", resource="pods", namespace="kube-system") is False
    assert review(verb="list", resource="pods", namespace="default") is True
    assert raw(api, "GET", "/x-emulator/v1/audit")[0] == 200


def test_logs_errors_and_follow(api, emulator: EmbeddedApiServer) -> None:
    raw(
        api,
        "POST",
        PODS,
        {
            "metadata": {"name": "two"},
            "spec": {"containers": [{"name": "a", "image": "i:1"}, {"name": "b", "image": "i:1"}]},
        },
    )
    status, body = raw(api, "GET", f"{PODS}/two/log")
    assert (status, body["message"]) == (
        400,
        "a container name must be specified for pod two, choose one of: [a b]",
    )
    # No node took it: kube-apiserver has no kubelet to ask and answers 204, previous or not.
    assert raw(api, "GET", f"{PODS}/two/log", query={"container": "a"}) == (204, "")
    assert raw(api, "GET", f"{PODS}/two/log", query={"container": "a", "previous": "true"}) == (
        204,
        "",
    )
    raw(
        api,
        "POST",
        PODS,
        {
            "metadata": {"name": "three"},
            "spec": {"nodeName": "node-a", "containers": [{"name": "a", "image": "i:1"}]},
        },
    )
    status, body = raw(api, "GET", f"{PODS}/three/log")
    assert (status, body["message"]) == (
        400,
        'container "a" in pod "three" is waiting to start: ContainerCreating',
    )
    emulator.append_log("default", "three", "a", "hello")
    assert raw(api, "GET", f"{PODS}/three/log") == (200, "hello\n")


def test_exec_is_checked_as_kube_apiserver_checks_it_before_a_kubelet_is_asked(
    api, emulator: EmbeddedApiServer, kubectl
) -> None:
    """kubectl's own WebSocket exec (v5) against the emulator, up to the kubelet; the kubelet's
    part is tried with real processes in tests/realspark/test_shell.py."""
    make(api, "nohost")
    said = kubectl("exec", "nohost", "--", "true", check=False)
    assert said.returncode == 1
    assert "pod nohost does not have a host assigned" in said.stderr, said.stderr

    make(api, "far")
    raw(api, "POST", "/api/v1/nodes", {"metadata": {"name": "node-a"}})
    bind(api, "far")
    # The node's status names no kubelet that answers: the dial fails, as kube-apiserver's does
    raw(api, "PUT", "/x-emulator/v1/unreachable-nodes", {"nodes": ["node-a"]})
    said = kubectl("exec", "far", "--", "true", check=False)
    assert "error dialing backend" in said.stderr, said.stderr

    # SPDY (an older kubectl's, a POST) is refused with a reason, never half served, once a
    # kubelet answers (the emulator's own port stands for one: only its dial is tried)
    raw(api, "PUT", "/x-emulator/v1/unreachable-nodes", {"nodes": []})
    kubelet = {
        "addresses": [{"type": "InternalIP", "address": "127.0.0.1"}],
        "daemonEndpoints": {"kubeletEndpoint": {"Port": emulator.port}},
    }
    answer = raw(
        api,
        "PATCH",
        "/api/v1/nodes/node-a/status",
        {"status": kubelet},
        content_type="application/merge-patch+json",
    )
    assert answer[0] == 200, answer
    status, body = raw(api, "POST", f"{PODS}/far/exec?command=true&stdout=true")
    assert (status, body["message"]) == (
        400,
        "Upgrade request required: the emulator serves exec over WebSockets",
    ), body

    # A WebSocket's GET asks create too (AuthorizePodWebsocketUpgradeCreatePermission)
    emulator.set_policy(
        {"rules": [{"effect": "deny", "verbs": ["create"], "resources": ["pods/exec"]}]}
    )
    said = kubectl("exec", "far", "--", "true", check=False)
    assert said.returncode == 1
    assert 'cannot create resource "pods/exec"' in said.stderr, said.stderr
