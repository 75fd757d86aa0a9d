"""From a snapshot of the cluster's JSON to applications, attempts, executors, reasons, alerts.

``analyze`` is the core's entry point: plain dicts in, dataclass values out, no I/O, O(n) in
pods. Every front end (``ls``, ``describe``, the TUI) shows what it returns.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from functools import lru_cache, partial
from typing import Any

from kubectl_spark.knowledge import times
from kubectl_spark.knowledge.labels import (
    ROLE,
    SCHEDULE_KIND,
    SCHEDULED_APP,
)
from kubectl_spark.memory import collector_paused

from . import apache, kubeflow, raw
from .acted import deleted_by_actions
from .alerts import find_alerts
from .grouping import APACHE, CLUSTER, AppGroup, AttemptGroup, group
from .history import build_history
from .inputs import Index, Snapshot, build_index
from .jsonvalue import JsonObject
from .linking import link_executor_failures
from .losses import classify
from .model import Analysis, App, Attempt, Executor, History, Reason, in_id_order
from .pod import ContainerStatus, Pod
from .podfacts import PodFacts, canonical_time
from .provenance import sources
from .raw import RawObject
from .reasons import NodeHealth, PodContext, spark_container, waiting_reason
from .reconstruct import (
    job_pods_in_events,
    reconstruct_apache_attempts,
    reconstruct_job_attempts,
    reconstruct_operator_attempts,
    reruns_only_after_failure,
)
from .sparkview import kept_evidence, with_spark_view


def pod_state(f: PodFacts, node: NodeHealth | None, container: ContainerStatus) -> str:
    """``container``: the pod's Spark container status (``spark_container``)."""
    phase = f.phase
    if f.source != "cluster" and phase not in ("Succeeded", "Failed"):
        # A kept copy of a deleted pod that had not finished: gone, fenced or not (a fence
        # followed by a force-kill leaves nothing fenced to show).
        return "Gone"
    if f.fenced:
        return "Fenced"
    if phase in ("Succeeded", "Failed"):
        return phase
    if node is not None and not node.reachable:
        return "Lost"
    if f.deleting:
        return "Terminating"
    if phase == "Running":
        term = container.terminated()
        if term is not None and f.pod.spec.restart_policy == "Never":
            return "Failed" if term.exit_code != 0 else "Succeeded"
        return "Running"
    if phase == "Pending":
        return "Pending"
    return "Unknown"


def _ended(pod: Pod, container: ContainerStatus) -> str | None:
    term = container.terminated()
    value = (term.finished_at if term else "") or pod.metadata.deletion_timestamp
    return canonical_time(value) or None


def _executor(
    f: PodFacts, node: NodeHealth | None, index: Index, attempt: Attempt | None, owner_gone: bool
) -> Executor:
    """A classified executor; ``node``: its node's health (``Index.node``)."""
    pod = f.pod
    container = spark_container(pod)
    ctx = PodContext(
        pod,
        "executor",
        node,
        index.pod_events(f),
        owner_gone=owner_gone,
        owner_attempt=attempt.number if attempt else None,
        owner_reason=attempt.reason if attempt else None,
        owner_ended_at=attempt.ended_at if attempt else None,
        owner_may_run=attempt is not None and attempt.state == "Lost",
        job_managed=False,
        container=container,
    )
    reason = classify(ctx)
    if f.source != "cluster":
        reason = (
            dataclasses.replace(reason, evidence=(*reason.evidence, kept_evidence(pod)))
            if reason is not None
            else Reason(
                category="unknown",
                code="Gone",
                exit_code=None,
                counts_as_failure=False,
                message=f"the pod is gone; it was last seen {f.phase}",
                evidence=(kept_evidence(pod),),
            )
        )
    return Executor(
        id=f.exec_id or "?",
        pod=f.name,
        uid=f.uid,
        node=f.node,
        phase=f.phase,
        state=pod_state(f, node, container),
        restarts=f.restarts,
        reason=reason,
        created_at=f.created or None,
        ended_at=_ended(pod, container) if reason is not None else None,
        source=f.source,
        waiting=waiting_reason(ctx) if reason is None and f.source == "cluster" else None,
    )


def _executors(
    pods: Sequence[PodFacts], index: Index, attempt: Attempt, owner_gone: bool
) -> tuple[Executor, ...]:
    """An attempt's executors in id order.

    A quiet executor on a reachable node (podfacts.quiet: nothing for the classifier to find)
    is built in line: it is most executors of most attempts, and this loop is the core's hottest.
    """
    out = []
    for f in pods:
        node = index.node(f.node)
        if f.quiet and not owner_gone and (node is None or node.reachable):
            out.append(
                Executor(
                    f.exec_id or "?",
                    f.name,
                    f.uid,
                    f.node,
                    f.phase,
                    "Running",
                    f.restarts,
                    None,
                    f.created or None,
                    None,
                    f.source,
                )
            )
        else:
            out.append(_executor(f, node, index, attempt, owner_gone))
    return in_id_order(out)


def _gone_driver(
    group_: AttemptGroup, app: AppGroup, index: Index, *, rerun: bool
) -> tuple[str, Reason]:
    """The state of an attempt whose driver pod is gone, and what is left to say of it.

    Events may still name the pod.

    ``rerun``: a later attempt exists. Under restartPolicy OnFailure the spark-operator reruns an
    application only after its driver failed, so an earlier run of such an application failed,
    even though its pod (and with it the exit code) is gone.
    """
    evidence = [
        e
        for e in (
            f"executors name driver {group_.name}" if group_.name and group_.executors else "",
            f"submission-id {group_.submission}" if group_.submission else "",
            group_.note,
        )
        if e
    ]
    events = (
        index.events_by_name.get((app.namespace, "Pod", group_.name or ""), [])
        if group_.name
        else []
    )
    seen = {raw.text(e, "reason"): e for e in events}
    killed = seen.get("ForceKilled")
    by_us = (f"event ForceKilled: {raw.text(killed, 'message')}",) if killed else ()
    if "TaintManagerEviction" in seen or "NodeNotReady" in seen:
        # Its node was lost first: that is the loss, whatever ended the pod after it.
        evidence += [
            f"event {r}: {raw.text(e, 'message')}"
            for r, e in seen.items()
            if r in ("NodeNotReady", "TaintManagerEviction")
        ]
        told = group_.told  # the Apache operator's own account of the attempt's end
        return "Lost", Reason(
            category="cluster",
            code="NodeLost",
            exit_code=None,
            # a Job counts the failed pod; the Apache operator counted its restart
            counts_as_failure=app.source == "job" or (told is not None and told.counts_as_failure),
            message="its node became unreachable and the pod was deleted (from Events; the pod is gone)"
            + ("; then force-killed with kubectl spark" if killed else "")
            + (f"; the operator ended the attempt as {told.code}" if told is not None else ""),
            evidence=(*evidence, *by_us, *(told.evidence if told is not None else ())),
        )
    if killed is not None:
        # kubectl spark's own Event on the driver pod: a person asked for it.
        return "Lost", Reason(
            category="user",
            code="DeletedByUser",
            exit_code=None,
            counts_as_failure=False,
            message=f"force-killed with kubectl spark: {raw.text(killed, 'message')}",
            evidence=(*evidence, *by_us),
        )
    if "Preempted" in seen:
        return "Lost", Reason(
            category="cluster",
            code="Preempted",
            exit_code=None,
            counts_as_failure=False,
            message="preempted by the scheduler (from Events; the pod is gone)",
            evidence=(*evidence, f"event Preempted: {raw.text(seen['Preempted'], 'message')}"),
        )
    if group_.told is not None:  # the Apache operator's account of the attempt
        told = group_.told
        told = dataclasses.replace(told, evidence=(*evidence, *told.evidence))
        return ("Succeeded" if told.code == "Completed" else "Failed"), told
    if rerun and reruns_only_after_failure(app):
        failed = [
            e
            for e in index.events_for(app.owner, "SparkApplication")
            if raw.text(e, "reason") == "SparkDriverFailed"
        ]
        evidence += [
            "spec.restartPolicy.type=OnFailure, and a later attempt exists",
            *(
                f"event SparkDriverFailed (x{raw.number(e, 'count') or 1}): {raw.text(e, 'message')}"
                for e in failed
            ),
        ]
        return "Failed", Reason(
            category="unknown",
            code="Unknown",
            exit_code=None,
            counts_as_failure=True,
            message="the driver failed (the operator reruns an OnFailure application only after a "
            "failure); its pod, and with it the exit code, is gone",
            evidence=tuple(evidence),
        )
    return "Lost", Reason(
        category="unknown",
        code="Unknown",
        exit_code=None,
        counts_as_failure=False,
        message=f"the driver pod of this attempt is gone; {group_.note}",
        evidence=tuple(evidence),
    )


def _killed_at(group_: AttemptGroup, app: AppGroup, index: Index) -> str | None:
    """When kubectl spark force-killed a gone driver pod, from its own Event."""
    if not group_.name:
        return None
    for event in index.events_by_name.get((app.namespace, "Pod", group_.name), []):
        if raw.text(event, "reason") == "ForceKilled":
            stamp = raw.text(event, "firstTimestamp") or raw.text(event, "eventTime")
            return times.rfc3339(times.parse(stamp))
    return None


def _job_failed(app: AppGroup, pod: Pod) -> tuple[str, str, str] | None:
    """Why the Job that owns ``pod`` failed: its Failed (or, first, FailureTarget) condition.

    As (type, reason, message); None while the Job has not failed.
    """
    ref = pod.controller()
    owner = ref.uid if ref is not None else ""
    for job in (j for j in app.jobs if owner and raw.uid(j) == owner):
        for kind in ("Failed", "FailureTarget"):
            found = raw.condition(job, kind)
            if raw.text(found, "status") == "True":
                return kind, raw.text(found, "reason"), raw.text(found, "message")
    return None


def _attempt(number: int, group_: AttemptGroup, app: AppGroup, index: Index) -> Attempt:
    job_managed = app.source == "job"
    driver = group_.driver
    reason: Reason | None
    waiting: Reason | None = None
    ended = group_.ended
    if driver is None and group_.outside:
        state, reason = "Unknown", None  # nothing was lost: the driver is not a pod here
    elif driver is None:
        state, reason = _gone_driver(group_, app, index, rerun=number < len(app.attempts))
        ended = ended or _killed_at(group_, app, index)
    if driver is None:
        base = Attempt(
            number,
            group_.name,
            group_.uid,
            None,
            "Unknown",
            state,
            group_.created,
            None,
            ended,
            0,
            False,
            reason,
        )
        owner_gone = not group_.outside
    else:
        pod = driver.pod
        node = index.node(driver.node)
        container = spark_container(pod)
        ctx = PodContext(
            pod,
            "driver",
            node,
            index.pod_events(driver),
            job_managed=job_managed,
            container=container,
            job_failed=_job_failed(app, pod) if job_managed else None,
        )
        reason = classify(ctx)
        waiting = waiting_reason(ctx) if reason is None and driver.source == "cluster" else None
        if app.source == APACHE and driver.app_id:  # the operator may have ended it already
            chain = app.chain or ([app.owner] if app.owner is not None else [])
            reason = apache.with_verdict(reason, waiting, apache.span_of(chain, driver.app_id))
        state = pod_state(driver, node, container)
        base = Attempt(
            number,
            driver.name,
            driver.uid,
            driver.node,
            driver.phase,
            state,
            driver.created or None,
            times.rfc3339(times.parse(pod.status.start_time)),
            # A Lost driver (its node unreachable) may still run: no end to tell.
            _ended(pod, container) if state not in ("Running", "Pending", "Lost") else None,
            driver.restarts,
            driver.fenced,
            reason,
        )
        owner_gone = state in ("Succeeded", "Failed", "Lost", "Terminating", "Fenced") or bool(
            pod.metadata.deletion_timestamp
        )
    executors = deleted_by_actions(
        _executors(group_.executors, index, base, owner_gone), base, app.namespace, index
    )
    if app.source == "sparkapplication" and app.owner is not None and number == len(app.attempts):
        # The operator's own list keeps the current run's executors whose pods are gone.
        gone = kubeflow.gone_executors(
            app.owner,
            index.events_for(app.owner, "SparkApplication"),
            executors,
            base.reason if owner_gone and base.reason is not None else None,
        )
        executors = in_id_order([*executors, *gone]) if gone else executors
    state = base.state
    if group_.outside and any(e.state == "Running" for e in executors):
        # An executor exits once it loses its driver (the connection, or heartbeats for
        # spark.network.timeout): one that still runs says the driver outside the cluster runs.
        state = "Running"
    return Attempt(
        base.number,
        base.driver_pod,
        base.uid,
        base.node,
        base.phase,
        state,
        base.created_at,
        base.started_at,
        base.ended_at,
        base.restarts,
        base.fenced,
        base.reason,
        executors,
        outside=group_.outside,
        waiting=waiting,
        # grouping gives a client-mode driver the role it plays; its pod's own label tells
        driver_unlabelled=driver is not None and driver.pod.metadata.labels.get(ROLE) != "driver",
    )


def _app_state(app: AppGroup, attempts: Sequence[Attempt]) -> str:
    if any(a.state == "Running" for a in attempts):
        return "Running"
    if app.source == "sparkapplication" and app.owner is not None:
        state = kubeflow.state_of(app.owner)
        if state in kubeflow.STATES and (state or not attempts):
            return kubeflow.app_state(app.owner)
    if app.source == APACHE and app.owner is not None:
        return apache.app_state(app.owner)
    if app.source == CLUSTER and app.owner is not None:
        return apache.cluster_state(app.owner)
    if app.source == "job" and app.owner is not None:
        for cond in raw.items(app.owner, "status", "conditions"):
            if cond.get("status") == "True" and cond.get("type") == "Failed":
                return "Failed"
            if cond.get("status") == "True" and cond.get("type") == "Complete":
                return "Succeeded"
    if not attempts:
        return "Pending" if app.owner is not None else "Unknown"
    # A Lost driver may still run (a partition): without an owner's verdict the state is Unknown.
    current = attempts[-1].state
    return {"Pending": "Pending", "Succeeded": "Succeeded", "Failed": "Failed"}.get(
        current, "Unknown"
    )


def _view_of(snapshot: Snapshot, app: AppGroup, attempt: AttemptGroup) -> Any:
    """Spark's executor list of an attempt: its running driver's, else a History Server's."""
    live = snapshot.spark_views.get(attempt.uid) if attempt.uid else None
    if live is not None or not snapshot.finished_views:
        return live
    app_id = (
        attempt.driver.app_id
        if attempt.driver is not None
        else (attempt.name or "").removesuffix("-driver")
        if app.source == APACHE
        else app.app_id  # a driver outside the cluster, asked at its UI (--spark-ui)
        if attempt.outside
        else ""
    )
    return snapshot.finished_views.get(app_id) if app_id else None


def _unlabelled_ips(attempt: AttemptGroup) -> dict[str, str]:
    """Pod uid → IP of executors whose pods do not carry Spark's id (a controller made them)."""
    return {
        f.uid: ip
        for f in attempt.executors
        if not f.exec_id.isdecimal() and (ip := f.pod.status.pod_ip)
    }


def _pod_events_named(index: Index, namespace: str, name: str) -> list[RawObject]:
    return index.events_by_name.get((namespace, "Pod", name), [])


def analyze(snapshot: Snapshot, *, group_by: str | None = None) -> Analysis:
    """The analysis of a snapshot, with the cyclic garbage collector paused (``memory``)."""
    with collector_paused():
        return _analyze(snapshot, group_by)


def _analyze(snapshot: Snapshot, group_by: str | None) -> Analysis:
    index = build_index(snapshot)
    groups, ungrouped = group(
        snapshot.pods,
        snapshot.jobs,
        snapshot.sparkapplications,
        group_by=group_by,
        owners=snapshot.owners,
        apacheapps=snapshot.apacheapps,
        sparkclusters=snapshot.sparkclusters,
        known=snapshot.pod_facts,
    )
    apps = []
    named_by_job = lru_cache(maxsize=1)(lambda: job_pods_in_events(snapshot))
    for app in groups:
        reconstruct_operator_attempts(app, index)
        reconstruct_apache_attempts(app)
        reconstruct_job_attempts(app, named_by_job)
        views = [_view_of(snapshot, app, a) for a in app.attempts]
        attempts = tuple(
            link_executor_failures(
                with_spark_view(
                    _attempt(i + 1, a, app, index),
                    view,
                    partial(_pod_events_named, index, app.namespace),
                    _unlabelled_ips(a) if view else None,  # only Spark's list asks for them
                )
            )
            for i, (a, view) in enumerate(zip(app.attempts, views, strict=True))
        )
        owner_created = (
            times.rfc3339(times.parse(raw.text(app.owner, "metadata", "creationTimestamp")))
            if app.owner
            else None
        )
        created = min(
            [t for t in (owner_created, *(a.created_at for a in attempts)) if t], default=None
        )
        draft = App(
            app.namespace,
            app.name,
            app.app_id,
            app.source,
            _app_state(app, attempts),
            created,
            (),
            attempts,
            (),
            raw.name(app.owner) if app.owner else "",
        )
        alerts = find_alerts(draft, app, snapshot, index)
        history = History(partial(build_history, draft, app, index))
        apps.append(
            App(
                draft.namespace,
                draft.name,
                draft.app_id,
                draft.source,
                draft.state,
                draft.created_at,
                alerts,
                attempts,
                history,
                draft.owner,
                *sources(app, attempts, views, snapshot.unreadable),
                schedule=schedule_of(app.owner) if app.source == "sparkapplication" else "",
                operator=_operator_view(app),
            )
        )
    return Analysis(tuple(apps), tuple(ungrouped))


def _operator_view(app: AppGroup) -> JsonObject | None:
    """The Apache operator's own view of its SparkApplication or SparkCluster, if it runs it."""
    if app.owner is None:
        return None
    if app.source == APACHE:
        return apache.operator_view(app.owner)
    if app.source == CLUSTER:
        return apache.cluster_view(app.owner)
    return None


def schedule_of(sparkapp: object) -> str:
    """The ScheduledSparkApplication that started this SparkApplication ("" for none).

    Its label first, then its owner reference (the Kubeflow operator sets both on a run).
    """
    named = raw.label(sparkapp, SCHEDULED_APP)
    if named:
        return named
    for ref in raw.items(sparkapp, "metadata", "ownerReferences"):
        if ref.get("kind") == SCHEDULE_KIND and isinstance(ref.get("name"), str):
            return str(ref["name"])
    return ""
