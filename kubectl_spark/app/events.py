"""An application's Events: its pods', its Job's and its SparkApplication's, oldest first."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from kubectl_spark.core import raw
from kubectl_spark.core.inputs import Snapshot
from kubectl_spark.core.model import App
from kubectl_spark.knowledge.times import age, parse


def _time(event: Any) -> str:
    for key in ("lastTimestamp", "eventTime", "firstTimestamp"):
        value = raw.text(event, key)
        if value:
            return value
    return raw.text(event, "metadata", "creationTimestamp")


_EXEC = "-exec-"


def _executor_prefixes(app: App) -> set[str]:
    """The executor name prefixes of an application (``<prefix>-exec-<id>``), from its pods."""
    return {
        e.pod[: e.pod.rfind(_EXEC)]
        for a in app.attempts
        for e in a.executors
        if _EXEC in e.pod and e.pod.rsplit(_EXEC, 1)[1].isdecimal()
    }


def _named_like_ours(name: str, prefixes: set[str]) -> bool:
    """An executor pod of this application that is gone: Events about it outlive it (an hour).

    Spark names executors ``<prefix>-exec-<id>``; one gone with no kept copy and not in
    Spark's list is still named by its Events (a preemption, an eviction).
    """
    head, sep, tail = name.rpartition(_EXEC)
    return bool(sep) and tail.isdecimal() and head in prefixes


def app_events(snapshot: Snapshot, app: App, now: datetime) -> list[dict[str, str]]:
    uids = {a.uid for a in app.attempts if a.uid} | {
        e.uid for a in app.attempts for e in a.executors
    }
    names = {("Pod", a.driver_pod) for a in app.attempts if a.driver_pod} | {
        ("Pod", e.pod) for a in app.attempts for e in a.executors
    }
    if app.owner:
        names.add(("Job" if app.source == "job" else "SparkApplication", app.owner))
    prefixes = _executor_prefixes(app)
    picked = []
    for event in snapshot.events:
        involved = raw.mapping(event, "involvedObject")
        if (
            raw.text(involved, "namespace") not in (app.namespace, "")
            and raw.namespace(event) != app.namespace
        ):
            continue
        kind, name = raw.text(involved, "kind"), raw.text(involved, "name")
        if (
            raw.text(involved, "uid") in uids
            or (kind, name) in names
            or (kind == "Pod" and _named_like_ours(name, prefixes))
        ):
            picked.append(event)
    picked.sort(key=_time)
    out = []
    for event in picked:
        involved = raw.mapping(event, "involvedObject")
        count = raw.number(event, "count") or 1
        seen = age(parse(_time(event)), now) + (f" (x{count})" if count > 1 else "")
        out.append(
            {
                "time": _time(event),
                "age": seen,
                "type": raw.text(event, "type") or "Normal",
                "reason": raw.text(event, "reason"),
                "object": f"{raw.text(involved, 'kind').lower()}/{raw.text(involved, 'name')}",
                "message": raw.text(event, "message"),
                "count": str(count),
            }
        )
    return out
