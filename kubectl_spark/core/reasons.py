"""Why a driver or executor stopped: a loss reason with its category and evidence.

Read best evidence first, as ``kubernetes-semantics.md`` §1 orders it: the pod's
``status.reason`` (Evicted, node shutdown, deadline), the Spark container's terminated state
(OOMKilled, exit codes in Spark's own words), the DisruptionTarget condition (preemption, taint
manager, eviction API, PodGC), the node's health, then deletion without failure (by the driver,
a user, or because the owner attempt went away), and pods that never started.

``classify`` (``losses``) reads a stopped pod; this module holds what it and ``waiting_reason``
share. ``countsAsFailure`` is Spark's ``exitCausedByApp`` (do the executor's tasks count toward
``spark.task.maxFailures``); ``countsTowardMaxNumFailures`` is the allocator's count toward
``spark.executor.maxNumFailures`` (see ``model.Reason``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta

from kubectl_spark.knowledge import times
from kubectl_spark.knowledge.exitcodes import EXIT_CAUSE_CATEGORY, EXIT_CODE_REASONS, describe_exit
from kubectl_spark.knowledge.labels import SPARK_CONTAINERS

from . import raw
from .model import Reason
from .pod import NO_STATUS, NOT_WAITING, ContainerStatus, Pod, Terminated
from .raw import RawObject

IMAGE_PULL = {
    "ErrImagePull",
    "ImagePullBackOff",
    "InvalidImageName",
    "ErrImageNeverPull",
    "ImageInspectError",
    "RegistryUnavailable",
}
CONFIG_ERRORS = {"CreateContainerConfigError", "CreateContainerError", "RunContainerError"}


# Where the kernel's OOM killer acts: a container's memory limit, the pod's (its cgroup's
# total), or the node when it runs out (the kubelet reports OOMKilled for each). The container's
# limit is the usual one for Spark: heap plus spark.*.memoryOverhead over the pod's memory.
OOM_WHERE = "the container's or the pod's memory limit was reached, or the node ran out of memory"


@dataclass(slots=True)
class NodeHealth:
    reachable: bool
    evidence: str = ""
    since: str | None = None  # RFC 3339: when an unreachable node was last seen Ready, if told
    # Tainted node.kubernetes.io/out-of-service: someone said it is powered off, and Kubernetes
    # force-deletes its pods and detaches its volumes (non-graceful node shutdown).
    out_of_service: bool = False


@dataclass(slots=True)
class PodContext:
    """What the classifier knows about a pod beyond the pod itself."""

    pod: Pod
    role: str  # driver or executor
    node: NodeHealth | None = None
    events: Sequence[RawObject] = ()
    owner_gone: bool = False  # executors: the owning driver attempt is deleting, terminal or gone
    owner_attempt: int | None = None
    owner_reason: Reason | None = None
    owner_ended_at: str | None = None  # RFC 3339: when the owning driver ended, if known
    # The owning driver is Lost (its node unreachable): it may still run, and its executors on
    # reachable nodes still serve it (a partition), so they are not lost for that.
    owner_may_run: bool = False
    job_managed: bool = False
    # A driver Job's own end, when it failed: (condition type, reason, message) of its Failed
    # or FailureTarget condition; the Job controller deletes the pods still active then.
    job_failed: tuple[str, str, str] | None = None
    extra_evidence: tuple[str, ...] = ()
    # The Spark container's status, when already found.
    container: ContainerStatus | None = None


def spark_container(pod: Pod) -> ContainerStatus:
    """The status of Spark's own container, never a sidecar's.

    Spark's containers have their default names unless a pod template named them; then Spark
    appends its container after the template's others (ExecutorPodsAllocator and the driver's
    Client: ``addToContainers(SparkPod.container)``, read in the 4.1.1 jar), so it is the last in
    ``spec.containers``. The statuses come sorted by name (the kubelet's
    SortedContainerStatuses), so their first is often a sidecar.
    """
    statuses = pod.status.container_statuses
    for status in statuses:
        if status.name in SPARK_CONTAINERS:
            return status
    declared = pod.spec.containers
    if declared:
        last = declared[-1].name
        for status in statuses:
            if status.name == last:
                return status
    return statuses[0] if statuses else NO_STATUS


def _field(container: ContainerStatus, *path: str, statuses: str = "containerStatuses") -> str:
    return f"status.{statuses}[{container.name or 0}]." + ".".join(path)


def termination_reason(
    term: Terminated,
    container: ContainerStatus,
    where: str,
    *,
    counts: bool,
    statuses: str = "containerStatuses",
) -> Reason:
    """Classify one container termination (current state or lastState of a restart)."""
    code = term.exit_code
    reason = term.reason
    message = term.message
    read = _field(container, where, "terminated", statuses=statuses)
    evidence = [f"{read}.reason={reason or '<none>'}", f"{read}.exitCode={code}"]
    if message:
        evidence.append(f"{read}.message={message}")
    if reason == "OOMKilled":
        return Reason(
            category="app",
            code="OOMKilled",
            exit_code=code,
            counts_as_failure=counts,
            message=f"OOM-killed by the kernel ({OOM_WHERE}), {describe_exit(code)}",
            evidence=tuple(evidence),
        )
    if reason == "ContainerStatusUnknown":
        # pkg/kubelet/kubelet_pods.go (convertToAPIContainerStatuses): a container the kubelet
        # had seen running and can no longer find in the runtime. The node may be healthy: a
        # runtime or kubelet restart that lost its state, or a reboot, does this; a lost node
        # is read from the node, not from here.
        return Reason(
            category="cluster",
            code="ContainerStateLost",
            exit_code=code,
            counts_as_failure=counts,
            message="container state lost: the kubelet could no longer find the container "
            "(a container runtime or kubelet restart, or a reboot)",
            evidence=tuple(evidence),
        )
    if reason in ("StartError", "ContainerCannotRun"):
        return Reason(
            category="app",
            code="ExitCode",
            exit_code=code,
            counts_as_failure=counts,
            message=f"the container could not start ({reason}), {describe_exit(code)}",
            evidence=tuple(evidence),
        )
    if code == 0:
        return Reason(
            category="app",
            code="Completed",
            exit_code=code,
            counts_as_failure=False,
            message="exited with code 0 (success)",
            evidence=tuple(evidence),
        )
    if code == 137:
        return Reason(
            category="app",
            code="PossibleOOM",
            exit_code=code,
            counts_as_failure=counts,
            message=f"{describe_exit(code)}; reason {reason or 'Error'}: a system OOM kill reports Error, not OOMKilled (kubernetes#53669)",
            evidence=tuple(evidence),
        )
    if code == 143:
        # 128 + SIGTERM: the JVM ran its shutdown hooks and exited. Something outside sent it
        # (a person, a controller, the kubelet); without an Event or a deletion to say who, it
        # is nobody's fault yet. describeExitCode says only "(unexpected)".
        return Reason(
            category="unknown",
            code="Sigterm",
            exit_code=code,
            counts_as_failure=counts,
            message="exit code 143: terminated by SIGTERM from outside; nothing recorded who "
            "sent it",
            evidence=tuple(evidence),
        )
    if code is not None and code in EXIT_CODE_REASONS:
        cause = EXIT_CODE_REASONS[code]
        return Reason(
            category=EXIT_CAUSE_CATEGORY.get(cause, "app"),
            code=cause,
            exit_code=code,
            counts_as_failure=counts,
            message=describe_exit(code),
            evidence=tuple(evidence),
        )
    return Reason(
        category="app" if code is not None else "unknown",
        code="ExitCode" if code is not None else "Unknown",
        exit_code=code,
        counts_as_failure=counts,
        message=describe_exit(code),
        evidence=tuple(evidence),
    )


def events_of(ctx: PodContext, *reasons: str) -> list[RawObject]:
    return [e for e in ctx.events if raw.text(e, "reason") in reasons]


def event_evidence(event: object) -> str:
    source = raw.text(event, "source", "component") or raw.text(event, "reportingComponent")
    count = raw.number(event, "count")
    repeated = f" x{count}" if count and count > 1 else ""
    return f"event {raw.text(event, 'reason')}{repeated}: {raw.text(event, 'message')}" + (
        f" ({source})" if source else ""
    )


def ended_after_deletion(pod: Pod, term: Terminated) -> bool:
    """Whether the container stopped once the deletion was asked for (rather than failing first).

    The deletion was requested at deletionTimestamp minus the grace period; a container that
    finished from then on was stopped by it (the kubelet then marks the pod Failed).
    """
    deleted = times.parse(pod.metadata.deletion_timestamp)
    finished = times.parse(term.finished_at)
    if deleted is None or finished is None:
        return False
    grace = pod.metadata.deletion_grace_period_seconds or 0
    return finished >= deleted - timedelta(seconds=grace)


def waiting_reason(ctx: PodContext) -> Reason | None:
    """Why a pod that lost nothing has not started, or keeps restarting; None when it runs.

    Not a loss (``classify`` says None): a Pending driver whose image cannot be pulled, whose
    init container keeps failing or that no node fits, and a Spark container in CrashLoopBackOff
    under restartPolicy OnFailure. At 3 a.m. "Pending" alone does not say what to fix.
    """
    pod = ctx.pod
    if pod.metadata.deletion_timestamp:
        return None
    container = spark_container(pod) if ctx.container is None else ctx.container
    waiting = container.waiting()
    if waiting is not None and waiting.reason == "CrashLoopBackOff":
        last = container.last_terminated()
        if last is not None:
            ended = termination_reason(last, container, "lastState", counts=False)
            return Reason(
                category=ended.category,
                code=ended.code,
                exit_code=ended.exit_code,
                counts_as_failure=False,
                message=f"restarting in place (CrashLoopBackOff) after: {ended.message}",
                evidence=(
                    f"{_field(container, 'state', 'waiting', 'reason')}=CrashLoopBackOff",
                    *ended.evidence,
                ),
            )
    if pod.status.phase == "Pending":
        return never_started(ctx, container)
    return None


def failed_init(pod: Pod) -> tuple[ContainerStatus, Terminated] | None:
    """The init container that stopped the pod, and its termination (a non-zero exit)."""
    for status in pod.status.init_container_statuses:
        term = status.terminated()
        if term is not None and term.exit_code != 0:
            return status, term
    return None


def init_reason(
    status: ContainerStatus,
    term: Terminated,
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
    name = status.name or "?"
    return Reason(
        category=reason.category,
        code=reason.code,
        exit_code=reason.exit_code,
        counts_as_failure=reason.counts_as_failure,
        message=f"init container {name} {how}: {reason.message}",
        evidence=(*reason.evidence, *extra),
    )


def _init_waiting(ctx: PodContext) -> Reason | None:
    """Why an init container keeps the pod from starting (kubectl's ``Init:…``), if one does."""
    for status in ctx.pod.status.init_container_statuses:
        waiting = status.waiting()
        why = waiting.reason if waiting is not None else ""
        if waiting is None or not why or why == "PodInitializing":
            continue
        last = status.last_terminated()
        field = _field(status, "state", "waiting", "reason", statuses="initContainerStatuses")
        if why == "CrashLoopBackOff" and last is not None:
            # Restarting, not failed once: "never ran" read as if it had stopped for good.
            restarts = status.restart_count or 0
            ended = init_reason(
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
        found = _never_started_by(ctx, why, waiting.message, field)
        if found is not None:
            name = status.name or "?"
            return dataclasses.replace(found, message=f"init container {name}: {found.message}")
    return None


def never_started(ctx: PodContext, container: ContainerStatus) -> Reason | None:
    waiting = container.waiting() or NOT_WAITING
    field = _field(container, "state", "waiting", "reason")
    found = _never_started_by(ctx, waiting.reason, waiting.message, field)
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
    told = events_of(ctx, "FailedAttachVolume", "FailedMount")
    if not told:
        return None
    last = told[-1]
    message = raw.text(last, "message")
    if raw.text(last, "reason") == "FailedAttachVolume":
        return Reason(
            category="cluster",
            code="VolumeAttachFailure",
            exit_code=None,
            counts_as_failure=False,
            message=f"a volume could not be attached: {message}".rstrip(": "),
            evidence=(event_evidence(last),),
        )
    missing = "not found" in message
    return Reason(
        category="app" if missing else "cluster",
        code="VolumeMountFailure",
        exit_code=None,
        counts_as_failure=False,
        message=f"a volume could not be mounted: {message}".rstrip(": "),
        evidence=(event_evidence(last),),
    )


def _never_started_by(ctx: PodContext, why: str, message: str, field: str) -> Reason | None:
    """A waiting reason (read at ``field``) that means a container cannot start: image, config."""
    if why in IMAGE_PULL:
        return Reason(
            category="app",
            code="ImagePullFailure",
            exit_code=None,
            counts_as_failure=False,
            message=f"image pull failed ({why}): {message}".rstrip(": "),
            evidence=(
                f"{field}={why}",
                *[event_evidence(e) for e in events_of(ctx, "Failed", "BackOff")][:2],
            ),
        )
    if why in CONFIG_ERRORS:
        return Reason(
            category="app",
            code="ContainerConfigError",
            exit_code=None,
            counts_as_failure=False,
            message=f"the container could not be configured ({why}): {message}".rstrip(": "),
            evidence=(f"{field}={why}",),
        )
    return None


def _unschedulable(ctx: PodContext) -> Reason | None:
    scheduled = ctx.pod.condition("PodScheduled")
    if (
        scheduled is not None
        and scheduled.status == "False"
        and scheduled.reason == "Unschedulable"
    ):
        told = events_of(ctx, "FailedScheduling")[:1]
        # The scheduler says why in the condition and in its Event; either may be missing.
        why = scheduled.message or "".join(raw.text(e, "message") for e in told)
        return Reason(
            category="cluster",
            code="Unschedulable",
            exit_code=None,
            counts_as_failure=False,
            message=f"never scheduled: {why}" if why else "never scheduled",
            evidence=(
                "status.conditions[PodScheduled].reason=Unschedulable",
                *[event_evidence(e) for e in told],
            ),
        )
    return None


def restart_reasons(pod: Pod) -> list[tuple[str | None, Reason | None]]:
    """One (finishedAt, reason) entry per in-place container restart.

    Kubernetes keeps only the last termination, so earlier restarts come back with no reason.
    """
    out: list[tuple[str | None, Reason | None]] = []
    for container in pod.status.container_statuses:
        count = container.restart_count or 0
        if count <= 0:
            continue
        last = container.last_terminated()
        out.extend((None, None) for _ in range(count - 1))
        if last is not None:
            out.append(
                (
                    last.finished_at or None,
                    termination_reason(last, container, "lastState", counts=last.exit_code != 0),
                )
            )
        else:
            out.append((None, None))
    return out
