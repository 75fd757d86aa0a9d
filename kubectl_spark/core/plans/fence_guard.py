"""What makes a fence hold, and what does not.

The admission policy the API server enforces, the other NetworkPolicies that still let traffic
through, and what each mechanism guarantees.

Why an admission policy: a NetworkPolicy isolates pods only where the CNI enforces it, and
NetworkPolicies add up (any policy that allows traffic to a pod keeps allowing it beside a
deny-all); a Lease stops only drivers that read it, and Spark's does not. A zombie driver that
still reaches the API server creates executors and, on stop, deletes every executor pod of its
app id (``KubernetesClusterSchedulerBackend.stop`` → ``ExecutorPodsAllocator``), the live
attempt's too when the two share one. The API server can refuse those writes: a service-account
token bound to a pod (what the kubelet mounts since Kubernetes 1.22) puts the pod's name and uid
in ``userInfo.extra`` (``authentication.kubernetes.io/pod-uid``; k8s.io/apiserver
``pkg/authentication/serviceaccount/util.go``), which a ValidatingAdmissionPolicy (GA in 1.30)
can match.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kubectl_spark.core import raw
from kubectl_spark.core.model import App, Attempt
from kubectl_spark.core.raw import RawObject
from kubectl_spark.knowledge.labels import FENCED_DRIVER
from kubectl_spark.knowledge.selectors import selector_from_match

from .base import FENCE_ID, Operation

ADMISSION_VERSION = "admissionregistration.k8s.io/v1"
POD_UID_EXTRA = "authentication.kubernetes.io/pod-uid"


def policy_name(uid: str) -> str:
    return f"kubectl-spark-fence-{uid}"


def _identity_rule(uid: str) -> dict[str, Any]:
    extra = "request.userInfo.extra"
    return {
        "expression": (
            f"!has({extra}) || !('{POD_UID_EXTRA}' in {extra}) || "
            f"!('{uid}' in {extra}['{POD_UID_EXTRA}'])"
        ),
        "message": f"the driver pod {uid} is fenced by kubectl spark: it may not write or connect",
        "reason": "Forbidden",
    }


def _pod_create_rule(namespace: str, condition: str, what: str) -> dict[str, Any]:
    # A pod's own create only: an eviction (a CREATE of pods/eviction, whose object is named
    # after the pod) or a binding is anyone's to make, so that a drain still moves fenced pods.
    return {
        "expression": (
            "request.operation != 'CREATE' || request.resource.resource != 'pods' || "
            "(has(request.subResource) && request.subResource != '') || "
            f"request.namespace != '{namespace}' || !({condition})"
        ),
        "message": f"{what} is fenced by kubectl spark: no new pod of it may start",
        "reason": "Forbidden",
    }


def admission_ops(app: App, attempt: Attempt, stamp: Mapping[str, str]) -> list[Operation]:
    """The policy and its binding: the fenced driver's writes and connections, its new pods, denied.

    Matched by the attempt's identity only (its driver pod's uid, in the token and in its
    executors' owner references): never by its app id, which a driver Job's attempts and a
    resubmitted copy keep, nor by its executor name prefix, which a later attempt may reuse
    (a fixed ``spark.kubernetes.executor.podNamePrefix``): the live attempt's pods would be
    refused. CONNECT is matched too: ``exec``, ``attach``, ``portforward`` and the pod and
    service ``proxy`` (a Spark UI's kill endpoints) are connections, not writes, and the
    ``edit`` role Spark's docs suggest grants them.
    """
    uid = attempt.uid or ""
    name = policy_name(uid)
    owned = "object.metadata.ownerReferences"
    rules = [
        _identity_rule(uid),
        _pod_create_rule(
            app.namespace,
            f"has({owned}) && {owned}.exists(r, r.uid == '{uid}')",
            f"a pod owned by the driver pod {uid}",
        ),
    ]
    meta = {
        "name": name,
        "labels": {FENCE_ID: uid},
        "annotations": {**stamp, FENCED_DRIVER: f"{app.namespace}/{attempt.driver_pod}"},
    }
    policy = {
        "apiVersion": ADMISSION_VERSION,
        "kind": "ValidatingAdmissionPolicy",
        "metadata": meta,
        "spec": {
            "failurePolicy": "Fail",
            "matchConstraints": {
                "resourceRules": [
                    {
                        "apiGroups": ["*"],
                        "apiVersions": ["*"],
                        "operations": ["CREATE", "UPDATE", "DELETE", "CONNECT"],
                        "resources": ["*/*"],
                    }
                ]
            },
            "validations": rules,
        },
    }
    binding = {
        "apiVersion": ADMISSION_VERSION,
        "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": meta,
        "spec": {"policyName": name, "validationActions": ["Deny"]},
    }
    return [
        Operation(
            "create",
            ADMISSION_VERSION,
            "validatingadmissionpolicies",
            None,
            name,
            "have the API server refuse every write made with the fenced driver's own identity, "
            "and every new pod of its attempt",
            policy,
        ),
        Operation(
            "create",
            ADMISSION_VERSION,
            "validatingadmissionpolicybindings",
            None,
            name,
            "put that policy to work (Deny)",
            binding,
        ),
        _enforced(app, attempt),
    ]


# How long a fence waits for kube-apiserver to put its new policy to work: the policy reaches
# the admission plugin through an informer, a second or two after it is made (measured on the
# test bed's v1.33: the zombie's first create in that window succeeded).
ENFORCED_WITHIN_SECONDS = 30
PROBE_IMAGE = "kubectl-spark.invalid/fence-probe"


def _enforced(app: App, attempt: Attempt) -> Operation:
    """Wait until a server-side dry run of a new pod of the attempt is refused by the policy."""
    uid = attempt.uid or ""
    probe = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": f"kubectl-spark-fence-probe-{uid[:8]}",
            "namespace": app.namespace,
            "ownerReferences": [
                {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "name": attempt.driver_pod or "",
                    "uid": uid,
                }
            ],
        },
        "spec": {"containers": [{"name": "probe", "image": PROBE_IMAGE}]},
    }
    return Operation(
        "wait",
        "v1",
        "pods",
        app.namespace,
        raw.name(probe),
        "until the API server refuses a new pod of the fenced attempt (a dry run: nothing is "
        "made); it puts a new policy to work a second or two after it is made",
        {"refusedCreate": probe, "by": policy_name(uid), "timeoutSeconds": ENFORCED_WITHIN_SECONDS},
    )


def removal_ops(found: Sequence[RawObject], why: str) -> list[Operation]:
    """Deletes of fence policies and bindings as read (pinned to their uid)."""
    out = []
    for obj in found:
        kind = raw.text(obj, "kind")
        resource = (
            "validatingadmissionpolicybindings"
            if kind == "ValidatingAdmissionPolicyBinding"
            else "validatingadmissionpolicies"
        )
        out.append(
            Operation(
                "delete",
                ADMISSION_VERSION,
                resource,
                None,
                raw.name(obj),
                why,
                uid=raw.uid(obj) or None,
            )
        )
    # The binding first: a binding without its policy is harmless; the other way round, too,
    # but this order never leaves a moment where a half-removed fence still denies.
    return sorted(out, key=lambda o: o.resource != "validatingadmissionpolicybindings")


def of_attempt(found: Sequence[RawObject], app: App, attempt: Attempt) -> list[RawObject]:
    """The fence's policies and bindings among ``found``, by uid or, its pods gone, by driver."""
    where = f"{app.namespace}/{attempt.driver_pod}" if attempt.driver_pod else ""
    return [
        o
        for o in found
        if (attempt.uid and raw.label(o, FENCE_ID) == attempt.uid)
        or (where and raw.annotation_map(o).get(FENCED_DRIVER) == where)
    ]


def open_paths(policies: Sequence[RawObject], pods: Sequence[RawObject]) -> list[str]:
    """What other NetworkPolicies still allow to or from the fenced pods (they add up)."""
    out = []
    for policy in policies:
        if raw.label(policy, FENCE_ID):
            continue  # a fence's own deny-all
        spec = raw.mapping(policy, "spec")
        selector = selector_from_match(raw.mapping(spec, "podSelector"))
        selected = [p for p in pods if selector.matches(raw.labels(p))]
        if not selected:
            continue
        allowed = _allowed(spec)
        if allowed:
            out.append(
                f"NetworkPolicy {raw.name(policy)} also selects "
                f"{_count(len(selected), 'fenced pod')} and still allows {allowed}: "
                "NetworkPolicies add up, so the deny-all does not take that away"
            )
    return out


def _allowed(spec: Mapping[str, Any]) -> str:
    types = [str(t) for t in raw.items(spec, "policyTypes")] or (
        ["Ingress", "Egress"] if "egress" in spec else ["Ingress"]
    )
    parts = []
    for kind, key, side in (("Ingress", "ingress", "from"), ("Egress", "egress", "to")):
        if kind not in types:
            continue
        rules = raw.items(spec, key)
        if not rules:
            continue  # a policy type with no rule denies that direction
        parts.append(f"{key} " + "; ".join(_rule_words(r, side) for r in rules))
    return " and ".join(parts)


def _rule_words(rule: Any, side: str) -> str:
    peers = raw.items(rule, side)
    ports = raw.items(rule, "ports")
    who = "from anywhere" if side == "from" else "to anywhere"
    if peers:
        who = f"{side} " + ", ".join(_peer_words(p) for p in peers)
    if ports:
        shown = ", ".join(
            f"{raw.text(p, 'protocol') or 'TCP'}/{raw.mapping(p).get('port', 'any')}" for p in ports
        )
        return f"{who} on {shown}"
    return f"{who} on every port"


def _peer_words(peer: Any) -> str:
    block = raw.mapping(peer, "ipBlock")
    if block:
        return f"ipBlock {raw.text(block, 'cidr')}"
    pods = "podSelector" in raw.mapping(peer)
    namespaces = "namespaceSelector" in raw.mapping(peer)
    if pods and namespaces:
        return "selected pods of selected namespaces"
    if namespaces:
        return (
            "selected namespaces" if raw.mapping(peer, "namespaceSelector") else "every namespace"
        )
    return (
        "selected pods of this namespace"
        if raw.mapping(peer, "podSelector")
        else "every pod of this namespace"
    )


def _count(n: int, what: str) -> str:
    return f"{n} {what}" + ("" if n == 1 else "s")


def guarantees(*, admission: bool, node_reachable: bool) -> tuple[str, ...]:
    """Per mechanism: what the fence guarantees and what it does not."""
    out = []
    if admission:
        out.append(
            "admission policy (enforced by the API server; the fence is done only once the "
            "server refuses a dry-run pod of the attempt): writes and connections (exec, "
            "attach, portforward, pod and service proxy) with the fenced driver's bound "
            "service-account token are refused (it cannot create executors, delete the live "
            "attempt's, or reach their Spark UIs); new pods owned by the driver are refused "
            "whoever creates them, by its identity only (never its app id or executor name "
            "prefix, which later attempts may share); evictions and drains of its pods by "
            "anyone else still work. It does not stop reads (get, list and watch pass no "
            "admission), a driver that uses another credential (a legacy Secret token, a "
            "kubeconfig: the API server cannot tell those from anyone else), nor pods that a "
            "StatefulSet or Deployment made before the fence keeps creating (Spark 3.3+ and "
            "4.2 allocators)"
        )
    else:
        out.append(
            "admission policy: none (the API server does not serve "
            "admissionregistration.k8s.io/v1 ValidatingAdmissionPolicy, Kubernetes < 1.30, or "
            "you may not create one): nothing stops the fenced driver from writing to the API"
        )
    out.append(
        "NetworkPolicy: denies the fenced pods' traffic only where the CNI enforces "
        "NetworkPolicies and once the node has it"
        + ("" if node_reachable else " (an unreachable node gets it when it reconnects)")
        + "; other policies that select the pods still allow what they allow"
    )
    out.append(
        "Lease: records which attempt may act (the epoch), held for as long as the fence "
        "stands (no expiry to renew); only a driver that checks it stops, and Spark does not"
    )
    out.append(
        "what ends the zombie for sure: force-kill with the node powered off (--node-down) or "
        "tainted out-of-service"
    )
    return tuple(out)
