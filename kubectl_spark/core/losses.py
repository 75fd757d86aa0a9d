"""``classify``: why a pod stopped, one function per kind of loss, best evidence first.

The order is ``kubernetes-semantics.md`` §1's: the kubelet's own verdicts in ``status.reason``
(eviction, node shutdown, deadline, admission), the Spark container's terminated state, the
DisruptionTarget condition (preemption, taint manager, Eviction API, PodGC, kubelet), the node's
health, a failed init container, a pod that never started and was deleted, deletion without a
failure (by kubectl spark, with the owner, by the driver, by a user), and the phase alone. Each
rule answers a Reason, ``None`` (nothing is lost: say no more), or ``NEXT`` (not this kind).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from datetime import timedelta

from kubectl_spark.core import raw
from kubectl_spark.core.lossread import NEXT, Read, Verdict, read, reason_of
from kubectl_spark.core.model import Reason
from kubectl_spark.core.pod import Pod, Terminated
from kubectl_spark.core.reasons import (
    PodContext,
    ended_after_deletion,
    event_evidence,
    events_of,
    failed_init,
    init_reason,
    termination_reason,
)
from kubectl_spark.core.removals import (
    deleted,
    disrupted,
    never_ran,
    node_lost,
    owner_gone,
)
from kubectl_spark.knowledge import times
from kubectl_spark.knowledge.exitcodes import describe_exit
from kubectl_spark.knowledge.labels import EXIT_EXCEPTION, INACTIVE, SPARK_VERSION


# ------------------------------------------------------------------ the kubelet's verdicts
def _evicted(r: Read) -> Verdict:
    if r.status_reason != "Evicted":
        return NEXT
    evidence = [
        "status.reason=Evicted",
        f"status.message={r.status_message}",
        *[event_evidence(e) for e in events_of(r.ctx, "Evicted")],
    ]
    if r.disruption_reason:
        evidence.append(f"status.conditions[DisruptionTarget].reason={r.disruption_reason}")
    own = _own_limit(r.status_message)
    why = f"the pod outgrew its own {own}, a sizing problem of the app" if own else "node pressure"
    return reason_of(
        "app" if own else "cluster",
        "Evicted",
        f"evicted by the kubelet ({why}): {r.status_message or 'node pressure'}",
        (*evidence, *r.extra),
        exit_code=r.exit_code,
        counts=True,
    )


# The kubelet's eviction messages (pkg/kubelet/eviction/helpers.go): the pod exceeding its own
# limit (ephemeral storage of a container or of the pod, an emptyDir's sizeLimit), or using more
# than it requested when the node ran low, is the app's sizing; node pressure alone is not.
_OWN_LIMITS = (
    ("exceeded its local ephemeral storage limit", "ephemeral-storage limit"),
    ("exceeds the total limit of containers", "ephemeral-storage limit"),
    ("Usage of EmptyDir volume", "emptyDir sizeLimit"),
    ("which exceeds its request of", "request (it used more than it asked for)"),
    # The older kubelet's words for the same (appended only when usage exceeds the request).
    ("has larger consumption of", "request (it used more than it asked for)"),
)


def _own_limit(message: str) -> str:
    """Which of its own limits an evicted pod exceeded, per the kubelet's message, or ""."""
    return next((what for text, what in _OWN_LIMITS if text in message), "")


def _kubelet_status(r: Read) -> Verdict:
    """Node shutdown, deadline, critical-pod preemption, admission rejection."""
    why, extra = r.status_reason, r.extra
    if why in ("Terminated", "Shutdown", "NodeShutdown"):
        message = r.status_message or "terminated in response to a node shutdown"
        return reason_of(
            "cluster",
            "NodeShutdown",
            message,
            (f"status.reason={why}", *extra),
            exit_code=r.exit_code,
            counts=r.failed,
        )
    if why == "DeadlineExceeded":
        message = r.status_message or "activeDeadlineSeconds exceeded"
        return reason_of(
            "user", "DeadlineExceeded", message, (f"status.reason={why}", *extra), counts=r.failed
        )
    if why == "Preempting":
        message = r.status_message or "preempted by the kubelet to admit a critical pod"
        return reason_of(
            "cluster", "Preempted", message, (f"status.reason={why}", *extra), counts=r.failed
        )
    rejected = why.startswith("OutOf") or why in KUBELET_ADMISSION_REASONS
    if why and r.failed and rejected:
        # Scheduled, then refused by the kubelet's admission (pkg/kubelet/lifecycle): the pod is
        # Failed, so Spark sees PodFailed and counts it (ExecutorPodsAllocator).
        message = (
            f"scheduled, then rejected by the kubelet's admission ({why}): "
            f"{r.status_message or why}"
        )
        category = "app" if why in SPEC_ADMISSION_REASONS else "cluster"
        return reason_of(
            category, "AdmissionRejected", message, (f"status.reason={why}", *extra), counts=True
        )
    return NEXT


# The reasons the kubelet's admission writes into a pod it refuses after scheduling
# (kubelet.rejectPod, phase Failed): its predicate (pkg/kubelet/lifecycle/predicate.go: the
# scheduler's own checks run again, "OutOf<resource>" for a resource, NodeAffinity,
# InvalidNodeInfo, the pod's OS, an init container restart policy, supplemental groups), the
# topology manager (cm/topologymanager: TopologyAffinityError), the CPU manager's static policy
# (cm/cpumanager: SMTAlignmentError), the sysctl allowlist (pkg/kubelet/sysctl:
# SysctlForbidden), AppArmor, and any admit handler's own error (UnexpectedAdmissionError).
KUBELET_ADMISSION_REASONS = frozenset(
    {
        "UnexpectedAdmissionError",
        "NodeAffinity",
        "InvalidNodeInfo",
        "PodOSNotSupported",
        "PodOSSelectorNodeLabelDoesNotMatch",
        "InitContainerRestartPolicyForbidden",
        "SupplementalGroupsPolicyNotSupported",
        "TopologyAffinityError",
        "SMTAlignmentError",
        "SysctlForbidden",
        "AppArmor",
    }
)
# Of those, the ones where the pod asked for what the node's configuration forbids (its spec is
# what to change); the others are the node's resources or topology (the cluster's).
SPEC_ADMISSION_REASONS = frozenset(
    {
        "SysctlForbidden",
        "AppArmor",
        "PodOSNotSupported",
        "PodOSSelectorNodeLabelDoesNotMatch",
        "InitContainerRestartPolicyForbidden",
        "SupplementalGroupsPolicyNotSupported",
    }
)


# ---------------------------------------------------------------- the container's own end
def _terminated(r: Read) -> Verdict:
    """The Spark container's terminated state, unless it was only stopped by a deletion.

    A container stopped by SIGTERM/SIGKILL (143/137, not an OOM kill) while the pod was being
    deleted, or for a disruption (preemption, taint eviction, API eviction), ended because of
    that: the kubelet then marks the pod Failed, and that phase is what a deleted pod's last
    state shows.
    """
    term = r.term
    if term is None:
        return NEXT
    exit_code = term.exit_code
    stopped = exit_code in (143, 137) and term.reason != "OOMKilled"
    # SIGTERM (143) is what a deletion sends: on a deleted pod it was the deletion, whatever the
    # two clocks (the kubelet's finishedAt, the API server's deletionTimestamp) say.
    by_deletion = r.deleting and (
        exit_code == 143 or not r.failed or ended_after_deletion(r.pod, term)
    )
    if stopped and (by_deletion or r.disruption_reason):
        return NEXT
    reason = termination_reason(term, r.container, "state", counts=exit_code != 0)
    inactive = r.pod.metadata.labels.get(INACTIVE) == "true"
    kept = (f"metadata.labels[{INACTIVE}]=true (kept by deleteOnTermination=false)",)
    if reason.code == "Completed":
        # spark-exec-inactive says only that Spark kept the pod (deleteOnTermination=false,
        # ExecutorPodsLifecycleManager.removeExecutorFromK8s), not that it was decommissioned.
        return reason_of(
            "app",
            "Completed",
            "exited with code 0 (success)" + (", kept by the driver" if inactive else ""),
            (*reason.evidence, *(kept if inactive else ()), *r.extra),
            exit_code=0,
        )
    if exit_code in DRIVER_GONE_EXITS and r.ctx.role == "executor" and _after_owner(r, term):
        return _driver_went_away(r, reason)
    if stopped and (probe := _probe_kill(r, term)) is not None:
        return probe
    if reason.code == "ContainerStateLost" and r.ctx.node is not None and not r.ctx.node.reachable:
        node = r.ctx.node
        return reason_of(
            "cluster",
            "NodeLost",
            f"node unreachable: {node.evidence}; its container's state was lost with it",
            (node.evidence, *reason.evidence, *r.extra),
            exit_code=exit_code,
            counts=reason.counts_as_failure,
        )
    return reason_of(
        reason.category,
        reason.code,
        reason.message,
        (*reason.evidence, *(kept if inactive else ()), *r.extra),
        exit_code=reason.exit_code,
        counts=reason.counts_as_failure,
    )


def _after_owner(r: Read, term: Terminated) -> bool:
    """Whether an executor ended once its driver had (or its driver is gone, time unknown)."""
    ctx = r.ctx
    if not ctx.owner_gone:
        return False
    finished = times.parse(term.finished_at)
    owner_end = times.parse(ctx.owner_ended_at)
    if finished is None or owner_end is None:
        return ctx.owner_ended_at is None and ctx.owner_reason is None
    return finished >= owner_end - timedelta(seconds=OWNER_SLACK_SECONDS)


# An executor's exit within this long before its driver's recorded end is still read as the
# driver's going: the driver's end is recorded when its pod is seen terminated, which can lag.
OWNER_SLACK_SECONDS = 5


def _driver_went_away(r: Read, ended: Reason) -> Reason:
    """An executor that exited because its driver went away.

    CoarseGrainedExecutorBackend: "Driver … disassociated! Shutting down." exits 1; heartbeats
    that cannot reach the driver exit 56. Read as the app's fault, they would double-count.
    """
    ctx = r.ctx
    owner = f"attempt {ctx.owner_attempt}" if ctx.owner_attempt else "its driver"
    return reason_of(
        ctx.owner_reason.category if ctx.owner_reason else "driver",
        "OwnerGone",
        f"exited ({describe_exit(ended.exit_code)}) after its driver, {owner}, went away: an "
        "executor shuts itself down when its driver disassociates",
        (*ended.evidence, f"owner {owner} ended at {ctx.owner_ended_at or '?'}", *r.extra),
        exit_code=ended.exit_code,
    )


# The exits of an executor whose driver went away (CoarseGrainedExecutorBackend): "Driver …
# disassociated! Shutting down." exits 1, heartbeats that cannot reach the driver exit 56. Any
# other exit (an OOM kill, 52, 137, a crash) is the container's own end, and its evidence wins
# over a driver that ended about then or whose end is unknown.
DRIVER_GONE_EXITS = frozenset({1, 56})

# Spark's UI port on the driver's container (Constants.UI_PORT_NAME "spark-ui", port 4040): a
# liveness probe there kills the driver when its UI stops answering (a long GC pause, a busy
# driver), not only when it hangs.
SPARK_UI_PORTS = (4040, "spark-ui")


def _probe_kill(r: Read, term: Terminated) -> Reason | None:
    """A container the kubelet stopped because a liveness or startup probe failed.

    The kubelet's Events say so: ``Unhealthy`` "Liveness probe failed: …" (prober.go) and
    ``Killing`` "Container X failed liveness probe, will be restarted"
    (kuberuntime_manager.go computePodActions), "startup" alike. It stops the container as a
    deletion would, SIGTERM then SIGKILL after the grace period: a JVM that runs its shutdown
    hooks exits 143, one that does not stop in time 137.
    """
    for kind in ("liveness", "startup"):
        told = [
            e
            for e in events_of(r.ctx, "Unhealthy", "Killing")
            if f"{kind} probe" in raw.text(e, "message").lower()
        ]
        if not told:
            continue
        code = term.exit_code
        signal = "SIGTERM, then its exit" if code == 143 else "SIGKILL, not an OOM kill"
        message = f"killed by the kubelet after its {kind} probe failed ({code} here is {signal})"
        if kind == "liveness" and r.ctx.role == "driver" and _probes_spark_ui(r):
            message += (
                "; the probe asks the driver's Spark UI, which stops answering in a long GC "
                "pause or under load: the driver was killed for it"
            )
        return reason_of(
            "app",
            "LivenessProbe" if kind == "liveness" else "StartupProbe",
            message,
            (*_term_evidence(r, term), *(event_evidence(e) for e in told), *r.extra),
            exit_code=code,
            counts=True,
        )
    return None


def _term_evidence(r: Read, term: Terminated) -> tuple[str, ...]:
    return termination_reason(term, r.container, "state", counts=True).evidence


def _probes_spark_ui(r: Read) -> bool:
    """Whether the container's liveness probe asks Spark's UI port."""
    name = r.container.name
    for container in r.pod.spec.containers:
        if container.name != name:
            continue
        probe = container.liveness_probe
        target = None if probe is None else probe.http_get or probe.tcp_socket
        return target is not None and target.port in SPARK_UI_PORTS
    return False


def _sidecar_failed(r: Read) -> Verdict:
    """A sidecar of an executor that exited non-zero: Spark 4 fails the executor for it.

    Spark 4's checkAllContainers (on by default): with restartPolicy Never, any container of an
    executor that exits non-zero makes the pod PodFailed (ExecutorPodsSnapshot.toState); Spark
    counts it and deletes the pod. Spark 3 checked only its own container by default.
    """
    if r.ctx.role != "executor" or r.pod.spec.restart_policy != "Never":
        return NEXT
    major = _spark_major(r.pod)
    if major is not None and major < 4:
        return NEXT
    for status in r.pod.status.container_statuses:
        term = status.terminated()
        if status is r.container or term is None or term.exit_code in (0, None):
            continue
        code = term.exit_code
        stopped = code in (143, 137) and term.reason != "OOMKilled"
        if stopped and r.deleting and ended_after_deletion(r.pod, term):
            continue  # stopped by the deletion, like the Spark container
        found = termination_reason(term, status, "state", counts=True)
        name = status.name or "?"
        return reason_of(
            found.category,
            "SidecarFailed",
            f"container {name} (not Spark's) {found.message}; with "
            "spark.kubernetes.executor.checkAllContainers (Spark 4's default) that fails the "
            "executor",
            (*found.evidence, *r.extra),
            exit_code=code,
            counts=True,
        )
    return NEXT


def _spark_major(pod: Pod) -> int | None:
    """The Spark major version of a pod's spark-version label, if it has one."""
    version = pod.metadata.labels.get(SPARK_VERSION, "")
    head = version.split(".", 1)[0]
    return int(head) if head.isdecimal() else None


# ------------------------------------------------------------------- before it ever ran
def _init_failed(r: Read) -> Verdict:
    if not r.failed or r.term is not None:
        return NEXT
    init = failed_init(r.pod)
    if init is None:
        return NEXT
    status, init_term = init
    code = init_term.exit_code
    stopped = code in (143, 137) and init_term.reason != "OOMKilled"
    if stopped and (r.deleting or r.disruption_reason):
        return NEXT
    return init_reason(status, init_term, "state", counts=True, extra=r.extra)


def _phase_only(r: Read) -> Verdict:
    if r.phase == "Failed":
        message = "the pod failed with no recorded reason"
        return reason_of(
            "unknown", "Unknown", message, ("status.phase=Failed", *r.extra), counts=True
        )
    if r.phase == "Succeeded":
        return reason_of(
            "app", "Completed", "completed", ("status.phase=Succeeded", *r.extra), exit_code=0
        )
    return None


RULES: tuple[Callable[[Read], Verdict], ...] = (
    _evicted,
    _kubelet_status,
    _terminated,
    _sidecar_failed,
    disrupted,
    node_lost,
    _init_failed,
    never_ran,
    deleted,
    owner_gone,
    _phase_only,
)


def classify(ctx: PodContext) -> Reason | None:
    """The loss reason of a pod, or None while it runs (or waits) unharmed."""
    pod = read(ctx)
    for rule in RULES:
        verdict = rule(pod)
        if verdict is NEXT:
            continue
        if verdict is not None and ctx.role == "driver":
            verdict = _with_exit_exception(pod, verdict)
        if (
            verdict is not None
            and ctx.role == "executor"
            and verdict.code != "OwnerGone"  # no driver was left to count it
            and _spark_saw_failed(pod)
        ):
            return dataclasses.replace(verdict, counts_toward_max_failures=True)
        return verdict
    return None


# What of Spark's exit exception a reason quotes: its first line and its root cause.
EXCEPTION_LINE_MAX = 300


def exit_exception(pod: Pod) -> str:
    """The exception a Spark 4.1+ driver wrote on its pod as it exited ("" without one).

    The headline (``java.lang.IllegalStateException: …``) and, when there is one, the last
    ``Caused by:`` line: the root cause, which the headline often only wraps.
    """
    text = pod.metadata.annotations.get(EXIT_EXCEPTION, "")
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if not lines:
        return ""
    head = lines[0][:EXCEPTION_LINE_MAX]
    causes = [line for line in lines[1:] if line.startswith("Caused by:")]
    if causes:
        return f"{head}; {causes[-1][:EXCEPTION_LINE_MAX]}"
    return head


def _with_exit_exception(r: Read, verdict: Reason) -> Reason:
    """The driver's own word on why it exited, beside what Kubernetes recorded.

    The best single piece of evidence for a failed driver: Kubernetes knows the exit code,
    Spark knows the exception. A clean exit, or a driver whose end was not its own (deleted,
    evicted, on a lost node), keeps its reason as it is.
    """
    said = exit_exception(r.pod)
    if not said or verdict.code == "Completed" or verdict.category not in ("app", "unknown"):
        return verdict
    return dataclasses.replace(
        verdict,
        message=f"{verdict.message}; Spark's exit exception: {said}",
        evidence=(*verdict.evidence, f"metadata.annotations[{EXIT_EXCEPTION}]: {said}"),
    )


def _spark_saw_failed(r: Read) -> bool:
    """Whether Spark's allocator counted this executor toward spark.executor.maxNumFailures.

    It counts each executor it first sees as PodFailed (ExecutorPodsAllocator). The states are
    ExecutorPodsSnapshot.toState's: a pod with a deletionTimestamp that is not running is
    PodDeleted, whatever its phase, so a failure counts only if it came before any deletion.
    """
    sidecars_count = _sidecar_failed(r) is not NEXT  # Spark 4 fails it for a sidecar's exit
    failures = [
        term
        for status in r.pod.status.container_statuses
        if (term := status.terminated()) is not None
        and term.exit_code not in (0, None)
        and (status is r.container or sidecars_count)
    ]
    if not r.deleting:
        return r.failed or bool(failures)
    return any(term.exit_code != 143 and not ended_after_deletion(r.pod, term) for term in failures)
