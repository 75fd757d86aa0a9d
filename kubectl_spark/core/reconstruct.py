"""Attempts whose pods are gone, rebuilt from what outlives them: a SparkApplication's status and Events, a Job's Events."""

from __future__ import annotations

from collections.abc import Callable, Sequence, Set

from kubectl_spark.knowledge import times
from kubectl_spark.knowledge.labels import EXECUTOR_DELETED
from kubectl_spark.knowledge.operator_names import app_id_of

from . import raw
from .apache import span_reason, spans
from .grouping import APACHE, AppGroup, AttemptGroup
from .inputs import Index, Snapshot
from .raw import RawObject


def reconstruct_operator_attempts(app: AppGroup, index: Index) -> None:
    """Reconstruct earlier spark-operator attempts.

    They leave no pod (the operator deletes it before a rerun); status.executionAttempts says
    how many there were. The SparkApplication's Events are aggregated by reason (one Event,
    a count, the first and last time): when as many submissions are counted as there were
    runs, none has expired, so the first submission and the first driver failure are the
    first run's start and (under OnFailure) its end.
    """
    if app.source != "sparkapplication" or app.owner is None:
        return
    executions = raw.number(app.owner, "status", "executionAttempts") or 0
    known = len(app.attempts)
    missing = max(executions - known, 0)
    for _ in range(missing):
        app.attempts.insert(
            0,
            AttemptGroup(
                None,
                None,
                raw.text(app.owner, "status", "driverInfo", "podName") or f"{app.name}-driver",
                None,
                note=f"an earlier run (SparkApplication status.executionAttempts={executions}); "
                "the operator deleted its driver pod before the rerun",
            ),
        )
    if not missing or not reruns_only_after_failure(app):
        return
    events = index.events_for(app.owner, "SparkApplication")
    submitted = [e for e in events if raw.text(e, "reason") == "SparkApplicationSubmitted"]
    if sum(raw.number(e, "count") or 1 for e in submitted) != executions:
        return  # some Events expired: the first one left may be a later run's
    first = app.attempts[0]
    first.created = _first_time(submitted)
    first.ended = _first_time([e for e in events if raw.text(e, "reason") == "SparkDriverFailed"])
    # Each run rebuilt here failed and was rerun: one SparkApplicationPendingRerun each, when as
    # many are counted. Its first time is when the second run was decided, its last when the
    # last rebuilt run ended; the runs between keep no time of their own (issue 48: they showed
    # <unknown> where an Event gives one).
    reruns = [e for e in events if raw.text(e, "reason") == "SparkApplicationPendingRerun"]
    if missing >= 2 and sum(raw.number(e, "count") or 1 for e in reruns) == missing:
        app.attempts[1].created = _first_time(reruns)
        app.attempts[missing - 1].ended = _last_time(reruns)


def _first_time(events: Sequence[object]) -> str | None:
    return min((t for e in events if (t := _first_seen(e))), default=None)


def _last_time(events: Sequence[object]) -> str | None:
    """When the last of (aggregated) ``events`` happened, in RFC 3339."""
    return max(
        (t for e in events if (t := times.rfc3339(times.parse(raw.text(e, "lastTimestamp"))))),
        default=None,
    )


def _first_seen(event: object) -> str | None:
    """When an (aggregated) Event first happened, in RFC 3339."""
    return times.rfc3339(
        times.parse(raw.text(event, "firstTimestamp") or raw.text(event, "eventTime"))
    )


def job_of_pod(namespace: str, pod: str, jobs: Set[tuple[str, str]]) -> str | None:
    """The Job among ``jobs`` (namespace, name) whose pods are named like ``pod``: the longest.

    A Job names its pods ``<job>-<suffix>``: Job ``etl`` does not make pod ``etl-daily-x7k2p``
    when Job ``etl-daily`` exists.
    """
    owner = pod
    while "-" in owner:
        owner = owner.rsplit("-", 1)[0]
        if (namespace, owner) in jobs:
            return owner
    return None


# kubectl spark's own Events on a driver pod (``core.plans``): a pod one of them names was an
# attempt, even when its Job did not count it (deleted, not failed: a force-kill).
ACTED = ("ForceKilled", "Fenced", "Resubmitted", "Unfenced")


def job_pods_in_events(snapshot: Snapshot) -> dict[tuple[str, str], dict[str, tuple[str, bool]]]:
    """Pod names Events mention, by the driver Job that made them.

    (namespace, Job) -> {pod name: (first seen, whether kubectl spark acted on it)}. Which Job
    a name belongs to is ``job_of_pod``'s answer. Read once per analysis: scanning every Event
    for every Job would be quadratic.
    """
    jobs = {(raw.namespace(j), raw.name(j)) for j in snapshot.jobs if raw.name(j)}
    found: dict[tuple[str, str], dict[str, tuple[str, bool]]] = {}
    if not jobs:
        return found
    for event in snapshot.events:
        involved = raw.mapping(event, "involvedObject")
        name = raw.text(involved, "name")
        if raw.text(involved, "kind") != "Pod" or "-" not in name:
            continue
        if raw.text(event, "reason") == EXECUTOR_DELETED:
            continue  # an executor an action deleted: never a driver attempt
        namespace = raw.text(involved, "namespace")
        owner = job_of_pod(namespace, name, jobs)
        if owner is None:
            continue
        stamp = _first_seen(event) or ""
        acted = raw.text(event, "reason") in ACTED
        named = found.setdefault((namespace, owner), {})
        before, was_acted = named.get(name, (stamp, False))
        named[name] = (
            min(before, stamp) if before and stamp else before or stamp,
            was_acted or acted,
        )
    return found


def reconstruct_job_attempts(
    app: AppGroup,
    named_by_job: Callable[[], dict[tuple[str, str], dict[str, tuple[str, bool]]]],
) -> None:
    """Reconstruct the attempts of an application's driver Jobs whose pods are gone.

    Each Job (the first and those ``resubmit`` made from it) counted them
    (status.failed/succeeded), and Events may still name them (``job_pods_in_events``). A pod
    kubectl spark's own Events name (a force-kill deletes without failing, so the Job may not
    count it) was an attempt whatever the count.
    """
    if app.source != "job" or app.owner is None:
        return
    for job in app.jobs or [app.owner]:
        _reconstruct_from(app, job, named_by_job)
    app.attempts.sort(key=lambda a: (a.created or "", a.name or ""))


def _reconstruct_from(
    app: AppGroup,
    job: RawObject,
    named_by_job: Callable[[], dict[tuple[str, str], dict[str, tuple[str, bool]]]],
) -> None:
    present = {a.name for a in app.attempts}
    counted = (raw.number(job, "status", "failed") or 0) + (
        raw.number(job, "status", "succeeded") or 0
    )
    uid = raw.uid(job)
    finished_present = sum(
        1
        for a in app.attempts
        if a.driver is not None
        and a.driver.owner_uid == uid
        and (a.driver.phase in ("Succeeded", "Failed") or a.driver.pod.metadata.deletion_timestamp)
    )
    named = {
        name: seen
        for name, seen in named_by_job().get((app.namespace, raw.name(job)), {}).items()
        if name not in present
    }
    acted = sorted((stamp, name) for name, (stamp, by_us) in named.items() if by_us)
    missing = counted - finished_present - len(acted)
    others = sorted((stamp, name) for name, (stamp, by_us) in named.items() if not by_us)
    gone = others[-missing:] if missing > 0 else []
    told = f"the Job counted it (status.failed+succeeded={counted}) and Events still name it"
    for found, why in ((acted, "kubectl spark's own Events name it"), (gone, told)):
        app.attempts.extend(
            AttemptGroup(None, None, name, stamp or None, note=f"its pod is gone; {why}")
            for stamp, name in found
        )
    for _ in range(missing - len(gone)):  # counted, and no Event names them
        app.attempts.insert(
            0,
            AttemptGroup(
                None,
                None,
                None,
                None,
                note=f"its pod is gone; the Job counted it (status.failed+succeeded={counted})",
            ),
        )


def reruns_only_after_failure(app: AppGroup) -> bool:
    return (
        app.source == "sparkapplication"
        and raw.text(app.owner, "spec", "restartPolicy", "type") == "OnFailure"
    )


def reconstruct_apache_attempts(app: AppGroup) -> None:
    """The Apache operator's attempts whose driver pods are gone, from its state history.

    Each attempt's app id is ``<name>-<attemptId>`` and its driver pod ``<appId>-driver``
    (SparkAppDriverConf.resourceNamePrefix is the app id; Spark names the driver
    ``<prefix>-driver``). An attempt the history tells and no pod shows was released: its
    reason is the operator's own account (``apache.span_reason``).
    """
    if app.source != APACHE or app.owner is None:
        return
    present = {
        a.driver.app_id for a in app.attempts if a.driver is not None and a.driver.app_id
    } | {a.name for a in app.attempts if a.name}
    for cr, span in ((c, span) for c in app.chain or [app.owner] for span in spans(c)):
        app_id = app_id_of(raw.namespace(cr), raw.name(cr), span.attempt_id)
        driver = f"{app_id}-driver"
        if app_id in present or driver in present:
            continue
        end = span.ending
        app.attempts.append(
            AttemptGroup(
                None,
                None,
                driver,
                span.started,
                note=f"its pod is gone; the operator's state history tells attempt {span.attempt_id} "
                f"(app id {app_id})",
                ended=end.time if end is not None else None,
                told=span_reason(span),
            )
        )
    app.attempts.sort(key=lambda a: (a.created or "", a.name or ""))
    first = app.attempts[0] if app.attempts else None
    if first is not None:  # the contract: an Apache application's appId is its first attempt's
        app.app_id = (
            first.driver.app_id
            if first.driver is not None and first.driver.app_id
            else (first.name or "").removesuffix("-driver") or app.app_id
        )
