"""Which pods make up which application, and which executors belong to which driver attempt.

Applications (``domain.md`` "Vocabulary"): the spark-operator label
``sparkoperator.k8s.io/app-name``, else the owning driver Job, else ``spark-app-selector``
(``--group-by LABEL`` overrides). Attempts are driver pods numbered by creation time. Executors
go to the attempt whose driver pod UID is their controller owner, else whose submission-id they
carry, else the attempt of their app id that was current when they were created. Pods with a
``spark-role`` that fit nowhere are kept aside (ungrouped), never dropped.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from . import raw, times
from .model import UngroupedPod

OPERATOR_APP = "sparkoperator.k8s.io/app-name"
SUBMISSION = "sparkoperator.k8s.io/submission-id"


@dataclass
class AttemptGroup:
    driver: dict[str, Any] | None  # None: the driver pod is gone (reconstructed)
    uid: str | None
    name: str | None
    created: str | None
    submission: str = ""
    executors: list[dict[str, Any]] = field(default_factory=list)
    note: str = ""


@dataclass
class AppGroup:
    key: tuple[str, str, str]
    namespace: str
    name: str
    app_id: str
    source: str
    owner: dict[str, Any] | None = None  # the Job or SparkApplication
    attempts: list[AttemptGroup] = field(default_factory=list)


def _created(obj: Any) -> tuple[str, str]:
    stamp = times.parse(raw.text(obj, "metadata", "creationTimestamp"))
    return (times.rfc3339(stamp) or "", raw.name(obj))


def group(
    pods: Sequence[Any],
    jobs: Sequence[Any],
    sparkapps: Sequence[Any],
    *,
    group_by: str | None = None,
) -> tuple[list[AppGroup], list[UngroupedPod]]:
    groups: dict[tuple[str, str, str], AppGroup] = {}
    ungrouped: list[UngroupedPod] = []
    jobs_by_uid = {raw.uid(j): j for j in jobs if raw.uid(j)}
    apps_by_name = {(raw.namespace(a), raw.name(a)): a for a in sparkapps if raw.name(a)}
    spark_pods = [p for p in pods if isinstance(p, dict) and "spark-role" in raw.labels(p)]
    drivers = sorted(
        (p for p in spark_pods if raw.labels(p)["spark-role"] == "driver"), key=_created
    )
    executors = sorted(
        (p for p in spark_pods if raw.labels(p)["spark-role"] != "driver"), key=_created
    )

    def app_group(
        key: tuple[str, str, str], name: str, app_id: str, source: str, owner: dict[str, Any] | None
    ) -> AppGroup:
        found = groups.get(key)
        if found is None:
            found = groups[key] = AppGroup(key, key[1], name, app_id, source, owner)
        return found

    def by_labels(
        labels: dict[str, str], ns: str, app_id: str, job_ref: dict[str, Any] | None
    ) -> AppGroup | None:
        """The application a pod's labels (or its driver Job) put it in, by the rules' order."""
        if group_by and labels.get(group_by):
            return app_group(("label", ns, labels[group_by]), labels[group_by], app_id, "pod", None)
        if labels.get(OPERATOR_APP):
            name = labels[OPERATOR_APP]
            return app_group(
                ("sparkapplication", ns, name),
                name,
                app_id,
                "sparkapplication",
                apps_by_name.get((ns, name)),
            )
        if job_ref is not None:
            job = jobs_by_uid.get(str(job_ref.get("uid")))
            found = app_group(
                ("job", ns, str(job_ref.get("uid"))),
                labels.get("spark-app-name") or str(job_ref.get("name")),
                app_id,
                "job",
                job,
            )
            found.owner = found.owner or job
            return found
        if app_id:
            return app_group(
                ("pod", ns, app_id), labels.get("spark-app-name") or app_id, app_id, "pod", None
            )
        return None

    driver_attempt: dict[str, tuple[AppGroup, AttemptGroup]] = {}
    for pod in drivers:
        labels = raw.labels(pod)
        app_id = labels.get("spark-app-selector", "")
        ref = raw.controller_ref(pod)
        g = by_labels(labels, raw.namespace(pod), app_id, ref if ref.get("kind") == "Job" else None)
        if g is None:
            ungrouped.append(
                UngroupedPod(
                    raw.namespace(pod),
                    raw.name(pod),
                    raw.uid(pod),
                    "driver",
                    "no spark-app-selector label, no spark-operator label and no owning Job",
                )
            )
            continue
        g.app_id = g.app_id or app_id
        attempt = AttemptGroup(
            pod, raw.uid(pod), raw.name(pod), _created(pod)[0] or None, labels.get(SUBMISSION, "")
        )
        g.attempts.append(attempt)
        driver_attempt[raw.uid(pod)] = (g, attempt)

    for pod in executors:
        labels = raw.labels(pod)
        ns = raw.namespace(pod)
        app_id = labels.get("spark-app-selector", "")
        ref = raw.controller_ref(pod)
        owner_uid = str(ref.get("uid", "")) if ref.get("kind") == "Pod" else ""
        placed = driver_attempt.get(owner_uid) if owner_uid else None
        if placed is not None and not (
            group_by and labels.get(group_by) and placed[0].key != ("label", ns, labels[group_by])
        ):
            placed[1].executors.append(pod)
            continue
        target = _fallback_group(groups, labels, ns, app_id, group_by) or by_labels(
            labels, ns, app_id, None
        )
        if target is None:
            ungrouped.append(
                UngroupedPod(
                    ns,
                    raw.name(pod),
                    raw.uid(pod),
                    labels.get("spark-role", ""),
                    "no driver owner, no spark-app-selector and no spark-operator label",
                )
            )
            continue
        _attach_executor(
            target, labels, owner_uid, str(ref.get("name", "")) if owner_uid else "", pod
        )

    for (ns, app_name), app in apps_by_name.items():
        key = ("sparkapplication", ns, app_name)
        if key not in groups:
            groups[key] = AppGroup(
                key,
                ns,
                app_name,
                raw.text(app, "status", "sparkApplicationId"),
                "sparkapplication",
                app,
            )
    for job in jobs:
        template_labels = raw.mapping(job, "spec", "template", "metadata", "labels")
        key = ("job", raw.namespace(job), raw.uid(job))
        if template_labels.get("spark-role") == "driver" and key not in groups:
            groups[key] = AppGroup(
                key,
                raw.namespace(job),
                str(template_labels.get("spark-app-name") or raw.name(job)),
                str(template_labels.get("spark-app-selector", "")),
                "job",
                job,
            )
    for g in groups.values():
        g.attempts.sort(key=lambda a: (a.created or "", a.name or ""))
    return sorted(groups.values(), key=lambda g: (g.namespace, g.name, g.key)), ungrouped


def _fallback_group(
    groups: dict[tuple[str, str, str], AppGroup],
    labels: dict[str, str],
    ns: str,
    app_id: str,
    group_by: str | None,
) -> AppGroup | None:
    """An existing application for an executor whose driver pod is not in the cluster."""
    if group_by and labels.get(group_by):
        return groups.get(("label", ns, labels[group_by]))
    if labels.get(OPERATOR_APP):
        return groups.get(("sparkapplication", ns, labels[OPERATOR_APP]))
    if not app_id:
        return None
    return next((g for g in groups.values() if g.namespace == ns and g.app_id == app_id), None)


def _attach_executor(
    target: AppGroup, labels: dict[str, str], owner_uid: str, owner_name: str, pod: Any
) -> None:
    """Place an executor whose driver pod is not (or no longer) in the cluster."""
    submission = labels.get(SUBMISSION, "")
    if submission:
        for attempt in target.attempts:
            if attempt.submission == submission:
                attempt.executors.append(pod)
                return
    if owner_uid:
        for attempt in target.attempts:
            if attempt.uid == owner_uid:
                attempt.executors.append(pod)
                return
    created = _created(pod)[0]
    live = [a for a in target.attempts if a.driver is not None and (a.created or "") <= created]
    if live and not owner_uid and not submission:
        live[-1].executors.append(pod)  # by app id and time window
        return
    # The driver pod is gone: reconstruct the attempt from what the executor says of it.
    attempt = AttemptGroup(
        None,
        owner_uid or None,
        owner_name or None,
        created or None,
        submission,
        note="its driver pod is no longer in the cluster",
    )
    attempt.executors.append(pod)
    target.attempts.append(attempt)
