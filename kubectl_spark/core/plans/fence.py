"""``fence`` and ``unfence``: stop an attempt from acting, and undo it."""

import copy
import dataclasses
from collections.abc import Sequence

from kubectl_spark.core import raw
from kubectl_spark.core.model import App, Attempt
from kubectl_spark.core.raw import RawObject
from kubectl_spark.knowledge.labels import FENCE_LABEL, FENCED_DRIVER, KEEPS_EXECUTORS

from . import fence_guard
from .base import (
    FENCE_ID,
    Operation,
    Plan,
    already_over,
    delete_pod_now,
    driver_not_ours,
    event,
    executors_deleted,
    patch_pod,
    pods_of,
    stamp_of,
)

FENCE_LEASE_SECONDS = 10 * 365 * 24 * 3600  # ten years: until unfence, in an int32


def fence_plan(
    app: App,
    attempt: Attempt,
    *,
    lease: RawObject | None,
    allow: int | None,
    keep_executors: bool,
    now: str,
    actor: str,
    node_reachable: bool = True,
    force: bool = False,
    admission: bool = False,
    network_policies: Sequence[RawObject] = (),
    attempt_pods: Sequence[RawObject] = (),
) -> Plan:
    """Cut a zombie attempt off from the API server, the network and the Lease.

    ``admission``: the API server serves ValidatingAdmissionPolicy (v1) and it may be made;
    ``network_policies``: the namespace's, to say which still let traffic through;
    ``attempt_pods``: the attempt's pods as read (their labels).
    """
    base = Plan("fence", app.namespace, app.name, attempt.number)
    not_ours = driver_not_ours(attempt, "fence", "cut off")
    if not_ours:
        return dataclasses.replace(base, refusal=not_ours)
    if not attempt.uid or not attempt.driver_pod:
        running = [e for e in attempt.executors if e.source == "cluster" and e.state == "Running"]
        more = (
            f"; its {len(running)} executor(s) still run: delete them with kubectl spark "
            f"force-kill {app.name}/{attempt.number}"
            if running
            else ""
        )
        return dataclasses.replace(
            base,
            noop=f"attempt {attempt.number}'s driver pod is gone: there is nothing left to fence"
            + more,
        )
    if over := already_over(attempt, "fence"):
        return dataclasses.replace(base, noop=over)
    if attempt.fenced and fence_done(attempt, lease, keep_executors=keep_executors):
        return dataclasses.replace(
            base,
            noop=f"attempt {attempt.number} is already fenced (epoch {raw.number(lease, 'spec', 'leaseTransitions') or '?'})",
        )
    if attempt.state == "Running" and node_reachable and not force:
        suspects = [
            f"{app.name}/{a.number} ({a.state})"
            for a in app.attempts
            if a.uid and not a.fenced and a.state in ("Lost", "Terminating", "Unknown")
        ]
        return dataclasses.replace(
            base,
            refusal=f"attempt {attempt.number} looks healthy (driver {attempt.driver_pod} Running on "
            f"reachable node {attempt.node}): a fence is for a zombie attempt"
            + (f" (did you mean {' or '.join(suspects)}?)" if suspects else "")
            + "; pass --force to fence it anyway",
        )
    candidates = [
        a
        for a in app.attempts
        if a.number != attempt.number
        and a.uid
        and not a.fenced
        and a.state in ("Running", "Pending")
    ]
    if allow is not None:
        allowed = next((a for a in app.attempts if a.number == allow), None)
        if allowed is None or allow == attempt.number:
            return dataclasses.replace(
                base, refusal=f"--allow {allow} names no other attempt of {app.name}"
            )
    else:
        allowed = candidates[-1] if candidates else None
    epoch = (raw.number(lease, "spec", "leaseTransitions") or 0) + 1 if lease else 1
    stamp = stamp_of(actor, now, "fence", epoch)
    # The API server's refusal first: it stops a zombie that still reaches it soonest.
    ops: list[Operation] = fence_guard.admission_ops(app, attempt, stamp) if admission else []
    ops += [
        patch_pod(
            app,
            pod,
            uid,
            f"mark the {role} fenced and select it for the deny-all policy",
            {
                "labels": {FENCE_LABEL: "true", FENCE_ID: attempt.uid},
                # Whether its executors were to be kept: a fenced executor still running
                # without it is one the fence did not reach (core/alerts: UnfinishedAction).
                "annotations": {**stamp, **({KEEPS_EXECUTORS: "true"} if keep_executors else {})},
            },
        )
        for pod, uid, role in pods_of(attempt)
    ]
    policy = f"kubectl-spark-fence-{attempt.uid}"
    ops.append(
        Operation(
            "create",
            "networking.k8s.io/v1",
            "networkpolicies",
            app.namespace,
            policy,
            "deny all ingress and egress of exactly this attempt's pods",
            {
                "apiVersion": "networking.k8s.io/v1",
                "kind": "NetworkPolicy",
                "metadata": {
                    "name": policy,
                    "namespace": app.namespace,
                    "labels": {FENCE_ID: attempt.uid},
                    # Its driver pod by name: once force-kill removes the pods (and with them the
                    # uid), unfence still finds what to clean.
                    "annotations": {**stamp, FENCED_DRIVER: attempt.driver_pod or ""},
                },
                "spec": {
                    "podSelector": {"matchLabels": {FENCE_ID: attempt.uid}},
                    "policyTypes": ["Ingress", "Egress"],
                },
            },
        )
    )
    lease_name = f"kubectl-spark-{app.name}"[:253]
    identity = f"{app.name}/{allowed.number}/{allowed.uid}" if allowed else ""
    spec = {
        "holderIdentity": identity,
        "leaseTransitions": epoch,
        "acquireTime": _micro(now),
        "renewTime": _micro(now),
        # Held while the fence stands: nothing renews it (kubectl spark is not running), so
        # a short term would let it lapse seconds after the fence, and a leader-election
        # client would take a lapsed Lease as free. unfence keeps its epoch.
        "leaseDurationSeconds": FENCE_LEASE_SECONDS,
    }
    why = f"take the fencing Lease from attempt {attempt.number} (epoch {epoch})" + (
        f", for attempt {allowed.number}" if allowed else ""
    )
    if lease is None:
        ops.append(
            Operation(
                "create",
                "coordination.k8s.io/v1",
                "leases",
                app.namespace,
                lease_name,
                why,
                {
                    "apiVersion": "coordination.k8s.io/v1",
                    "kind": "Lease",
                    "metadata": {
                        "name": lease_name,
                        "namespace": app.namespace,
                        "annotations": stamp,
                    },
                    "spec": spec,
                },
            )
        )
    else:
        body = copy.deepcopy(dict(lease))
        body["spec"] = {**raw.mapping(lease, "spec"), **spec}
        meta = dict(raw.mapping(body, "metadata"))
        meta["annotations"] = {**raw.mapping(meta, "annotations"), **stamp}
        body["metadata"] = meta
        ops.append(
            Operation(
                "update",
                "coordination.k8s.io/v1",
                "leases",
                app.namespace,
                lease_name,
                why + " (compare-and-swap)",
                body,
                resource_version=raw.text(lease, "metadata", "resourceVersion"),
            )
        )
    if not keep_executors:
        ops += executors_deleted(app, attempt, "fence", now, actor)
        ops.extend(
            delete_pod_now(app, pod, uid, "stop the fenced attempt's executor now")
            for pod, uid, role in pods_of(attempt)
            if role == "executor"
        )
    ops.append(
        event(
            app,
            attempt,
            "Fenced",
            f"attempt {attempt.number} fenced by {actor} (epoch {epoch})"
            + (f"; attempt {allowed.number} may proceed" if allowed else ""),
            now,
            actor,
        )
    )
    warnings = fence_guard.open_paths(network_policies, attempt_pods)
    if not admission:
        warnings.append(
            "no admission policy can be made here: a zombie driver that reaches the API server "
            "can still create executors and delete the live attempt's"
        )
    if not node_reachable:
        warnings.append(
            f"node {attempt.node} is unreachable: the policy reaches it only when it reconnects; "
            f"force-kill {app.name}/{attempt.number} removes the pods from the API"
        )
    return dataclasses.replace(
        base,
        operations=tuple(ops),
        warnings=tuple(warnings),
        guarantees=fence_guard.guarantees(admission=admission, node_reachable=node_reachable),
    )


def fence_done(attempt: Attempt, lease: RawObject | None, *, keep_executors: bool) -> bool:
    """Whether a fence of this fenced attempt (its pods marked) went to its end.

    It did once its Lease has been taken from the attempt and, unless they were to be kept,
    none of its executors runs. An earlier run stopped before that (a failed step, a lost
    connection) is finished by running the same fence again: every step already done is found
    done, the rest is applied.
    """
    if lease is None or raw.text(lease, "spec", "holderIdentity").endswith(f"/{attempt.uid}"):
        return False
    # A fenced executor's state is Fenced: its phase says whether its pod still runs.
    return keep_executors or not any(
        e.source == "cluster" and e.phase in ("Running", "Pending") for e in attempt.executors
    )


def unfence_plan(
    app: App,
    attempt: Attempt,
    *,
    now: str,
    actor: str,
    policies: Sequence[RawObject] = (),
    admission: Sequence[RawObject] = (),
) -> Plan:
    """Undo a fence; or, when its pods are gone (force-killed), remove what it left behind.

    ``policies``: the namespace's fence NetworkPolicies (labelled FENCE_ID), to find those of
    an attempt whose pods, and so whose uid, are gone; ``admission``: the fences'
    ValidatingAdmissionPolicies and bindings (labelled FENCE_ID).
    """
    base = Plan("unfence", app.namespace, app.name, attempt.number)
    guards = fence_guard.removal_ops(
        fence_guard.of_attempt(admission, app, attempt),
        f"let the driver of attempt {attempt.number} write again",
    )
    if not attempt.fenced or not attempt.uid:
        left = [
            p
            for p in policies
            if (attempt.uid and raw.label(p, FENCE_ID) == attempt.uid)
            or (
                attempt.driver_pod
                and raw.annotation_map(p).get(FENCED_DRIVER) == attempt.driver_pod
            )
        ]
        if not left and not guards:
            return dataclasses.replace(base, noop=f"attempt {attempt.number} is not fenced")
        return dataclasses.replace(
            base,
            operations=tuple(guards)
            + tuple(
                Operation(
                    "delete",
                    "networking.k8s.io/v1",
                    "networkpolicies",
                    app.namespace,
                    raw.name(p),
                    f"remove the deny-all policy left by the fence of attempt {attempt.number} "
                    "(its pods are gone)",
                    uid=raw.uid(p) or None,
                )
                for p in left
            ),
            notes=("the fencing Lease keeps its epoch; it is not handed back",),
        )
    ops = guards + [
        patch_pod(
            app,
            pod,
            uid,
            f"remove the fence from the {role}",
            {
                "labels": {FENCE_LABEL: None, FENCE_ID: None},
                "annotations": stamp_of(actor, now, "unfence"),
            },
        )
        for pod, uid, role in pods_of(attempt)
    ]
    ops.append(
        Operation(
            "delete",
            "networking.k8s.io/v1",
            "networkpolicies",
            app.namespace,
            f"kubectl-spark-fence-{attempt.uid}",
            "remove the deny-all policy",
        )
    )
    ops.append(
        event(app, attempt, "Unfenced", f"attempt {attempt.number} unfenced by {actor}", now, actor)
    )
    return dataclasses.replace(
        base,
        operations=tuple(ops),
        notes=("the fencing Lease keeps its epoch; it is not handed back",),
    )


def _micro(now: str) -> str:
    return now.replace("Z", ".000000Z") if now.endswith("Z") and "." not in now else now
