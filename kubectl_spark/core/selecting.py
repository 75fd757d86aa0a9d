"""``-l`` selects applications, as kubectl's ``-l`` selects objects.

An application is a group of objects: its attempts' driver pods, their executors, and the Job
or SparkApplication that owns them. The selector is matched against each of them whole (as the
API server matches one object), and an application is shown whole when any of them matches:
filtering the pods instead would show an application without its driver, or with some of its
executors, and group what is left into applications that do not exist.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from kubectl_spark.knowledge.selectors import LabelSelector

from . import raw
from .inputs import Snapshot
from .model import Analysis, App

# Where an application's owning object is listed in the snapshot, by the app's source.
_OWNERS = {
    "job": "jobs",
    "sparkapplication": "sparkapplications",
    "apache-operator": "apacheapps",
    "spark-cluster": "sparkclusters",
}


def select_apps(analysis: Analysis, snapshot: Snapshot, selector: LabelSelector) -> Analysis:
    """The applications any of whose objects ``selector`` matches, and the ungrouped pods it does."""
    if selector.empty:
        return analysis
    kept = selected_ids(analysis.apps, snapshot, selector)
    labels = _pod_labels(snapshot)
    return dataclasses.replace(
        analysis,
        apps=tuple(a for a in analysis.apps if id(a) in kept),
        ungrouped=tuple(u for u in analysis.ungrouped if selector.matches(labels.get(u.uid) or {})),
    )


def selected_ids(apps: Iterable[App], snapshot: Snapshot, selector: LabelSelector) -> set[int]:
    """The ``id()`` of each application ``select_apps`` keeps (the TUI filters its own list)."""
    labels, owners = _pod_labels(snapshot), _owner_labels(snapshot)
    return {id(a) for a in apps if _any_matches(selector, _labels_of(a, labels, owners))}


def _pod_labels(snapshot: Snapshot) -> dict[str, Mapping[str, str]]:
    return {p.metadata.uid: p.metadata.labels for p in (*snapshot.pods, *snapshot.owners)}


def _any_matches(selector: LabelSelector, objects: Iterable[Mapping[str, str]]) -> bool:
    return any(selector.matches(labels) for labels in objects)


def _owner_labels(snapshot: Snapshot) -> dict[tuple[str, str, str], Mapping[str, str]]:
    """(list, namespace, name) -> labels of the Jobs and SparkApplications read."""
    found: dict[tuple[str, str, str], Mapping[str, str]] = {}
    for field in set(_OWNERS.values()):
        items: Sequence[Any] = getattr(snapshot, field)
        for item in items:
            found[(field, raw.namespace(item), raw.name(item))] = raw.labels(item)
    return found


def _labels_of(
    app: App,
    labels: Mapping[str, Mapping[str, str]],
    owners: Mapping[tuple[str, str, str], Mapping[str, str]],
) -> Iterable[Mapping[str, str]]:
    """The labels of each object the application is made of that the snapshot holds."""
    field = _OWNERS.get(app.source)
    if field and app.owner:
        owned = owners.get((field, app.namespace, app.owner))
        if owned is not None:
            yield owned
    for attempt in app.attempts:
        if attempt.uid and attempt.uid in labels:
            yield labels[attempt.uid]
        for executor in attempt.executors:
            if executor.uid and executor.uid in labels:
                yield labels[executor.uid]
