"""What every action plan is made of: operations pinned to what was observed, and a plan.

A plan is an ordered list of API operations, each pinned to what was observed (a pod's UID, a
Lease's resourceVersion) and each with a one-line reason; or a refusal; or a no-op when the
action already took effect. Plans are pure: the gateway checks permissions and applies them
step by step, ``--dry-run`` prints them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from kubectl_spark.core import raw
from kubectl_spark.core.jsonvalue import Body, JsonObject, json_of
from kubectl_spark.core.model import App, Attempt, Executor
from kubectl_spark.core.raw import RawObject
from kubectl_spark.knowledge.labels import EXECUTOR_DELETED, EXECUTOR_ID_ANNOTATION

FENCE_ID = "kubectl-spark.io/fence-id"
ACTION = "kubectl-spark.io/action"
ACTOR = "kubectl-spark.io/actor"
ACTED_AT = "kubectl-spark.io/at"
EPOCH = "kubectl-spark.io/epoch"
PREFIX_CONF = "spark.kubernetes.executor.podNamePrefix"
MERGE = "application/merge-patch+json"
OUT_OF_SERVICE = "node.kubernetes.io/out-of-service"

FORCE_DELETE_WARNING = (
    "Immediate deletion does not wait for confirmation that the running resource has been terminated. "
    "The resource may continue to run on the cluster indefinitely."
)


@dataclass(frozen=True)
class Operation:
    verb: str  # create, update, patch, delete
    api_version: str
    resource: str  # plural
    namespace: str | None
    name: str
    reason: str
    body: Body | None = None
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

    def to_json(self) -> JsonObject:
        return {
            "verb": self.verb,
            "apiVersion": self.api_version,
            "resource": self.resource,
            "namespace": self.namespace,
            "name": self.name,
            "reason": self.reason,
            "preconditions": {"uid": self.uid, "resourceVersion": self.resource_version},
            "body": json_of(self.body),
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
    created: tuple[Body, ...] = field(default_factory=tuple)  # objects a resubmit creates
    # Per mechanism, what the action guarantees and what it does not (a fence's).
    guarantees: tuple[str, ...] = ()
    # Objects to keep in the local history store before anything is applied (a bare driver's
    # spec and ConfigMaps, which resubmit copies once force-kill deleted them).
    keep: tuple[tuple[str, RawObject], ...] = ()  # (role: driver|configmap|service, object)

    def permissions(self) -> list[tuple[str, str, str, str, str]]:
        """(verb, group, resource, subresource, namespace) for a SelfSubjectAccessReview each."""
        seen: dict[tuple[str, str, str, str, str], None] = {}
        for op in self.operations:
            # A wait reads the object; one that waits for a refusal sends a dry-run create.
            verb = op.verb if op.verb != "wait" else ("create" if _probes(op) else "get")
            seen[(verb, op.group, op.resource, op.subresource, op.namespace or "")] = None
        return list(seen)

    def to_json(self) -> JsonObject:
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
            "guarantees": list(self.guarantees),
            "operations": [o.to_json() for o in self.operations],
        }


def stamp_of(actor: str, now: str, action: str, epoch: int | None = None) -> dict[str, str]:
    out = {ACTION: action, ACTOR: actor, ACTED_AT: now}
    if epoch is not None:
        out[EPOCH] = str(epoch)
    return out


def event(app: App, attempt: Attempt, reason: str, message: str, now: str, actor: str) -> Operation:
    """The Event an action leaves on the attempt's driver pod (a Warning, but for an unfence)."""
    return event_on(
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


def event_on(
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
    related: dict[str, str] | None = None,
    annotations: dict[str, str] | None = None,
) -> Operation:
    event_name = f"{name}.kubectl-spark-{reason.lower()}-{re.sub(r'[^0-9]', '', now)}"[:253]
    metadata: dict[str, Any] = {"name": event_name, "namespace": namespace}
    if annotations:
        metadata["annotations"] = annotations
    body: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": metadata,
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
    if related:
        body["related"] = related
    what = f"record the {reason} action" + (f" on {on}" if on else "")
    return Operation("create", "v1", "events", namespace, event_name, what, body)


def executor_deleted(
    app: App, attempt: Attempt, executor: Executor, action: str, now: str, actor: str
) -> Operation:
    """The Event left on an executor this action deletes while it still runs or waits.

    A deleted pod leaves nothing but its Events: without this one, ``describe`` knows nothing
    of executors an action removed, and Spark's own list (which says only "not found in the
    cluster" or "deleted by a user or the framework") may not be reachable (a fenced driver on
    a cut-off node). ``related`` names the driver pod, so the executor is found under its
    attempt once both pods are gone (``core.analyze``).
    """
    return event_on(
        app.namespace,
        "Pod",
        "v1",
        executor.pod,
        executor.uid,
        EXECUTOR_DELETED,
        f"executor {executor.id} of attempt {attempt.number} deleted by kubectl spark {action} "
        f"({actor})",
        now,
        actor,
        warning=True,
        on=f"executor {executor.id}",
        related={
            "kind": "Pod",
            "apiVersion": "v1",
            "namespace": app.namespace,
            "name": attempt.driver_pod or "",
            "uid": attempt.uid or "",
        },
        annotations={EXECUTOR_ID_ANNOTATION: executor.id, ACTION: action},
    )


def executors_deleted(
    app: App, attempt: Attempt, action: str, now: str, actor: str
) -> list[Operation]:
    """``executor_deleted`` for each executor in the API that nothing has ended yet.

    An executor that already ended has its own loss (its pod said why): deleting the pod
    afterwards does not change it.
    """
    return [
        executor_deleted(app, attempt, e, action, now, actor)
        for e in attempt.executors
        if e.uid and e.source == "cluster" and e.reason is None
    ]


def patch_pod(app: App, pod: str, uid: str, why: str, metadata: Body) -> Operation:
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


def delete_pod_now(app: App, pod: str, uid: str, why: str) -> Operation:
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


def pods_of(attempt: Attempt) -> list[tuple[str, str, str]]:
    """(pod, uid, role) of the attempt in the API: executors first, then the driver.

    Executors read elsewhere (a watch's or the history's copy of a deleted pod, kubectl spark's
    own Events) are gone from the API: nothing to act on.
    """
    out = [(e.pod, e.uid, "executor") for e in attempt.executors if e.uid and e.source == "cluster"]
    if attempt.driver_pod and attempt.uid:
        out.append((attempt.driver_pod, attempt.uid, "driver"))
    return out


def job_may_start_attempts(job: object) -> bool:
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


def driver_not_ours(attempt: Attempt, verb: str, effect: str) -> str:
    """Why kubectl spark does not fence or kill this attempt's driver ("" when it may)."""
    if attempt.outside:
        return _outside(attempt, verb)
    if attempt.driver_unlabelled:
        return _unlabelled(attempt, verb, effect)
    return ""


def client_mode_refusal(app: App, driver: RawObject | None) -> str:
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


def already_over(attempt: Attempt, verb: str) -> str:
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


def alive(attempt: Attempt) -> bool:
    return (
        attempt.state in ("Running", "Pending", "Terminating", "Lost", "Unknown")
        and bool(attempt.uid)
        and not attempt.fenced
    )


def _probes(op: Operation) -> bool:
    return isinstance(op.body, dict) and "refusedCreate" in op.body
