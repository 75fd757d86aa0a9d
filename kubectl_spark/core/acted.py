"""Executors an action of kubectl spark deleted, read back from the Events it left.

``fence`` and ``force-kill`` leave a ``DeletedByKubectlSpark`` Event on each executor they
delete (``core.plans.base.executor_deleted``); once the pods are gone, nothing else tells them.
"""

from __future__ import annotations

from typing import Any

from kubectl_spark.knowledge import times
from kubectl_spark.knowledge.labels import (
    ACTION_ANNOTATION,
    EXECUTOR_ID_ANNOTATION,
)

from . import raw
from .inputs import Index
from .model import Attempt, Executor, Reason, in_id_order
from .reasons import event_evidence


def deleted_by_actions(
    executors: tuple[Executor, ...], attempt: Attempt, namespace: str, index: Index
) -> tuple[Executor, ...]:
    """Add the executors an action of kubectl spark deleted whose pods are gone, from its Events.

    Nothing else may tell of them: Spark's own list says only that the pod was "not found in
    the cluster" or "deleted by a user or the framework", and a fenced driver on a cut-off
    node cannot be asked. As a kept copy of such a pod says (``losses``: its action
    annotation), the loss is the user's, and Spark counted it as no failure.
    """
    events = index.deleted_executors.get((namespace, attempt.driver_pod or ""))
    if not events:
        return executors
    uids = {e.uid for e in executors}
    ids = {e.id for e in executors}
    added: list[Executor] = []
    for event in events:
        told = raw.text(event, "related", "uid")
        if attempt.uid and told and told != attempt.uid:
            continue  # an earlier pod of the same name: another attempt
        involved = raw.mapping(event, "involvedObject")
        uid = raw.text(involved, "uid")
        notes = raw.annotation_map(event)
        exec_id = notes.get(EXECUTOR_ID_ANNOTATION) or "?"
        if uid in uids or exec_id in ids:
            continue  # still in the API, or kept by a watch or the history
        action = notes.get(ACTION_ANNOTATION) or "an action"
        reason = Reason(
            category="user",
            code="DeletedByUser",
            exit_code=None,
            counts_as_failure=False,
            message=f"deleted by kubectl spark {action}",
            evidence=(event_evidence(event), "the pod is gone"),
        )
        # When it was made: the first Event about its pod (the scheduler's Scheduled).
        made = min(filter(None, map(_event_time, index.events_by_uid.get(uid) or ())), default=None)
        added.append(
            Executor(
                exec_id,
                raw.text(involved, "name"),
                uid,
                None,
                "Unknown",
                "Gone",
                0,
                reason,
                made,
                _event_time(event),
                source="events",
            )
        )
        uids.add(uid)
        ids.add(exec_id)
    return in_id_order([*executors, *added]) if added else executors


def _event_time(event: Any) -> str | None:
    """When an Event (first) happened, in RFC 3339."""
    stamp = raw.text(event, "firstTimestamp") or raw.text(event, "eventTime")
    return times.rfc3339(times.parse(stamp))
