"""The restart history of an application: a time-ordered list of what happened to it.

Built from pods (creation, container states and restarts, deletion), Job and SparkApplication
objects and Events, and from the annotations and Events the action commands write (fenced,
force-killed, resubmitted). What Kubernetes no longer keeps (earlier in-place restarts, pods
already gone) is said, not invented.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from kubectl_spark.knowledge import times
from kubectl_spark.knowledge.operator_names import app_id_of

from . import raw
from .apache import spans
from .model import App, Attempt, Executor, HistoryEntry, Reason
from .pod import Pod
from .raw import RawObject
from .reasons import restart_reasons

if TYPE_CHECKING:
    from .grouping import AppGroup, AttemptGroup
    from .inputs import Index
    from .podfacts import PodFacts

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


def _event_time(event: object) -> str | None:
    for key in ("lastTimestamp", "eventTime", "firstTimestamp"):
        value = times.rfc3339(times.parse(raw.text(event, key)))
        if value:
            return value
    return times.rfc3339(times.parse(raw.text(event, "metadata", "creationTimestamp")))


def _aggregated(event: object) -> tuple[str | None, str]:
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
        entries += _attempt_entries(app, attempt, source, index)
        pods = {f.uid: f for f in source.executors}
        for executor in attempt.executors:
            pod = pods.get(executor.uid) if executor.uid else None  # none: only Spark knew it
            entries += _executor_entries(attempt.number, executor, pod, index)
    if group.owner is not None and app.source == "sparkapplication":
        entries += _sparkapp_entries(group.owner, index)
    if group.owner is not None and app.source == "apache-operator":
        entries += _apache_entries(group)
    return _in_time_order(entries)


def _in_time_order(entries: list[HistoryEntry]) -> tuple[HistoryEntry, ...]:
    """Entries by time; one without a time sorts just before the next that has one.

    An earlier restart or a reconstructed attempt has no time of its own: it keeps the place it
    was added in.
    """
    effective: list[str] = [""] * len(entries)
    following = "9999"
    for i in range(len(entries) - 1, -1, -1):
        following = entries[i].time or following
        effective[i] = following
    order = sorted(range(len(entries)), key=effective.__getitem__)  # stable: ties keep their order
    return tuple(entries[i] for i in order)


def _attempt_entries(
    app: App, attempt: Attempt, source: AttemptGroup, index: Index
) -> list[HistoryEntry]:
    n = attempt.number
    where = f" on node {attempt.node}" if attempt.node else ""
    started = (
        f"attempt {n} (driver {attempt.driver_shown()}): {source.note}"
        if source.driver is None
        else f"attempt {n} started: driver pod {attempt.driver_pod}{where}"
    )
    entries = [HistoryEntry(attempt.created_at, "AttemptStarted", n, None, started)]
    if n > 1:
        replaced = f"attempt {n - 1} replaced by attempt {n}"
        entries.append(HistoryEntry(attempt.created_at, "AttemptReplaced", n - 1, None, replaced))
    reason = attempt.reason
    known = source.driver is not None or (reason is not None and reason.code != "Unknown")
    if reason is not None and (known or attempt.state == "Failed"):  # failed, though not why
        verb = "lost" if attempt.state == "Lost" else "ended"
        fault = reason.category in ("app", "cluster") and reason.code != "Completed"
        message = f"attempt {n} {verb}: {reason.code} — {reason.message}" + (
            f" ({reason.category} fault)" if fault else ""
        )
        when = _loss_time(attempt.ended_at, reason, index, attempt.node)
        entries.append(HistoryEntry(when, "AttemptEnded", n, None, message))
    if source.driver is not None:
        driver_events = index.pod_events(source.driver)
        entries.extend(_restarts(source.driver.pod, n, None))
        entries.extend(_pod_events(driver_events, n, None))
        if attempt.waiting is not None:
            entries.append(_waiting(attempt.waiting, driver_events, attempt.created_at, n, None))
        entries.extend(_actions(driver_events, n))
    elif attempt.driver_pod:
        # the pod is gone; Events that still name it tell part of its story
        ghost = {"metadata": {"name": attempt.driver_pod, "namespace": app.namespace}}
        ghost_events = index.events_for(ghost)
        entries.extend(_pod_events(ghost_events, n, None))
        entries.extend(_actions(ghost_events, n))
    return entries


def _executor_entries(
    n: int, executor: Executor, pod: PodFacts | None, index: Index
) -> list[HistoryEntry]:
    added = f"executor {executor.id} added: {executor.pod}"
    entries = [HistoryEntry(executor.created_at, "ExecutorAdded", n, executor.id, added)]
    if executor.created_at is None and executor.source == "events":
        entries = []  # told only by the action that deleted it: when it came is not known
    reason = executor.reason
    if reason is not None and not (reason.code == "OwnerGone" and executor.state == "Running"):
        counted = (
            ", counted toward spark.executor.maxNumFailures"
            if reason.counts_toward_max_failures
            else ", its tasks count as failures"
            if reason.counts_as_failure
            else ""
        )
        message = (
            f"executor {executor.id} lost: {reason.code} — {reason.message} "
            f"({reason.category}{counted})"
        )
        when = _loss_time(executor.ended_at, reason, index, executor.node)
        entries.append(HistoryEntry(when, "ExecutorLost", n, executor.id, message))
    if pod is None:
        return entries
    if pod.restarts:
        entries.extend(_restarts(pod.pod, n, executor.id))
    events = index.pod_events(pod)
    if executor.waiting is not None:
        entries.append(_waiting(executor.waiting, events, executor.created_at, n, executor.id))
    if events:
        only = ("Preempted", "Evicted", "FailedScheduling")
        entries.extend(_pod_events(events, n, executor.id, only=only))
    return entries


def _sparkapp_entries(owner: object, index: Index) -> list[HistoryEntry]:
    entries = []
    for event in index.events_for(owner, "SparkApplication"):
        reason = raw.text(event, "reason")
        if reason in ACTION_EVENTS:  # a resubmit's, on the SparkApplication it re-runs
            message = raw.text(event, "message") or reason
            entries.append(
                HistoryEntry(_event_time(event), ACTION_EVENTS[reason], None, None, message)
            )
        elif reason in APP_EVENTS:
            first, suffix = _aggregated(event)
            message = f"{raw.text(event, 'reason')}: {raw.text(event, 'message')}{suffix}"
            entries.append(HistoryEntry(first, "Event", None, None, message))
    return entries


def _apache_entries(group: AppGroup) -> list[HistoryEntry]:
    """The Apache operator's state history, each state where it happened, by attempt.

    Its attempts are numbered here as ``ls`` numbers them (by creation); the operator's attempt id
    is said in the message, as it is in the attempt's app id (``<name>-<attemptId>``).
    """
    number: dict[str, int] = {}
    for n, attempt in enumerate(group.attempts, start=1):
        if attempt.driver is not None and attempt.driver.app_id:
            number[attempt.driver.app_id] = n
        if attempt.name:
            number[attempt.name.removesuffix("-driver")] = n
    entries = []
    chain = group.chain or ([group.owner] if group.owner is not None else [])
    for cr, span in ((c, span) for c in chain for span in spans(c)):
        name = raw.name(cr)
        shown = number.get(app_id_of(raw.namespace(cr), name, span.attempt_id))
        which = f"SparkApplication {name}" if len(chain) > 1 else "SparkApplication"
        for state in span.states:
            message = f"{which} {state.summary} (attempt id {span.attempt_id})" + (
                f": {state.message}" if state.message else ""
            )
            entries.append(HistoryEntry(state.time, "OperatorState", shown, None, message))
    return entries


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


def _restarts(pod: Pod, attempt: int, executor: str | None) -> list[HistoryEntry]:
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
    events: Sequence[RawObject],
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
    events: Sequence[RawObject],
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


def _actions(events: Sequence[RawObject], attempt: int) -> list[HistoryEntry]:
    out = []
    for event in events:
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
