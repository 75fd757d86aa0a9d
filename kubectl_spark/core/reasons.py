"""Why a driver or executor stopped: a loss reason with its category and evidence.

Read best evidence first, as ``kubernetes-semantics.md`` §1 orders it: the pod's
``status.reason`` (Evicted, node shutdown, deadline), the Spark container's terminated state
(OOMKilled, exit codes in Spark's own words), the DisruptionTarget condition (preemption, taint
manager, eviction API, PodGC), the node's health, then deletion without failure (by the driver,
a user, or because the owner attempt went away), and pods that never started.

``countsAsFailure`` follows Spark's ``exitCausedByApp`` rule: a pod Spark sees as PodFailed
(terminated non-zero, or phase Failed — evictions included) counts toward
``spark.executor.maxNumFailures``; one it sees as PodDeleted does not.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from kubectl_spark.knowledge import times
from kubectl_spark.knowledge.exitcodes import EXIT_CODE_REASONS, describe_exit
from kubectl_spark.knowledge.labels import ACTION_ANNOTATION, SPARK_CONTAINERS

from . import raw
from .model import Reason

IMAGE_PULL = {
    "ErrImagePull",
    "ImagePullBackOff",
    "InvalidImageName",
    "ErrImageNeverPull",
    "ImageInspectError",
    "RegistryUnavailable",
}
CONFIG_ERRORS = {"CreateContainerConfigError", "CreateContainerError", "RunContainerError"}


@dataclass(slots=True)
class NodeHealth:
    reachable: bool
    evidence: str = ""
    since: str | None = None  # RFC 3339: when an unreachable node was last seen Ready, if told


@dataclass(slots=True)
class PodContext:
    """What the classifier knows about a pod beyond the pod itself."""

    pod: Any
    role: str  # driver or executor
    node: NodeHealth | None = None
    events: Sequence[Any] = ()
    owner_gone: bool = False  # executors: the owning driver attempt is deleting, terminal or gone
    owner_attempt: int | None = None
    owner_reason: Reason | None = None
    job_managed: bool = False
    extra_evidence: tuple[str, ...] = ()
    container: dict[str, Any] | None = None  # the Spark container's status, when already found


def spark_container(pod: Any) -> dict[str, Any]:
    statuses = raw.items(pod, "status", "containerStatuses")
    for status in statuses:
        if status.get("name") in SPARK_CONTAINERS:
            return status
    return statuses[0] if statuses else {}


def _field(container: dict[str, Any], *path: str, statuses: str = "containerStatuses") -> str:
    return f"status.{statuses}[{raw.text(container, 'name') or 0}]." + ".".join(path)


def termination_reason(
    term: dict[str, Any],
    container: dict[str, Any],
    where: str,
    *,
    counts: bool,
    statuses: str = "containerStatuses",
) -> Reason:
    """Classify one container termination (current state or lastState of a restart)."""
    code = raw.number(term, "exitCode")
    reason = raw.text(term, "reason")
    message = raw.text(term, "message")
    read = _field(container, where, "terminated", statuses=statuses)
    evidence = [f"{read}.reason={reason or '<none>'}", f"{read}.exitCode={code}"]
    if message:
        evidence.append(f"{read}.message={message}")
    if reason == "OOMKilled":
        return Reason(
            "app",
            "OOMKilled",
            code,
            counts,
            f"container OOM-killed: memory limit exceeded, {describe_exit(code)}",
            tuple(evidence),
        )
    if reason == "ContainerStatusUnknown":
        return Reason(
            "cluster",
            "NodeLost",
            code,
            counts,
            "the container could not be located when the pod was terminated (node lost or rebooted)",
            tuple(evidence),
        )
    if reason in ("StartError", "ContainerCannotRun"):
        return Reason(
            "app",
            "ExitCode",
            code,
            counts,
            f"the container could not start ({reason}), {describe_exit(code)}",
            tuple(evidence),
        )
    if code == 0:
        return Reason(
            "app", "Completed", code, False, "exited with code 0 (success)", tuple(evidence)
        )
    if code == 137:
        return Reason(
            "app",
            "PossibleOOM",
            code,
            counts,
            f"{describe_exit(code)}; reason {reason or 'Error'}: a system OOM kill reports Error, not OOMKilled (kubernetes#53669)",
            tuple(evidence),
        )
    if code is not None and code in EXIT_CODE_REASONS:
        return Reason(
            "app", EXIT_CODE_REASONS[code], code, counts, describe_exit(code), tuple(evidence)
        )
    return Reason(
        "app" if code is not None else "unknown",
        "ExitCode" if code is not None else "Unknown",
        code,
        counts,
        describe_exit(code),
        tuple(evidence),
    )


def _events(ctx: PodContext, *reasons: str) -> list[dict[str, Any]]:
    return [e for e in ctx.events if raw.text(e, "reason") in reasons]


def _event_evidence(event: dict[str, Any]) -> str:
    source = raw.text(event, "source", "component") or raw.text(event, "reportingComponent")
    count = raw.number(event, "count")
    repeated = f" x{count}" if count and count > 1 else ""
    return f"event {raw.text(event, 'reason')}{repeated}: {raw.text(event, 'message')}" + (
        f" ({source})" if source else ""
    )


def _ended_after_deletion(pod: Any, term: Any) -> bool:
    """Whether the container stopped once the deletion was asked for (rather than failing first).

    The deletion was requested at deletionTimestamp minus the grace period; a container that
    finished from then on was stopped by it (the kubelet then marks the pod Failed).
    """
    deleted = times.parse(raw.text(pod, "metadata", "deletionTimestamp"))
    finished = times.parse(raw.text(term, "finishedAt"))
    if deleted is None or finished is None:
        return False
    grace = raw.number(pod, "metadata", "deletionGracePeriodSeconds") or 0
    return finished >= deleted - timedelta(seconds=grace)


def classify(ctx: PodContext) -> Reason | None:
    """The loss reason of a pod, or None while it runs (or waits) unharmed."""
    pod = ctx.pod
    status = raw.mapping(pod, "status")
    phase = raw.text(status, "phase") or "Unknown"
    deleting = bool(raw.text(pod, "metadata", "deletionTimestamp"))
    status_reason = raw.text(status, "reason")
    status_message = raw.text(status, "message")
    container = spark_container(pod) if ctx.container is None else ctx.container
    state = raw.mapping(container, "state")
    term = raw.mapping(state, "terminated")
    disruption = raw.condition(pod, "DisruptionTarget")
    disruption_reason = (
        raw.text(disruption, "reason") if raw.text(disruption, "status") == "True" else ""
    )
    failed = phase == "Failed"
    extra = ctx.extra_evidence

    if status_reason == "Evicted":
        evidence = [
            "status.reason=Evicted",
            f"status.message={status_message}",
            *[_event_evidence(e) for e in _events(ctx, "Evicted")],
        ]
        if disruption_reason:
            evidence.append(f"status.conditions[DisruptionTarget].reason={disruption_reason}")
        return Reason(
            "cluster",
            "Evicted",
            raw.number(term, "exitCode"),
            True,
            f"evicted by the kubelet: {status_message or 'node pressure'}",
            (*evidence, *extra),
        )
    if status_reason in ("Terminated", "Shutdown", "NodeShutdown"):
        return Reason(
            "cluster",
            "NodeShutdown",
            raw.number(term, "exitCode"),
            failed,
            status_message or "terminated in response to a node shutdown",
            (f"status.reason={status_reason}", *extra),
        )
    if status_reason == "DeadlineExceeded":
        return Reason(
            "user",
            "DeadlineExceeded",
            None,
            failed,
            status_message or "activeDeadlineSeconds exceeded",
            ("status.reason=DeadlineExceeded", *extra),
        )
    if status_reason == "Preempting":
        return Reason(
            "cluster",
            "Preempted",
            None,
            failed,
            status_message or "preempted by the kubelet to admit a critical pod",
            ("status.reason=Preempting", *extra),
        )
    if (
        status_reason
        and failed
        and (
            status_reason.startswith("OutOf")
            or status_reason in ("UnexpectedAdmissionError", "NodeAffinity")
        )
    ):
        return Reason(
            "cluster",
            "Unschedulable",
            None,
            False,
            f"rejected by the kubelet: {status_message or status_reason}",
            (f"status.reason={status_reason}", *extra),
        )

    # A container stopped by SIGTERM/SIGKILL (143/137, not an OOM kill) while the pod was being
    # deleted, or for a disruption (preemption, taint eviction, API eviction), ended because of
    # that: the kubelet then marks the pod Failed (pod disruption conditions), and that phase is
    # what a deleted pod's last state shows.
    exit_code = raw.number(term, "exitCode")
    stopped = exit_code in (143, 137) and raw.text(term, "reason") != "OOMKilled"
    by_deletion = deleting and (not failed or _ended_after_deletion(pod, term))
    if term and not (stopped and (by_deletion or disruption_reason)):
        reason = termination_reason(term, container, "state", counts=exit_code != 0)
        inactive = raw.label(pod, "spark-exec-inactive") == "true"
        if reason.code == "Completed":
            if inactive and ctx.role == "executor":
                return Reason(
                    "driver",
                    "Decommissioned",
                    0,
                    False,
                    "finished and kept for debugging (spark-exec-inactive=true)",
                    (*reason.evidence, "metadata.labels[spark-exec-inactive]=true", *extra),
                )
            return Reason(
                reason.category,
                reason.code,
                reason.exit_code,
                False,
                reason.message,
                (*reason.evidence, *extra),
            )
        if inactive:
            return Reason(
                reason.category,
                reason.code,
                reason.exit_code,
                reason.counts_as_failure,
                reason.message,
                (
                    *reason.evidence,
                    "metadata.labels[spark-exec-inactive]=true (kept by deleteOnTermination=false)",
                    *extra,
                ),
            )
        if not extra:
            return reason
        return Reason(
            reason.category,
            reason.code,
            reason.exit_code,
            reason.counts_as_failure,
            reason.message,
            (*reason.evidence, *extra),
        )

    node_lost = ctx.node is not None and not ctx.node.reachable
    if disruption_reason == "PreemptionByScheduler":
        return Reason(
            "cluster",
            "Preempted",
            None,
            False,
            "preempted by the scheduler for a higher-priority pod",
            (
                "status.conditions[DisruptionTarget].reason=PreemptionByScheduler",
                *[_event_evidence(e) for e in _events(ctx, "Preempted")],
                *extra,
            ),
        )
    if disruption_reason == "DeletionByTaintManager":
        if node_lost and ctx.node is not None:
            return Reason(
                "cluster",
                "NodeLost",
                None,
                ctx.job_managed,
                f"node unreachable: {ctx.node.evidence}",
                (
                    ctx.node.evidence,
                    "status.conditions[DisruptionTarget].reason=DeletionByTaintManager",
                    *[_event_evidence(e) for e in _events(ctx, "TaintManagerEviction")],
                    *extra,
                ),
            )
        return Reason(
            "cluster",
            "TaintEviction",
            None,
            ctx.job_managed,
            "deleted by the taint manager (NoExecute taint)",
            ("status.conditions[DisruptionTarget].reason=DeletionByTaintManager", *extra),
        )
    if disruption_reason == "EvictionByEvictionAPI":
        return Reason(
            "cluster",
            "ApiEviction",
            None,
            False,
            "evicted through the Eviction API (a drain or an autoscaler)",
            ("status.conditions[DisruptionTarget].reason=EvictionByEvictionAPI", *extra),
        )
    if disruption_reason == "DeletionByPodGC":
        return Reason(
            "cluster",
            "NodeLost",
            None,
            failed,
            "the pod's node no longer exists (PodGC)",
            ("status.conditions[DisruptionTarget].reason=DeletionByPodGC", *extra),
        )
    if disruption_reason == "TerminationByKubelet":
        return Reason(
            "cluster",
            "Evicted",
            None,
            failed,
            raw.text(disruption, "message") or "terminated by the kubelet",
            ("status.conditions[DisruptionTarget].reason=TerminationByKubelet", *extra),
        )
    if node_lost and ctx.node is not None and phase not in ("Succeeded", "Failed"):
        return Reason(
            "cluster",
            "NodeLost",
            None,
            False,
            f"node unreachable: {ctx.node.evidence}",
            (ctx.node.evidence, *extra),
        )

    if failed and not term:
        init = _failed_init(pod)
        if init is not None:
            status_, init_term = init
            init_code = raw.number(init_term, "exitCode")
            init_stopped = init_code in (143, 137) and raw.text(init_term, "reason") != "OOMKilled"
            if not (init_stopped and (deleting or disruption_reason)):
                return _init_reason(status_, init_term, "state", counts=True, extra=extra)

    never_started = phase == "Pending" and not raw.text(container, "state", "running")
    if never_started:
        start_reason = _never_started(ctx, container)
        if start_reason is None and not deleting:
            return None
        if start_reason is not None:
            if deleting:
                return Reason(
                    start_reason.category,
                    start_reason.code,
                    None,
                    False,
                    f"{start_reason.message}; never started, then deleted",
                    (*start_reason.evidence, "metadata.deletionTimestamp set", *extra),
                )
            return None  # still waiting: not lost (the state says why)

    if deleting or raw.label(pod, "spark-exec-inactive") == "true":
        action = raw.annotation_map(pod).get(ACTION_ANNOTATION)
        stamp = raw.text(pod, "metadata", "deletionTimestamp")
        if action:
            return Reason(
                "user",
                "DeletedByUser",
                None,
                False,
                f"deleted by kubectl spark {action}",
                (
                    f"metadata.annotations[{ACTION_ANNOTATION}]={action}",
                    f"metadata.deletionTimestamp={stamp}",
                    *extra,
                ),
            )
        if ctx.role == "executor" and ctx.owner_gone:
            category = ctx.owner_reason.category if ctx.owner_reason else "driver"
            owner = f"attempt {ctx.owner_attempt}" if ctx.owner_attempt else "its driver"
            return Reason(
                category,
                "OwnerGone",
                None,
                False,
                f"owner {owner} lost: deleted with (or after) its driver",
                (
                    f"owner {owner} is gone or going",
                    *(f"metadata.deletionTimestamp={stamp}",) * bool(stamp),
                    *extra,
                ),
            )
        if not deleting:
            return Reason(
                "driver",
                "Decommissioned",
                None,
                False,
                "kept inactive by the driver (spark-exec-inactive=true)",
                ("metadata.labels[spark-exec-inactive]=true", *extra),
            )
        if ctx.role == "executor":
            return Reason(
                "driver",
                "DeletedByDriver",
                None,
                False,
                'deleted by the driver (scale-down or "Executor killed by driver."), not a failure',
                (
                    f"metadata.deletionTimestamp={stamp}",
                    "no DisruptionTarget condition, no failed container",
                    *extra,
                ),
            )
        return Reason(
            "user",
            "DeletedByUser",
            None,
            False,
            "the driver pod was deleted (not by a failure)",
            (
                f"metadata.deletionTimestamp={stamp}",
                "no DisruptionTarget condition, no failed container",
                *extra,
            ),
        )

    if ctx.role == "executor" and ctx.owner_gone and phase in ("Running", "Pending", "Unknown"):
        owner = f"attempt {ctx.owner_attempt}" if ctx.owner_attempt else "its driver"
        why = f" ({ctx.owner_reason.message})" if ctx.owner_reason else ""
        return Reason(
            ctx.owner_reason.category if ctx.owner_reason else "driver",
            "OwnerGone",
            None,
            False,
            f"owner {owner} lost{why}; this executor is garbage-collected once {owner}'s pod leaves the API",
            (f"owner {owner} state: lost or terminating", *extra),
        )
    if phase == "Failed":
        return Reason(
            "unknown",
            "Unknown",
            None,
            True,
            "the pod failed with no recorded reason",
            ("status.phase=Failed", *extra),
        )
    if phase == "Succeeded":
        return Reason("app", "Completed", 0, False, "completed", ("status.phase=Succeeded", *extra))
    return None


def waiting_reason(ctx: PodContext) -> Reason | None:
    """Why a pod that lost nothing has not started, or keeps restarting; None when it runs.

    Not a loss (``classify`` says None): a Pending driver whose image cannot be pulled, whose
    init container keeps failing or that no node fits, and a Spark container in CrashLoopBackOff
    under restartPolicy OnFailure. At 3 a.m. "Pending" alone does not say what to fix.
    """
    pod = ctx.pod
    if raw.text(pod, "metadata", "deletionTimestamp"):
        return None
    container = spark_container(pod) if ctx.container is None else ctx.container
    waiting = raw.mapping(container, "state", "waiting")
    if raw.text(waiting, "reason") == "CrashLoopBackOff":
        last = raw.mapping(container, "lastState", "terminated")
        if last:
            ended = termination_reason(last, container, "lastState", counts=False)
            return Reason(
                ended.category,
                ended.code,
                ended.exit_code,
                False,
                f"restarting in place (CrashLoopBackOff) after: {ended.message}",
                (
                    f"{_field(container, 'state', 'waiting', 'reason')}=CrashLoopBackOff",
                    *ended.evidence,
                ),
            )
    if raw.text(pod, "status", "phase") == "Pending":
        return _never_started(ctx, container)
    return None


def _failed_init(pod: Any) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """The init container that stopped the pod, and its termination (a non-zero exit)."""
    for status in raw.items(pod, "status", "initContainerStatuses"):
        term = raw.mapping(status, "state", "terminated")
        if term and raw.number(term, "exitCode") != 0:
            return status, term
    return None


def _init_reason(
    status: dict[str, Any],
    term: dict[str, Any],
    where: str,
    *,
    counts: bool,
    extra: tuple[str, ...] = (),
    how: str = "failed, so the Spark container never ran",
) -> Reason:
    """An init container's failure: the Spark container never ran (kubectl's ``Init:Error``)."""
    reason = termination_reason(
        term, status, where, counts=counts, statuses="initContainerStatuses"
    )
    name = raw.text(status, "name") or "?"
    return Reason(
        reason.category,
        reason.code,
        reason.exit_code,
        reason.counts_as_failure,
        f"init container {name} {how}: {reason.message}",
        (*reason.evidence, *extra),
    )


def _init_waiting(ctx: PodContext) -> Reason | None:
    """Why an init container keeps the pod from starting (kubectl's ``Init:…``), if one does."""
    for status in raw.items(ctx.pod, "status", "initContainerStatuses"):
        waiting = raw.mapping(status, "state", "waiting")
        why = raw.text(waiting, "reason")
        if not why or why == "PodInitializing":
            continue
        last = raw.mapping(status, "lastState", "terminated")
        field = _field(status, "state", "waiting", "reason", statuses="initContainerStatuses")
        if why == "CrashLoopBackOff" and last:
            # Restarting, not failed once: "never ran" read as if it had stopped for good.
            restarts = raw.number(status, "restartCount") or 0
            ended = _init_reason(
                status,
                last,
                "lastState",
                counts=False,
                how=f"keeps failing (CrashLoopBackOff after {restarts} restart(s)), so the "
                "Spark container has not run; its last exit",
            )
            return dataclasses.replace(
                ended, evidence=(f"{field}=CrashLoopBackOff", *ended.evidence)
            )
        found = _never_started_by(ctx, why, raw.text(waiting, "message"), field)
        if found is not None:
            name = raw.text(status, "name") or "?"
            return dataclasses.replace(found, message=f"init container {name}: {found.message}")
    return None


def _never_started(ctx: PodContext, container: dict[str, Any]) -> Reason | None:
    waiting = raw.mapping(container, "state", "waiting")
    field = _field(container, "state", "waiting", "reason")
    found = _never_started_by(ctx, raw.text(waiting, "reason"), raw.text(waiting, "message"), field)
    if found is not None:
        return found
    init = _init_waiting(ctx)
    if init is not None:
        return init
    return _unschedulable(ctx) or _volume_wait(ctx)


def _volume_wait(ctx: PodContext) -> Reason | None:
    """A scheduled pod whose volume the kubelet cannot attach or mount.

    Its containers wait in ContainerCreating, which says nothing. The cause is a ReadWriteOnce
    volume still attached to another node (a Multi-Attach error), or a ConfigMap or Secret that
    does not exist.
    """
    told = _events(ctx, "FailedAttachVolume", "FailedMount")
    if not told:
        return None
    last = told[-1]
    message = raw.text(last, "message")
    if raw.text(last, "reason") == "FailedAttachVolume":
        return Reason(
            "cluster",
            "VolumeAttachFailure",
            None,
            False,
            f"a volume could not be attached: {message}".rstrip(": "),
            (_event_evidence(last),),
        )
    missing = "not found" in message
    return Reason(
        "app" if missing else "cluster",
        "VolumeMountFailure",
        None,
        False,
        f"a volume could not be mounted: {message}".rstrip(": "),
        (_event_evidence(last),),
    )


def _never_started_by(ctx: PodContext, why: str, message: str, field: str) -> Reason | None:
    """A waiting reason (read at ``field``) that means a container cannot start: image, config."""
    if why in IMAGE_PULL:
        return Reason(
            "app",
            "ImagePullFailure",
            None,
            False,
            f"image pull failed ({why}): {message}".rstrip(": "),
            (
                f"{field}={why}",
                *[_event_evidence(e) for e in _events(ctx, "Failed", "BackOff")][:2],
            ),
        )
    if why in CONFIG_ERRORS:
        return Reason(
            "app",
            "ContainerConfigError",
            None,
            False,
            f"the container could not be configured ({why}): {message}".rstrip(": "),
            (f"{field}={why}",),
        )
    return None


def _unschedulable(ctx: PodContext) -> Reason | None:
    scheduled = raw.condition(ctx.pod, "PodScheduled")
    if (
        raw.text(scheduled, "status") == "False"
        and raw.text(scheduled, "reason") == "Unschedulable"
    ):
        told = _events(ctx, "FailedScheduling")[:1]
        # The scheduler says why in the condition and in its Event; either may be missing.
        why = raw.text(scheduled, "message") or "".join(raw.text(e, "message") for e in told)
        return Reason(
            "cluster",
            "Unschedulable",
            None,
            False,
            f"never scheduled: {why}" if why else "never scheduled",
            (
                "status.conditions[PodScheduled].reason=Unschedulable",
                *[_event_evidence(e) for e in told],
            ),
        )
    return None


def restart_reasons(pod: Any) -> list[tuple[str | None, Reason | None]]:
    """One (finishedAt, reason) entry per in-place container restart.

    Kubernetes keeps only the last termination, so earlier restarts come back with no reason.
    """
    out: list[tuple[str | None, Reason | None]] = []
    for container in raw.items(pod, "status", "containerStatuses"):
        count = raw.number(container, "restartCount") or 0
        if count <= 0:
            continue
        last = raw.mapping(container, "lastState", "terminated")
        out.extend((None, None) for _ in range(count - 1))
        if last:
            out.append(
                (
                    raw.text(last, "finishedAt") or None,
                    termination_reason(
                        last, container, "lastState", counts=raw.number(last, "exitCode") != 0
                    ),
                )
            )
        else:
            out.append((None, None))
    return out
