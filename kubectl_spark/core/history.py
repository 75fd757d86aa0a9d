"""The restart history of an application: a time-ordered list of what happened to it.

Built from pods (creation, container states and restarts, deletion), Job and SparkApplication
objects and Events, and from the annotations and Events the action commands write (fenced,
force-killed, resubmitted). What Kubernetes no longer keeps (earlier in-place restarts, pods
already gone) is said, not invented.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kubectl_spark.knowledge import times

from . import raw
from .model import App, HistoryEntry, Reason
from .reasons import restart_reasons

if TYPE_CHECKING:
    from .grouping import AppGroup
    from .inputs import Index

ACTION_EVENTS = {
    "Fenced": "Fenced",
    "Unfenced": "Unfenced",
    "ForceKilled": "ForceKilled",
    "Resubmitted": "Resubmitted",
}
POD_EVENTS = (
    "NodeNotReady",
    "TaintManagerEviction",
    "Preempted",
    "Evicted",
    "FailedScheduling",
    "FailedAttachVolume",
    "Killing",
)
APP_EVENTS = (
    "SparkApplicationSubmitted",
    "SparkApplicationPendingRerun",
    "SparkApplicationFailed",
    "SparkApplicationCompleted",
    "SparkDriverFailed",
    "SparkDriverNotFound",
)


def _event_time(event: Any) -> str | None:
    for key in ("lastTimestamp", "eventTime", "firstTimestamp"):
        value = times.rfc3339(times.parse(raw.text(event, key)))
        if value:
            return value
    return times.rfc3339(times.parse(raw.text(event, "metadata", "creationTimestamp")))


def _aggregated(event: Any) -> tuple[str | None, str]:
    """When an Event first happened, and what to say of its repeats (" (x3, the last at …)").

    An Event the API aggregated (``count`` > 1, or a ``series``) stands for occurrences from its
    first time to its last: placed at its first, it sits by what set it off (the first failure,
    the first rerun), not after runs it spanned.
    """
    series = raw.mapping(event, "series")
    count = raw.number(event, "count") or raw.number(series, "count") or 1
    if count <= 1:
        return _event_time(event), ""
    first = times.rfc3339(
        times.parse(raw.text(event, "firstTimestamp") or raw.text(event, "eventTime"))
    )
    last = times.rfc3339(
        times.parse(raw.text(event, "lastTimestamp") or raw.text(series, "lastObservedTime"))
    )
    if not first:
        return _event_time(event), f" (x{count})"
    return first, f" (x{count}, the last at {last})" if last and last != first else f" (x{count})"


def build_history(app: App, group: AppGroup, index: Index) -> tuple[HistoryEntry, ...]:
    entries: list[HistoryEntry] = []
    for attempt, source in zip(app.attempts, group.attempts, strict=False):
        n = attempt.number
        where = f" on node {attempt.node}" if attempt.node else ""
        if source.driver is None:
            entries.append(
                HistoryEntry(
                    attempt.created_at,
                    "AttemptStarted",
                    n,
                    None,
                    f"attempt {n} (driver {attempt.driver_shown()}): {source.note}",
                )
            )
        else:
            entries.append(
                HistoryEntry(
                    attempt.created_at,
                    "AttemptStarted",
                    n,
                    None,
                    f"attempt {n} started: driver pod {attempt.driver_pod}{where}",
                )
            )
        if n > 1:
            entries.append(
                HistoryEntry(
                    attempt.created_at,
                    "AttemptReplaced",
                    n - 1,
                    None,
                    f"attempt {n - 1} replaced by attempt {n}",
                )
            )
        if attempt.reason is not None and (
            source.driver is not None
            or attempt.reason.code != "Unknown"
            or attempt.state == "Failed"  # known to have failed, though not why
        ):
            verb = "lost" if attempt.state == "Lost" else "ended"
            entries.append(
                HistoryEntry(
                    _loss_time(attempt.ended_at, attempt.reason, index, attempt.node),
                    "AttemptEnded",
                    n,
                    None,
                    f"attempt {n} {verb}: {attempt.reason.code} — {attempt.reason.message} ({attempt.reason.category} fault)"
                    if attempt.reason.category in ("app", "cluster")
                    and attempt.reason.code != "Completed"
                    else f"attempt {n} {verb}: {attempt.reason.code} — {attempt.reason.message}",
                )
            )
        if source.driver is not None:
            driver_events = index.pod_events(source.driver)
            entries.extend(_restarts(source.driver.pod, n, None))
            entries.extend(_pod_events(driver_events, n, None))
            if attempt.waiting is not None:
                entries.append(
                    _waiting(attempt.waiting, driver_events, attempt.created_at, n, None)
                )
            entries.extend(_actions(source.driver.pod, n, index))
        elif attempt.driver_pod:
            # the pod is gone; Events that still name it tell part of its story
            ghost = {"metadata": {"name": attempt.driver_pod, "namespace": app.namespace}}
            entries.extend(_pod_events(index.events_for(ghost), n, None))
            entries.extend(_actions(ghost, n, index))
        pods = {f.uid: f for f in source.executors}
        for executor in attempt.executors:
            entries.append(
                HistoryEntry(
                    executor.created_at,
                    "ExecutorAdded",
                    n,
                    executor.id,
                    f"executor {executor.id} added: {executor.pod}",
                )
            )
            if executor.reason is not None and not (
                executor.reason.code == "OwnerGone" and executor.state == "Running"
            ):
                entries.append(
                    HistoryEntry(
                        _loss_time(executor.ended_at, executor.reason, index, executor.node),
                        "ExecutorLost",
                        n,
                        executor.id,
                        f"executor {executor.id} lost: {executor.reason.code} — {executor.reason.message} "
                        f"({executor.reason.category}{', counts as a failure' if executor.reason.counts_as_failure else ''})",
                    )
                )
            pod = pods.get(executor.uid) if executor.uid else None  # none: only Spark knew it
            if pod is None:
                continue
            if pod.restarts:
                entries.extend(_restarts(pod.pod, n, executor.id))
            events = index.pod_events(pod)
            if executor.waiting is not None:
                entries.append(
                    _waiting(executor.waiting, events, executor.created_at, n, executor.id)
                )
            if events:
                entries.extend(
                    _pod_events(
                        events, n, executor.id, only=("Preempted", "Evicted", "FailedScheduling")
                    )
                )
    if group.owner is not None and app.source == "sparkapplication":
        for event in index.events_for(group.owner, "SparkApplication"):
            if raw.text(event, "reason") in APP_EVENTS:
                first, suffix = _aggregated(event)
                entries.append(
                    HistoryEntry(
                        first,
                        "Event",
                        None,
                        None,
                        f"{raw.text(event, 'reason')}: {raw.text(event, 'message')}{suffix}",
                    )
                )
    # An entry without a time (an earlier restart, a reconstructed attempt) sorts just before
    # the next entry that has one, keeping the order it was added in.
    effective: list[str] = [""] * len(entries)
    following = "9999"
    for i in range(len(entries) - 1, -1, -1):
        following = entries[i].time or following
        effective[i] = following
    order = sorted(range(len(entries)), key=effective.__getitem__)  # stable: ties keep their order
    return tuple(entries[i] for i in order)


def _loss_time(ended: str | None, reason: Reason, index: Index, node: str | None) -> str | None:
    """When a pod was lost.

    One lost with its node was lost when the node stopped being Ready, not when the taint
    manager later deleted it (its end time, then, is that deletion).
    """
    health = index.node(node)
    since = None if health is None or health.reachable else health.since
    if reason.code == "NodeLost":
        return since or ended
    return ended or since


def _restarts(pod: Any, attempt: int, executor: str | None) -> list[HistoryEntry]:
    out = []
    what = f"executor {executor}" if executor else f"attempt {attempt}'s driver"
    for i, (finished, reason) in enumerate(restart_reasons(pod), start=1):
        if reason is None:
            message = f"{what}'s container restarted in place (run {i}); Kubernetes kept no reason for this earlier restart"
        else:
            message = (
                f"{what}'s container restarted in place (run {i}): {reason.code} — {reason.message}"
            )
        out.append(
            HistoryEntry(
                times.rfc3339(times.parse(finished)) if finished else None,
                "ContainerRestarted",
                attempt,
                executor,
                message,
            )
        )
    return out


def _waiting(
    reason: Reason,
    events: list[dict[str, Any]],
    created: str | None,
    attempt: int,
    executor: str | None,
) -> HistoryEntry:
    """Why a pod that lost nothing has not started (or keeps restarting), since when.

    It waits since the first warning the kubelet or the scheduler gave of it (the first failed
    pull, the first FailedScheduling, the first back-off), else since it was made. Without it a
    stuck driver's timeline said only "attempt 1 started".
    """
    firsts = (_aggregated(e)[0] for e in events if raw.text(e, "type") == "Warning")
    warned = [first for first in firsts if first]
    what = f"executor {executor}" if executor else f"attempt {attempt}'s driver"
    return HistoryEntry(
        min(warned, default=created),
        "Waiting",
        attempt,
        executor,
        f"{what} waits: {reason.code} — {reason.message}",
    )


def _pod_events(
    events: list[dict[str, Any]],
    attempt: int,
    executor: str | None,
    only: tuple[str, ...] = POD_EVENTS,
) -> list[HistoryEntry]:
    out = []
    seen: set[str] = set()
    for event in events:
        reason = raw.text(event, "reason")
        if reason not in only or reason in seen:
            continue
        seen.add(reason)
        first, suffix = _aggregated(event)
        out.append(
            HistoryEntry(
                first, "Event", attempt, executor, f"{reason}: {raw.text(event, 'message')}{suffix}"
            )
        )
    return out


def _actions(pod: Any, attempt: int, index: Index) -> list[HistoryEntry]:
    out = []
    for event in index.events_for(pod):
        reason = raw.text(event, "reason")
        if reason in ACTION_EVENTS:
            out.append(
                HistoryEntry(
                    _event_time(event),
                    ACTION_EVENTS[reason],
                    attempt,
                    None,
                    raw.text(event, "message") or reason,
                )
            )
    return out
