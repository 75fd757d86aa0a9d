"""Action plans: what ``fence``, ``unfence``, ``force-kill`` and ``resubmit`` would do.

A plan is an ordered list of API operations, each pinned to what was observed (a pod's UID, a
Lease's resourceVersion) and each with a one-line reason; or a refusal; or a no-op when the
action already took effect. Plans are pure: the gateway checks permissions and applies them
step by step, ``--dry-run`` prints them.
"""

from __future__ import annotations

import copy
import dataclasses
import re
from dataclasses import dataclass, field
from typing import Any

from kubectl_spark.knowledge.labels import FENCE_LABEL

from . import raw
from .model import App, Attempt

FENCE_ID = "kubectl-spark.io/fence-id"
ACTION = "kubectl-spark.io/action"
ACTOR = "kubectl-spark.io/actor"
ACTED_AT = "kubectl-spark.io/at"
EPOCH = "kubectl-spark.io/epoch"
RESUBMITTED_FROM = "kubectl-spark.io/resubmitted-from"
PREFIX_CONF = "spark.kubernetes.executor.podNamePrefix"
MERGE = "application/merge-patch+json"
OUT_OF_SERVICE = "node.kubernetes.io/out-of-service"

FORCE_DELETE_WARNING = (
    "Immediate deletion does not wait for confirmation that the running resource has been terminated. "
    "The resource may continue to run on the cluster indefinitely."
)
NETWORK_POLICY_CAVEAT = (
    "a NetworkPolicy only isolates pods where the cluster's CNI enforces NetworkPolicies, and only once the "
    "node receives it: a partitioned node may not see it until the partition heals"
)
LEASE_CAVEAT = (
    "the fencing Lease only stops drivers that check it before they act; Spark itself does not"
)


@dataclass(frozen=True)
class Operation:
    verb: str  # create, update, patch, delete
    api_version: str
    resource: str  # plural
    namespace: str | None
    name: str
    reason: str
    body: dict[str, Any] | None = None
    uid: str | None = None  # a UID precondition
    resource_version: str | None = None  # a resourceVersion precondition (compare-and-swap)
    subresource: str = ""

    @property
    def group(self) -> str:
        return self.api_version.rpartition("/")[0]

    def target(self) -> str:
        kind = self.resource if not self.group else f"{self.resource}.{self.group}"
        where = f"{self.namespace}/" if self.namespace else ""
        return f"{kind} {where}{self.name}"

    def summary(self) -> str:
        pins = [
            f"uid={self.uid}" if self.uid else "",
            f"resourceVersion={self.resource_version}" if self.resource_version else "",
        ]
        pinned = f" [{', '.join(p for p in pins if p)}]" if any(pins) else ""
        return f"{self.verb} {self.target()}{pinned}: {self.reason}"

    def to_json(self) -> dict[str, Any]:
        return {
            "verb": self.verb,
            "apiVersion": self.api_version,
            "resource": self.resource,
            "namespace": self.namespace,
            "name": self.name,
            "reason": self.reason,
            "preconditions": {"uid": self.uid, "resourceVersion": self.resource_version},
            "body": self.body,
        }


@dataclass(frozen=True)
class Plan:
    action: str
    namespace: str
    app: str
    attempt: int | None
    operations: tuple[Operation, ...] = ()
    warnings: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    refusal: str = ""
    noop: str = ""
    created: tuple[dict[str, Any], ...] = field(default_factory=tuple)  # objects a resubmit creates

    def permissions(self) -> list[tuple[str, str, str, str, str]]:
        """(verb, group, resource, subresource, namespace) for a SelfSubjectAccessReview each."""
        seen: dict[tuple[str, str, str, str, str], None] = {}
        for op in self.operations:
            seen[(op.verb, op.group, op.resource, op.subresource, op.namespace or "")] = None
        return list(seen)

    def to_json(self) -> dict[str, Any]:
        return {
            "apiVersion": "kubectl-spark/v1",
            "kind": "ActionPlan",
            "action": self.action,
            "namespace": self.namespace,
            "app": self.app,
            "attempt": self.attempt,
            "refusal": self.refusal or None,
            "noop": self.noop or None,
            "warnings": list(self.warnings),
            "notes": list(self.notes),
            "operations": [o.to_json() for o in self.operations],
        }


def _stamp(actor: str, now: str, action: str, epoch: int | None = None) -> dict[str, str]:
    out = {ACTION: action, ACTOR: actor, ACTED_AT: now}
    if epoch is not None:
        out[EPOCH] = str(epoch)
    return out


def _event(
    app: App, attempt: Attempt, reason: str, message: str, now: str, actor: str
) -> Operation:
    """The Event an action leaves on the attempt's driver pod (a Warning, but for an unfence)."""
    return _event_on(
        app.namespace,
        "Pod",
        "v1",
        attempt.driver_pod or "",
        attempt.uid or "",
        reason,
        message,
        now,
        actor,
        warning=reason != "Unfenced",
        on="the driver pod",
    )


def _event_on(
    namespace: str,
    kind: str,
    api_version: str,
    name: str,
    uid: str,
    reason: str,
    message: str,
    now: str,
    actor: str,
    *,
    warning: bool = False,
    on: str = "",
) -> Operation:
    event_name = f"{name}.kubectl-spark-{reason.lower()}-{re.sub(r'[^0-9]', '', now)}"[:253]
    body = {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": event_name, "namespace": namespace},
        "involvedObject": {
            "kind": kind,
            "namespace": namespace,
            "name": name,
            "uid": uid,
            "apiVersion": api_version,
        },
        "reason": reason,
        "message": message,
        "type": "Warning" if warning else "Normal",
        "source": {"component": "kubectl-spark"},
        "reportingComponent": "kubectl-spark",
        "reportingInstance": actor,
        "firstTimestamp": now,
        "lastTimestamp": now,
        "count": 1,
    }
    what = f"record the {reason} action" + (f" on {on}" if on else "")
    return Operation("create", "v1", "events", namespace, event_name, what, body)


def _patch_pod(app: App, pod: str, uid: str, why: str, metadata: dict[str, Any]) -> Operation:
    """A patch of one pod's metadata, pinned to its UID (in the body and as a precondition).

    A pod of the same name made since the plan was read is another attempt's: never touched.
    """
    return Operation(
        "patch",
        "v1",
        "pods",
        app.namespace,
        pod,
        why,
        {"metadata": {"uid": uid, **metadata}},
        uid=uid,
    )


def _delete_pod_now(app: App, pod: str, uid: str, why: str) -> Operation:
    """Delete one pod at once (no grace: its attempt is being stopped), only if it is that UID."""
    return Operation(
        "delete",
        "v1",
        "pods",
        app.namespace,
        pod,
        why,
        {"gracePeriodSeconds": 0, "propagationPolicy": "Background"},
        uid=uid,
    )


def _pods(attempt: Attempt) -> list[tuple[str, str, str]]:
    """(pod, uid, role) of the attempt: executors first, then the driver."""
    out = [(e.pod, e.uid, "executor") for e in attempt.executors if e.uid]
    if attempt.driver_pod and attempt.uid:
        out.append((attempt.driver_pod, attempt.uid, "driver"))
    return out


def _job_may_start_attempts(job: Any) -> bool:
    """Whether a driver Job can still create pods: not suspended, not Complete, not Failed."""
    if raw.mapping(job, "spec").get("suspend") is True:
        return False
    return not any(
        raw.text(c, "type") in ("Complete", "Failed") and raw.text(c, "status") == "True"
        for c in raw.items(job, "status", "conditions")
    )


def _outside(attempt: Attempt, verb: str) -> str:
    """Why an attempt whose driver runs outside the cluster cannot be fenced or killed here."""
    return (
        f"attempt {attempt.number}'s driver runs outside the cluster (Spark's client mode): "
        f"kubectl spark cannot {verb} it; stop it where it runs (its executors exit with it)"
    )


def _unlabelled(attempt: Attempt, verb: str, effect: str) -> str:
    """Why a client-mode driver in a pod of its own (a notebook) is not fenced or killed here.

    The pod is more than the application: a notebook server, its kernels, whoever is using it.
    Fencing or killing it would cut off or delete all of that, so ``--force`` does not change it.
    """
    pod = attempt.driver_pod
    return (
        f"attempt {attempt.number}'s driver runs in pod {pod}, which spark-submit did not make "
        f"(no spark-role=driver label: Spark's client mode, as in a notebook): to {verb} it would "
        f"{effect} the whole pod, not only the application; stop the application from {pod} "
        "(its executors exit with it)"
    )


def _driver_not_ours(attempt: Attempt, verb: str, effect: str) -> str:
    """Why kubectl spark does not fence or kill this attempt's driver ("" when it may)."""
    if attempt.outside:
        return _outside(attempt, verb)
    if attempt.driver_unlabelled:
        return _unlabelled(attempt, verb, effect)
    return ""


def _client_mode_refusal(app: App, driver: dict[str, Any] | None) -> str:
    """Why a client-mode application cannot be resubmitted by copying a pod ("" when it can).

    Its driver is not a pod spark-submit made: it runs outside the cluster, or in a pod of its
    own (a notebook) that its executors name as owner. A copy of that pod would start another
    notebook, not the application: only whoever runs the driver can run it again. ``--force``
    does not change that.
    """
    if driver is None and app.attempts and app.attempts[-1].outside:
        return (
            f"the driver of {app.name} runs outside the cluster (Spark's client mode): "
            "kubectl spark cannot start it again; run the application again where its driver runs"
        )
    last = next((a for a in reversed(app.attempts) if a.uid), None)  # the driver copied
    if last is not None and last.driver_unlabelled:
        name = last.driver_pod
        return (
            f"the driver of {app.name} runs in pod {name}, which spark-submit did not make (no "
            "spark-role=driver label: Spark's client mode, as in a notebook); a copy would start "
            f"another {name}, not the application: run it again from {name}"
        )
    return ""


STILL_RUNNING = ("Running", "Pending", "Terminating", "Lost", "Unknown")


def _over(attempt: Attempt, verb: str) -> str:
    """Why there is nothing to ``verb``: the attempt ended and none of its executors runs.

    Its driver cannot act again, so a fence would guard nothing, and a kill would only delete
    the pod that holds its exit code and its log. Executors still running (on a lost node, or
    left by a driver that failed) keep the action meaningful: they are what it reaches.
    """
    if attempt.state not in ("Succeeded", "Failed"):
        return ""
    if any(e.state in STILL_RUNNING for e in attempt.executors):
        return ""
    why = f", {attempt.reason.code}" if attempt.reason is not None else ""
    return (
        f"attempt {attempt.number} has ended ({attempt.state}{why}) and none of its executors "
        f"runs: there is nothing to {verb}; its driver pod {attempt.driver_pod} is kept as evidence"
    )


def _alive(attempt: Attempt) -> bool:
    return (
        attempt.state in ("Running", "Pending", "Terminating", "Lost", "Unknown")
        and bool(attempt.uid)
        and not attempt.fenced
    )


# --------------------------------------------------------------------------------- fence
def fence_plan(
    app: App,
    attempt: Attempt,
    *,
    lease: dict[str, Any] | None,
    allow: int | None,
    keep_executors: bool,
    now: str,
    actor: str,
    node_reachable: bool = True,
    force: bool = False,
) -> Plan:
    base = Plan("fence", app.namespace, app.name, attempt.number)
    not_ours = _driver_not_ours(attempt, "fence", "cut off")
    if not_ours:
        return dataclasses.replace(base, refusal=not_ours)
    if not attempt.uid or not attempt.driver_pod:
        return dataclasses.replace(
            base,
            noop=f"attempt {attempt.number}'s driver pod is gone: there is nothing left to fence",
        )
    if over := _over(attempt, "fence"):
        return dataclasses.replace(base, noop=over)
    holder = raw.text(lease, "spec", "holderIdentity") if lease else ""
    if attempt.fenced and not holder.endswith(f"/{attempt.uid}"):
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
    stamp = _stamp(actor, now, "fence", epoch)
    ops: list[Operation] = [
        _patch_pod(
            app,
            pod,
            uid,
            f"mark the {role} fenced and select it for the deny-all policy",
            {"labels": {FENCE_LABEL: "true", FENCE_ID: attempt.uid}, "annotations": stamp},
        )
        for pod, uid, role in _pods(attempt)
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
                    "annotations": stamp,
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
        "leaseDurationSeconds": 15,
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
        body.setdefault("metadata", {}).setdefault("annotations", {}).update(stamp)
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
        ops.extend(
            _delete_pod_now(app, pod, uid, "stop the fenced attempt's executor now")
            for pod, uid, role in _pods(attempt)
            if role == "executor"
        )
    ops.append(
        _event(
            app,
            attempt,
            "Fenced",
            f"attempt {attempt.number} fenced by {actor} (epoch {epoch})"
            + (f"; attempt {allowed.number} may proceed" if allowed else ""),
            now,
            actor,
        )
    )
    warnings = [NETWORK_POLICY_CAVEAT, LEASE_CAVEAT]
    if not node_reachable:
        warnings.append(
            f"node {attempt.node} is unreachable: the policy reaches it only when it reconnects; "
            f"force-kill {app.name}/{attempt.number} removes the pods from the API"
        )
    return dataclasses.replace(base, operations=tuple(ops), warnings=tuple(warnings))


def unfence_plan(app: App, attempt: Attempt, *, now: str, actor: str) -> Plan:
    base = Plan("unfence", app.namespace, app.name, attempt.number)
    if not attempt.fenced or not attempt.uid:
        return dataclasses.replace(base, noop=f"attempt {attempt.number} is not fenced")
    ops = [
        _patch_pod(
            app,
            pod,
            uid,
            f"remove the fence from the {role}",
            {
                "labels": {FENCE_LABEL: None, FENCE_ID: None},
                "annotations": _stamp(actor, now, "unfence"),
            },
        )
        for pod, uid, role in _pods(attempt)
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
        _event(
            app, attempt, "Unfenced", f"attempt {attempt.number} unfenced by {actor}", now, actor
        )
    )
    return dataclasses.replace(
        base,
        operations=tuple(ops),
        notes=("the fencing Lease keeps its epoch; it is not handed back",),
    )


def _micro(now: str) -> str:
    return now.replace("Z", ".000000Z") if now.endswith("Z") and "." not in now else now


# ---------------------------------------------------------------------------- force-kill
@dataclass(frozen=True)
class KillContext:
    """What force-kill needs beyond the model: raw objects it may touch or report on."""

    driver: dict[str, Any] | None = None
    node: dict[str, Any] | None = None
    node_reachable: bool = True
    job: dict[str, Any] | None = None
    sparkapp: dict[str, Any] | None = None
    volumeattachments: tuple[dict[str, Any], ...] = ()
    pvcs: tuple[dict[str, Any], ...] = ()


def force_kill_plan(
    app: App,
    attempt: Attempt,
    ctx: KillContext,
    *,
    force: bool,
    detach_volumes: bool,
    out_of_service: bool,
    no_replace: bool,
    now: str,
    actor: str,
) -> Plan:
    base = Plan("force-kill", app.namespace, app.name, attempt.number)
    not_ours = _driver_not_ours(attempt, "kill", "delete")
    if not_ours:
        return dataclasses.replace(base, refusal=not_ours)
    if not attempt.uid or not attempt.driver_pod:
        return dataclasses.replace(
            base, noop=f"attempt {attempt.number}'s driver pod is already gone"
        )
    if over := _over(attempt, "kill"):
        return dataclasses.replace(base, noop=over)
    ready = raw.text(raw.condition(ctx.driver, "Ready"), "status") == "True"
    if attempt.state == "Running" and ready and ctx.node_reachable and not force:
        return dataclasses.replace(
            base,
            refusal=f"attempt {attempt.number} looks healthy (driver {attempt.driver_pod} Running and Ready "
            f"on Ready node {attempt.node}); pass --force to kill it anyway",
        )
    stamp = _stamp(actor, now, "force-kill")
    ops: list[Operation] = []
    notes: list[str] = []
    warnings = [FORCE_DELETE_WARNING]
    if out_of_service:
        if ctx.node_reachable or ctx.node is None:
            return dataclasses.replace(
                base,
                refusal=f"--out-of-service is only for a node that is down; node {attempt.node} is reachable",
            )
        taints = [
            t for t in raw.items(ctx.node, "spec", "taints") if t.get("key") != OUT_OF_SERVICE
        ]
        taints.append({"key": OUT_OF_SERVICE, "value": "nodeshutdown", "effect": "NoExecute"})
        ops.append(
            Operation(
                "patch",
                "v1",
                "nodes",
                None,
                str(attempt.node),
                "taint the powered-off node out-of-service: Kubernetes force-deletes its pods and detaches its volumes",
                {"spec": {"taints": taints}},
            )
        )
        warnings.append(
            f"only apply the out-of-service taint after confirming node {attempt.node} is powered off; remove it after recovery"
        )
    ops.extend(
        _patch_pod(app, pod, uid, f"record the force-kill on the {role}", {"annotations": stamp})
        for pod, uid, role in _pods(attempt)
    )
    ops.append(
        _event(
            app,
            attempt,
            "ForceKilled",
            f"attempt {attempt.number} force-killed by {actor}",
            now,
            actor,
        )
    )
    ops.extend(
        _delete_pod_now(app, pod, uid, f"delete the {role} now, only if it is still this pod")
        for pod, uid, role in _pods(attempt)
    )
    if detach_volumes:
        volumes = _rwo_volumes(ctx)
        held = [
            va
            for va in ctx.volumeattachments
            if raw.text(va, "spec", "nodeName") == attempt.node
            and raw.text(va, "spec", "source", "persistentVolumeName") in volumes
        ]
        if ctx.node_reachable:
            notes.append(
                f"--detach-volumes: node {attempt.node} is reachable, its kubelet detaches the volumes itself: nothing to do"
            )
        for va in held:
            ops.append(
                Operation(
                    "delete",
                    "storage.k8s.io/v1",
                    "volumeattachments",
                    None,
                    raw.name(va),
                    f"detach volume {raw.text(va, 'spec', 'source', 'persistentVolumeName')} from unreachable node {attempt.node}",
                    uid=raw.uid(va) or None,
                )
            )
        if held:
            warnings.append(
                "detaching a volume from a node that may still be running can corrupt its data: "
                "be sure the old driver no longer writes to it"
            )
    replacement = next(
        (
            a
            for a in app.attempts
            if a.number > attempt.number
            and a.state in ("Running", "Pending")
            and ctx.job is not None
            and (a.driver_pod or "").rsplit("-", 1)[0] == raw.name(ctx.job)  # <job>-<5 chars>
        ),
        None,
    )
    if ctx.job is not None and replacement is not None:
        if no_replace:
            return dataclasses.replace(
                base,
                refusal=f"--no-replace suspends the Job {raw.name(ctx.job)}, and a suspended Job "
                f"deletes its active pods: that is attempt {replacement.number} "
                f"({replacement.state}), which already replaced attempt {attempt.number}; "
                "drop --no-replace (the Job starts no other attempt for this one)",
            )
        notes.append(
            f"the Job {raw.name(ctx.job)} already runs attempt {replacement.number} in place of "
            f"attempt {attempt.number}: deleting these pods starts no other"
        )
    elif ctx.job is not None:
        limit = raw.number(ctx.job, "spec", "backoffLimit")
        failed = raw.number(ctx.job, "status", "failed") or 0
        policy = raw.text(ctx.job, "spec", "podReplacementPolicy") or "TerminatingOrFailed"
        will = limit is None or failed + 1 <= limit
        if no_replace:
            ops.append(
                Operation(
                    "patch",
                    "batch/v1",
                    "jobs",
                    app.namespace,
                    raw.name(ctx.job),
                    "suspend the Job so it starts no new attempt",
                    {"spec": {"suspend": True}},
                )
            )
        else:
            notes.append(
                f"the Job {raw.name(ctx.job)} will {'start another attempt' if will else 'not start another attempt (backoffLimit reached)'}"
                f" (backoffLimit {limit}, failed {failed}, podReplacementPolicy {policy}); --no-replace suspends it"
            )
    if ctx.sparkapp is not None:
        restart = raw.text(ctx.sparkapp, "spec", "restartPolicy", "type") or "Never"
        warnings.append(
            f"the spark-operator resubmits SparkApplication {raw.name(ctx.sparkapp)} per its restartPolicy ({restart}); "
            "its executors also name the SparkApplication as owner (spark-operator#2961), so they are deleted explicitly"
        )
    return dataclasses.replace(
        base, operations=tuple(ops), warnings=tuple(warnings), notes=tuple(notes)
    )


def _rwo_volumes(ctx: KillContext) -> set[str]:
    claims = {raw.name(p): p for p in ctx.pvcs}
    out = set()
    for vol in raw.items(ctx.driver, "spec", "volumes"):
        claim = claims.get(raw.text(vol, "persistentVolumeClaim", "claimName"))
        if claim is not None and "ReadWriteOnce" in (raw.get(claim, "spec", "accessModes") or []):
            out.add(raw.text(claim, "spec", "volumeName"))
    return out


# ------------------------------------------------------------------------------ resubmit
_RUNTIME_META = (
    "uid",
    "resourceVersion",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "generation",
    "managedFields",
    "ownerReferences",
    "finalizers",
    "selfLink",
    "generateName",
)
_JOB_LABELS = (
    "controller-uid",
    "job-name",
    "batch.kubernetes.io/controller-uid",
    "batch.kubernetes.io/job-name",
)


def _clean_meta(meta: dict[str, Any]) -> dict[str, Any]:
    return {k: copy.deepcopy(v) for k, v in meta.items() if k not in _RUNTIME_META}


def with_prefix(args: list[Any], prefix: str) -> list[Any]:
    """Driver container args with ``--conf spark.kubernetes.executor.podNamePrefix=<prefix>``."""
    out: list[Any] = []
    skip = False
    for i, arg in enumerate(args):
        if skip:
            skip = False
            continue
        if arg == "--conf" and i + 1 < len(args) and str(args[i + 1]).startswith(PREFIX_CONF + "="):
            skip = True
            continue
        out.append(arg)
    position = 1 if out and out[0] == "driver" else 0
    return [*out[:position], "--conf", f"{PREFIX_CONF}={prefix}", *out[position:]]


def _with_new_prefix(pod_spec: dict[str, Any], prefix: str) -> dict[str, Any]:
    spec = copy.deepcopy(pod_spec)
    for container in spec.get("containers") or []:
        if isinstance(container, dict) and container.get("name") == "spark-kubernetes-driver":
            container["args"] = with_prefix(list(container.get("args") or []), prefix)
    return spec


def resubmit_plan(
    app: App,
    *,
    driver: dict[str, Any] | None,
    job: dict[str, Any] | None,
    sparkapp: dict[str, Any] | None,
    configmaps: list[dict[str, Any]],
    services: list[dict[str, Any]],
    force: bool,
    suffix: str,
    now: str,
    actor: str,
) -> Plan:
    base = Plan("resubmit", app.namespace, app.name, None)
    client_mode = _client_mode_refusal(app, driver) if app.source == "pod" else ""
    if client_mode:
        return dataclasses.replace(base, refusal=client_mode)
    live = [a for a in app.attempts if _alive(a)]
    if live and not force:
        return dataclasses.replace(
            base,
            refusal=f"attempt {live[-1].number} of {app.name} is {live[-1].state} and not fenced: "
            "fence or force-kill it first, or pass --force",
        )
    stamp = _stamp(actor, now, "resubmit")
    suffix = suffix.lower()
    prefix = f"{app.name}-{suffix}"[:40].strip("-")
    if app.source == "sparkapplication":
        if sparkapp is None:
            return dataclasses.replace(
                base, refusal=f"SparkApplication {app.name} no longer exists: nothing to re-run"
            )
        conf = {
            **raw.mapping(sparkapp, "spec", "sparkConf"),
            "spark.kubectl-spark.io/resubmitted-at": now,
            PREFIX_CONF: prefix,
        }
        op = Operation(
            "patch",
            "sparkoperator.k8s.io/v1beta2",
            "sparkapplications",
            app.namespace,
            app.name,
            "change the spec (sparkConf) so that the operator re-runs the application, with fresh executor names",
            {
                "metadata": {"uid": raw.uid(sparkapp), "annotations": stamp},
                "spec": {"sparkConf": conf},
            },
            uid=raw.uid(sparkapp),
        )
        event = _event_on(
            app.namespace,
            "SparkApplication",
            "sparkoperator.k8s.io/v1beta2",
            app.name,
            raw.uid(sparkapp),
            "Resubmitted",
            f"{app.name} resubmitted by {actor} (executor name prefix {prefix})",
            now,
            actor,
        )
        return dataclasses.replace(
            base,
            operations=(op, event),
            notes=(
                (
                    "the spark-operator re-submits a SparkApplication whose spec changed (it invalidates the current run and "
                    "submits again); a changed sparkConf entry is the least intrusive spec change"
                ),
            ),
        )
    if app.source == "job":
        if job is None:
            return dataclasses.replace(
                base, refusal=f"the driver Job of {app.name} no longer exists: nothing to copy"
            )
        warnings: tuple[str, ...] = ()
        if _job_may_start_attempts(job):
            last = next((a.number for a in reversed(app.attempts) if a.uid), None)
            why = (
                f"the Job {raw.name(job)} is neither finished nor suspended: it starts another "
                f"attempt {'when attempt ' + str(last) + ' ends' if last else 'itself'}, beside the resubmitted one"
            )
            if not force:
                advice = (
                    f"`kubectl spark force-kill {app.name}/{last} --no-replace` suspends it first"
                    if last
                    else f'suspend it first (kubectl patch job {raw.name(job)} -p \'{{"spec":{{"suspend":true}}}}\')'
                )
                return dataclasses.replace(base, refusal=f"{why}; {advice}, or pass --force")
            warnings = (why,)
        spec = copy.deepcopy(raw.mapping(job, "spec"))
        for key in ("selector", "manualSelector"):
            spec.pop(key, None)
        template = spec.setdefault("template", {})
        labels = {
            k: v
            for k, v in raw.mapping(template, "metadata", "labels").items()
            if k not in _JOB_LABELS
        }
        template["metadata"] = {**raw.mapping(template, "metadata"), "labels": labels}
        template["spec"] = _with_new_prefix(raw.mapping(template, "spec"), prefix)
        spec.pop("suspend", None)
        name = f"{re.sub(r'-r[a-z0-9]{5,}$', '', raw.name(job))}-r{suffix}"[:63].rstrip("-")
        body = {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {
                "name": name,
                "namespace": app.namespace,
                "labels": {**raw.labels(job), RESUBMITTED_FROM: raw.name(job)},
                "annotations": stamp,
            },
            "spec": spec,
        }
        op = Operation(
            "create",
            "batch/v1",
            "jobs",
            app.namespace,
            name,
            f"a new driver Job from {raw.name(job)}'s template, with a new executor name prefix {prefix}",
            body,
        )
        target = (
            ("Pod", "v1", raw.name(driver), raw.uid(driver))
            if driver is not None
            else ("Job", "batch/v1", raw.name(job), raw.uid(job))
        )
        event = _event_on(
            app.namespace,
            *target,
            "Resubmitted",
            f"{app.name} resubmitted by {actor} as Job {name}",
            now,
            actor,
        )
        return dataclasses.replace(base, operations=(op, event), created=(body,), warnings=warnings)
    if driver is None:
        return dataclasses.replace(base, refusal=f"no driver pod of {app.name} is left to copy")
    resubmission = suffix
    name = f"{re.sub(r'-r[a-z0-9]{5,}$', '', raw.name(driver))}-r{suffix}"[:253]
    labels = {
        **raw.labels(driver),
        RESUBMITTED_FROM: raw.name(driver),
        "kubectl-spark.io/resubmission": resubmission,
    }
    for key in (FENCE_LABEL, FENCE_ID):
        labels.pop(key, None)
    spec = _with_new_prefix(raw.mapping(driver, "spec"), prefix)
    spec.pop("nodeName", None)
    body = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            **_clean_meta(raw.mapping(driver, "metadata")),
            "name": name,
            "labels": labels,
            "annotations": {**raw.annotation_map(driver), **stamp},
        },
        "spec": spec,
    }
    meta = body["metadata"]
    assert isinstance(meta, dict)
    meta.pop("namespace", None)
    created = [body]
    ops = [
        Operation(
            "create",
            "v1",
            "pods",
            app.namespace,
            name,
            f"a new driver pod from {raw.name(driver)}, executor name prefix {prefix}",
            body,
        )
    ]
    for cm in configmaps:
        copy_name = f"{raw.name(cm)}-r{suffix}"[:253]
        cm_body = {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": copy_name, "labels": raw.labels(cm), "annotations": stamp},
            "data": raw.mapping(cm, "data"),
        }
        created.append(cm_body)
        ops.append(
            Operation(
                "create",
                "v1",
                "configmaps",
                app.namespace,
                copy_name,
                f"a copy of {raw.name(cm)} for the new driver",
                cm_body,
            )
        )
    for svc in services:
        copy_name = f"{raw.name(svc)}-r{suffix}"[:63]
        spec_svc = {
            k: v
            for k, v in raw.mapping(svc, "spec").items()
            if k not in ("clusterIP", "clusterIPs")
        }
        spec_svc["clusterIP"] = "None"
        spec_svc["selector"] = {
            **raw.mapping(svc, "spec", "selector"),
            "kubectl-spark.io/resubmission": resubmission,
        }
        svc_body = {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": copy_name, "labels": raw.labels(svc), "annotations": stamp},
            "spec": spec_svc,
        }
        created.append(svc_body)
        ops.append(
            Operation(
                "create",
                "v1",
                "services",
                app.namespace,
                copy_name,
                f"a copy of headless Service {raw.name(svc)} that selects only the new driver",
                svc_body,
            )
        )
    ops.append(
        _event_on(
            app.namespace,
            "Pod",
            "v1",
            raw.name(driver),
            raw.uid(driver),
            "Resubmitted",
            f"{app.name} resubmitted by {actor} as driver pod {name}",
            now,
            actor,
        )
    )
    return dataclasses.replace(
        base,
        operations=tuple(ops),
        created=tuple(created),
        notes=(
            (
                "the copies of the ConfigMap and Service have no owner until you delete the old driver's; "
                "the new driver mounts the original ConfigMap names unless you edit its volumes"
            ),
        ),
    )
