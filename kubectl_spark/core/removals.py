"""Loss rules for a pod taken away rather than failed.

Disrupted (preempted, evicted, its node shut down), its node lost, given back before it ran,
deleted (by kubectl spark, with its owner, by the driver, by a user, by its Job), or left
behind by an owner that is gone. Each rule reads a ``lossread.Read`` and answers a Reason,
None or NEXT; ``losses.classify`` runs them in order with the container's own verdicts.
"""

from __future__ import annotations

from kubectl_spark.core.lossread import NEXT, Read, Verdict, reason_of
from kubectl_spark.core.model import Reason, ReasonCode
from kubectl_spark.core.reasons import event_evidence, events_of, never_started
from kubectl_spark.knowledge.labels import ACTION_ANNOTATION, INACTIVE


# ------------------------------------------------------------------------- disruptions
def disrupted(r: Read) -> Verdict:
    """The DisruptionTarget condition: who took the pod away."""
    why, extra, ctx = r.disruption_reason, r.extra, r.ctx
    told = f"status.conditions[DisruptionTarget].reason={why}"
    if why == "PreemptionByScheduler":
        events = [event_evidence(e) for e in events_of(ctx, "Preempted")]
        message = "preempted by the scheduler for a higher-priority pod"
        return reason_of("cluster", "Preempted", message, (told, *events, *extra))
    if why == "DeletionByTaintManager":
        if ctx.node is not None and not ctx.node.reachable:
            events = [event_evidence(e) for e in events_of(ctx, "TaintManagerEviction")]
            message = f"node unreachable: {ctx.node.evidence}"
            evidence = (ctx.node.evidence, told, *events, *extra)
            return reason_of("cluster", "NodeLost", message, evidence, counts=ctx.job_managed)
        message = "deleted by the taint manager (NoExecute taint)"
        return reason_of(
            "cluster", "TaintEviction", message, (told, *extra), counts=ctx.job_managed
        )
    if why == "EvictionByEvictionAPI":
        message = "evicted through the Eviction API (a drain or an autoscaler)"
        return reason_of("cluster", "ApiEviction", message, (told, *extra))
    if why == "DeletionByPodGC":
        message = "the pod's node no longer exists (PodGC)"
        return reason_of("cluster", "NodeLost", message, (told, *extra), counts=r.failed)
    if why == "TerminationByKubelet":
        message = (r.disruption.message if r.disruption else "") or "terminated by the kubelet"
        # The kubelet's graceful node shutdown (nodeshutdown_manager_linux.go: "Pod was
        # terminated in response to imminent node shutdown.") stops the pod before the node
        # goes: it does not run on, whatever the node's state after.
        code: ReasonCode = "NodeShutdown" if "node shutdown" in message else "Evicted"
        return reason_of("cluster", code, message, (told, *extra), counts=r.failed)
    return NEXT


def node_lost(r: Read) -> Verdict:
    node = r.ctx.node
    if node is None or node.reachable or r.phase in ("Succeeded", "Failed"):
        return NEXT
    return reason_of(
        "cluster", "NodeLost", f"node unreachable: {node.evidence}", (node.evidence, *r.extra)
    )


def given_back(waited: Reason | None, evidence: tuple[str, ...]) -> Reason:
    """An executor deleted before it started: no loss, and why it had waited, if known.

    Nothing ran, so nothing was lost: Spark's allocator deletes the pending executors it no
    longer wants (a scale-down's excess requests, first; ExecutorPodsAllocator) and never
    counts a deleted pod (PodDeleted). Read from a kept copy of the pod, or from the Events a
    gone pod left (sparkview).
    """
    why = f"; it was waiting: {waited.message}" if waited else ""
    return reason_of(
        "driver",
        "DeletedByDriver",
        f"deleted before it started (the driver gives back pending requests it no longer needs){why}",
        evidence,
    )


def never_ran(r: Read) -> Verdict:
    """Pending and not running: still waiting (not lost), or deleted before it started."""
    state = r.container.state
    if r.phase != "Pending" or (state is not None and state.running is not None):
        return NEXT
    waited = never_started(r.ctx, r.container)
    if waited is None:
        return NEXT if r.deleting else None
    if not r.deleting:
        return None  # still waiting: not lost (the state says why)
    if r.ctx.role == "executor":
        if r.pod.metadata.annotations.get(ACTION_ANNOTATION) or r.ctx.owner_gone:
            return NEXT  # kubectl spark's action, or its driver went: deleted says which
        return given_back(waited, (*waited.evidence, "metadata.deletionTimestamp set", *r.extra))
    return reason_of(
        waited.category,
        waited.code,
        f"{waited.message}; never started, then deleted",
        (*waited.evidence, "metadata.deletionTimestamp set", *r.extra),
    )


# ---------------------------------------------------------------- deleted, not failed
def deleted(r: Read) -> Verdict:
    if not r.deleting and r.pod.metadata.labels.get(INACTIVE) != "true":
        return NEXT
    ctx, extra = r.ctx, r.extra
    stamp = r.pod.metadata.deletion_timestamp
    deleted_at = f"metadata.deletionTimestamp={stamp}"
    no_failure = "no DisruptionTarget condition, no failed container"
    action = r.pod.metadata.annotations.get(ACTION_ANNOTATION)
    if action:
        evidence = (f"metadata.annotations[{ACTION_ANNOTATION}]={action}", deleted_at, *extra)
        return reason_of("user", "DeletedByUser", f"deleted by kubectl spark {action}", evidence)
    if ctx.role == "executor" and ctx.owner_gone and not ctx.owner_may_run:
        category = ctx.owner_reason.category if ctx.owner_reason else "driver"
        owner = f"attempt {ctx.owner_attempt}" if ctx.owner_attempt else "its driver"
        message = f"owner {owner} lost: deleted with (or after) its driver"
        evidence = (f"owner {owner} is gone or going", *(deleted_at,) * bool(stamp), *extra)
        return reason_of(category, "OwnerGone", message, evidence)
    if not r.deleting:
        message = (
            "removed by the driver and kept, not deleted (spark-exec-inactive=true: "
            "deleteOnTermination=false)"
        )
        return reason_of(
            "driver", "DeletedByDriver", message, (f"metadata.labels[{INACTIVE}]=true", *extra)
        )
    if ctx.role == "executor":
        message = (
            'deleted by the driver (scale-down or "Executor killed by driver."), not a failure'
        )
        return reason_of("driver", "DeletedByDriver", message, (deleted_at, no_failure, *extra))
    if ctx.job_failed is not None:
        return job_ended_it(ctx.job_failed, (deleted_at, *extra))
    message = "the driver pod was deleted (not by a failure)"
    return reason_of("user", "DeletedByUser", message, (deleted_at, no_failure, *extra))


def job_ended_it(failed: tuple[str, str, str], evidence: tuple[str, ...]) -> Reason:
    """A driver the Job controller deleted as its Job failed (pkg/controller/job).

    Past ``activeDeadlineSeconds`` the Job fails with reason DeadlineExceeded and its active
    pods are deleted; from 1.31 the FailureTarget condition comes first, then Failed once they
    are gone. A person deleted nothing here, and the Job counts the attempt as failed.
    """
    kind, why, said = failed
    told = f"job.status.conditions[{kind}].reason={why}" + (f": {said}" if said else "")
    if why == "DeadlineExceeded":
        message = "the driver Job's activeDeadlineSeconds passed: the Job controller stopped it"
        return reason_of("user", "DeadlineExceeded", message, (told, *evidence), counts=True)
    message = f"the driver Job failed ({why}) and the Job controller stopped this driver"
    return reason_of("unknown", "JobFailed", message, (told, *evidence), counts=True)


def owner_gone(r: Read) -> Verdict:
    ctx = r.ctx
    if not (
        ctx.role == "executor" and ctx.owner_gone and r.phase in ("Running", "Pending", "Unknown")
    ):
        return NEXT
    if ctx.owner_may_run and r.phase == "Running":
        return None  # a partition: it still serves a driver that may run (not lost)
    owner = f"attempt {ctx.owner_attempt}" if ctx.owner_attempt else "its driver"
    why = f" ({ctx.owner_reason.message})" if ctx.owner_reason else ""
    return reason_of(
        ctx.owner_reason.category if ctx.owner_reason else "driver",
        "OwnerGone",
        f"owner {owner} lost{why}; this executor is garbage-collected once {owner}'s pod leaves the API",
        (f"owner {owner} state: lost or terminating", *r.extra),
    )
