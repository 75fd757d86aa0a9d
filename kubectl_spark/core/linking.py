"""A driver that exited 11 gave up because its executors failed: say which, and whose fault.

Spark's allocator counts every executor it first sees as PodFailed toward
``spark.executor.maxNumFailures`` (``ExecutorPodsAllocator``, ``ExecutorFailureTracker``) and
stops the application with ``EXCEED_MAX_EXECUTOR_FAILURES`` (11, ``SparkExitCode``) once the
count passes the limit. The driver's exit is then as much the cluster's fault as the losses it
counted were: its category is theirs (the most frequent one), and its evidence names them.
"""

from __future__ import annotations

import dataclasses
from collections import Counter

from .model import Attempt

SHOWN = 5  # counted losses named in the driver's evidence; the rest are counted


def link_executor_failures(attempt: Attempt) -> Attempt:
    """The attempt, its exit-11 driver reason linked to the executor losses Spark counted."""
    reason = attempt.reason
    if reason is None or reason.code != "ExecutorFailuresExceeded":
        return attempt
    counted = [
        e for e in attempt.executors if e.reason is not None and e.reason.counts_toward_max_failures
    ]
    if not counted:
        note = "no counted executor failure is left to see (their pods and Spark's list are gone)"
        return dataclasses.replace(
            attempt, reason=dataclasses.replace(reason, evidence=(*reason.evidence, note))
        )
    categories = Counter(e.reason.category for e in counted if e.reason is not None)
    codes = Counter(e.reason.code for e in counted if e.reason is not None)
    category = categories.most_common(1)[0][0]
    named = [
        f"executor {e.id} ({e.pod or '?'}): {e.reason.code}"
        for e in counted[:SHOWN]
        if e.reason is not None
    ]
    more = [f"… and {len(counted) - SHOWN} more"] if len(counted) > SHOWN else []
    summary = ", ".join(f"{code} x{n}" for code, n in codes.most_common())
    linked = dataclasses.replace(
        reason,
        category=category,
        message=f"{reason.message}: {len(counted)} executor failure(s) counted ({summary})",
        evidence=(*reason.evidence, *named, *more),
    )
    return dataclasses.replace(attempt, reason=linked)
