"""An application in one line: the numbers ``ls``, ``describe``, the TUI and the JSON all show.

Computed once per application, here and nowhere else: state, the current attempt, its executors
running of all, the executors lost by whose fault (``unknown`` included: ids Spark used that no
source explains), restarts and alerts. ``summary`` in ``ls -o json`` items and in ``describe -o
json`` is this, so a script reads the same numbers a person sees.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from kubectl_spark.core.model import CATEGORIES, Analysis, App, Attempt

# Ends that are not losses: a clean exit, a graceful decommission, Spark's own scale-down, and
# executors that went with their driver (the driver's end is the loss that explains them).
NOT_LOST = frozenset({"Completed", "Decommissioned", "DeletedByDriver", "OwnerGone"})
# Most urgent first: the apps table sorts by it, the TUI marks it.
SEVERITY = {
    "SplitBrain": 0,
    "ZombieDriver": 1,
    "ReplacementBlocked": 2,
    "ForceDeletedOnLostNode": 1,
    "SharedAppId": 3,
    "NameCollision": 3,
    "OrphanedExecutors": 4,
    "ExecutorChurn": 5,
}
INIT_EVIDENCE = "status.initContainerStatuses["


@dataclass(frozen=True, slots=True)
class Summary:
    state: str
    attempt: int  # the current attempt's number, 0 with none
    attempts: int
    driver: str  # the current driver's state, as kubectl's STATUS words it
    running: int  # the current attempt's executors running …
    executors: int  # … of all it had
    losses: tuple[tuple[str, int], ...]  # (category, count), in CATEGORIES order, none zero
    restarts: int
    alerts: tuple[str, ...]  # alert types, each once, in the order found

    @property
    def severity(self) -> int:
        return min((SEVERITY.get(a, 9) for a in self.alerts), default=10)

    def lost_text(self) -> str:
        return ", ".join(f"{n} {c}" for c, n in self.losses) or "0"

    def to_json(self) -> dict[str, Any]:
        return {
            "state": self.state,
            "attempt": self.attempt,
            "attempts": self.attempts,
            "driver": self.driver,
            "executors": {"running": self.running, "total": self.executors},
            "losses": dict(self.losses),
            "restarts": self.restarts,
            "alerts": list(self.alerts),
        }


def driver_state(attempt: Attempt | None) -> str:
    """The current driver's state, and why it waits, as kubectl's STATUS says it (no spaces).

    "Pending" alone sends the reader to `describe`; ``Pending:ImagePullFailure`` does not. A
    driver waiting after it ran restarts in place: kubectl's word for that is CrashLoopBackOff.
    One waiting on an init container says ``Init:ExitCode``: the Spark container never ran.
    """
    if attempt is None:
        return "-"
    waiting = attempt.waiting
    if waiting is None:
        return attempt.state
    if any(e.startswith(INIT_EVIDENCE) for e in waiting.evidence):
        return f"Init:{waiting.code}"
    return f"Pending:{waiting.code}" if attempt.state == "Pending" else "CrashLoopBackOff"


def losses(app: App) -> tuple[tuple[str, int], ...]:
    by_category: Counter[str] = Counter()
    for attempt in app.attempts:
        by_category["unknown"] += attempt.unknown_losses
        for executor in attempt.executors:
            if executor.reason is not None and executor.reason.code not in NOT_LOST:
                by_category[executor.reason.category] += 1
    return tuple((c, by_category[c]) for c in CATEGORIES if by_category[c])


def summarize(app: App) -> Summary:
    current = app.current
    executors = current.executors if current else ()
    return Summary(
        state=app.state,
        attempt=current.number if current else 0,
        attempts=len(app.attempts),
        driver=driver_state(current),
        running=sum(1 for e in executors if e.state == "Running"),
        executors=len(executors),
        losses=losses(app),
        restarts=sum(a.restarts + sum(e.restarts for e in a.executors) for a in app.attempts),
        alerts=tuple(dict.fromkeys(a.type for a in app.alerts)),
    )


def app_json(app: App) -> dict[str, Any]:
    """An application's JSON (the public contract) with its summary."""
    return {**app.to_json(), "summary": summarize(app).to_json()}


def analysis_json(analysis: Analysis, apps: list[App] | None = None) -> dict[str, Any]:
    doc = analysis.to_json()
    doc["items"] = [app_json(a) for a in (analysis.apps if apps is None else apps)]
    return doc
