"""What a loss rule reads of one pod (read once), what it answers, and how it says a reason.

Shared by the rules of ``losses`` (the kubelet's and the containers' own verdicts) and of
``removals`` (the pod taken away: disrupted, its node lost, deleted, given back, its owner
gone); ``losses.classify`` runs them all in order.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from kubectl_spark.core.model import Reason, ReasonCode
from kubectl_spark.core.pod import ContainerStatus, Pod, PodCondition, Terminated
from kubectl_spark.core.reasons import PodContext, spark_container


class _Next(enum.Enum):
    NEXT = "next"


NEXT = _Next.NEXT
Verdict = Reason | None | _Next  # a reason, None (nothing lost: say no more), or NEXT


@dataclass(slots=True)
class Read:
    """What the rules read of a pod, read once."""

    ctx: PodContext
    pod: Pod
    phase: str
    deleting: bool
    status_reason: str
    status_message: str
    container: ContainerStatus
    term: Terminated | None  # the Spark container's, if it ended
    disruption: PodCondition | None
    disruption_reason: str
    extra: tuple[str, ...]

    @property
    def failed(self) -> bool:
        return self.phase == "Failed"

    @property
    def exit_code(self) -> int | None:
        """The Spark container's exit code, if it ended."""
        return self.term.exit_code if self.term is not None else None


def read(ctx: PodContext) -> Read:
    pod = ctx.pod
    status = pod.status
    container = spark_container(pod) if ctx.container is None else ctx.container
    disruption = pod.condition("DisruptionTarget")
    return Read(
        ctx=ctx,
        pod=pod,
        phase=status.phase or "Unknown",
        deleting=bool(pod.metadata.deletion_timestamp),
        status_reason=status.reason,
        status_message=status.message,
        container=container,
        term=container.terminated(),
        disruption=disruption,
        disruption_reason=(
            disruption.reason if disruption is not None and disruption.status == "True" else ""
        ),
        extra=tuple(ctx.extra_evidence),
    )


def reason_of(
    category: str,
    code: ReasonCode,
    message: str,
    evidence: tuple[str, ...],
    *,
    exit_code: int | None = None,
    counts: bool = False,
) -> Reason:
    return Reason(
        category=category,
        code=code,
        exit_code=exit_code,
        counts_as_failure=counts,
        message=message,
        evidence=evidence,
    )
