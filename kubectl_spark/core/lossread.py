"""What a loss rule reads of one pod (read once), what it answers, and how it says a reason.

Shared by the rules of ``losses`` (the kubelet's and the containers' own verdicts) and of
``removals`` (the pod taken away: disrupted, its node lost, deleted, given back, its owner
gone); ``losses.classify`` runs them all in order.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass

from kubectl_spark.core import raw
from kubectl_spark.core.model import Reason, ReasonCode
from kubectl_spark.core.raw import RawObject
from kubectl_spark.core.reasons import PodContext, spark_container


class _Next(enum.Enum):
    NEXT = "next"


NEXT = _Next.NEXT
Verdict = Reason | None | _Next  # a reason, None (nothing lost: say no more), or NEXT


@dataclass(slots=True)
class Read:
    """What the rules read of a pod, read once."""

    ctx: PodContext
    pod: RawObject
    phase: str
    deleting: bool
    status_reason: str
    status_message: str
    container: Mapping[str, object]
    term: Mapping[str, object]
    disruption: Mapping[str, object]
    disruption_reason: str
    extra: tuple[str, ...]

    @property
    def failed(self) -> bool:
        return self.phase == "Failed"


def read(ctx: PodContext) -> Read:
    pod = ctx.pod
    status = raw.mapping(pod, "status")
    container = spark_container(pod) if ctx.container is None else ctx.container
    disruption = raw.condition(pod, "DisruptionTarget")
    return Read(
        ctx=ctx,
        pod=pod,
        phase=raw.text(status, "phase") or "Unknown",
        deleting=bool(raw.text(pod, "metadata", "deletionTimestamp")),
        status_reason=raw.text(status, "reason"),
        status_message=raw.text(status, "message"),
        container=container,
        term=raw.mapping(raw.mapping(container, "state"), "terminated"),
        disruption=disruption,
        disruption_reason=(
            raw.text(disruption, "reason") if raw.text(disruption, "status") == "True" else ""
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
