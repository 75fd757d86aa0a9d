"""Where an application's answer came from, and what could not be read: its ``sources`` and notes.

Every answer says what it was read from (the cluster, Events, a watch, the local store, the
in-cluster recorder, Spark's driver, a History Server) and what it could not read (a list
refused, a driver not asked), so that "unknown" is never silent about why.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from .grouping import OUTSIDE_NOTE, AppGroup, AttemptGroup
from .model import Attempt

UNREADABLE = {
    "nodes": "nodes could not be read (forbidden): a lost node is told only by its pods' "
    "NodeNotReady Events",
    "events": "Events could not be read (forbidden): reasons only Events give (preemption, "
    "scheduling, volume attachment) are missing",
    "jobs": "driver Jobs could not be read (forbidden): a Job's counted attempts are missing",
    "sparkapplications": "SparkApplications could not be read (forbidden): the operator's "
    "attempt count is missing",
    "volumeattachments": "VolumeAttachments could not be read (forbidden): a volume still "
    "attached elsewhere cannot be named",
    "pvcs": "PersistentVolumeClaims could not be read (forbidden): a blocked volume's claim "
    "cannot be named",
}


def _driver_url(attempt: AttemptGroup) -> str:
    """Where the executors say their driver is: ``SPARK_DRIVER_URL`` of their container.

    Spark sets it on every executor (BasicExecutorFeatureStep, ENV_DRIVER_URL); for a driver
    outside the cluster it is the one pointer to where it runs.
    """
    for f in attempt.executors:
        for container in f.pod.spec.containers:
            for env in container.env:
                if env.name == "SPARK_DRIVER_URL":
                    return f"; its executors name it: SPARK_DRIVER_URL={env.value}"
    return ""


# The sources that keep a gone pod's last state: when none was read, nothing was recording.
KEEPERS = frozenset({"watch", "history", "recorder"})


def _nothing_recorded(namespace: str) -> str:
    """What would have kept the reasons: the one command to run from now on."""
    return (
        f"; nothing was recording: `kubectl spark record -n {namespace}` keeps each pod's last "
        "state from now on (or the in-cluster `kubectl spark recorder`)"
    )


def _unexplained_by(attempt: Attempt, view: Mapping[str, object] | None) -> str:
    """What was asked about an attempt's lost executor ids, and found nothing.

    Every front end asks each running driver (``app.view``, ``kube.live``); one that could not
    be reached (its node not Ready) or that was not asked (a plan's view) is said as such:
    saying "Spark's driver" explains nothing when it was not asked.
    """
    if view is not None:
        return "no pod, watch, history or Spark's driver explains"
    if attempt.outside:
        return (
            "no pod, watch or history explains; Spark's driver runs outside the cluster and was "
            "not asked: point at its UI with --spark-ui URL"
        )
    if attempt.state == "Running":
        return "no pod, watch or history explains; Spark's driver was not asked"
    return "no pod, watch or history explains; Spark's driver no longer runs to be asked"


def sources(
    group_: AppGroup,
    attempts: tuple[Attempt, ...],
    views: Sequence[Mapping[str, object] | None],
    unreadable: Sequence[str],
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """What this application's answer was read from, and what could not be read.

    ``views``: Spark's executor list of each attempt, as the analysis used it (None: none).
    """
    found = {"cluster"}
    found |= {e.source for a in attempts for e in a.executors}
    found |= {g.driver.source for g in group_.attempts if g.driver is not None}
    notes = [
        f"attempt {a.number}: {OUTSIDE_NOTE}{_driver_url(g)}"
        for a, g in zip(attempts, group_.attempts, strict=False)
        if a.outside
    ]
    for a, view in zip(attempts, views, strict=False):
        if view and view.get("executors") is not None:
            kept = "history" if view.get("kept") else "history-server"
            found.add(kept if view.get("origin") and not view.get("live") else "spark-api")
        elif view and view.get("note"):
            notes.append(f"attempt {a.number}: {view['note']}")
        if a.unknown_losses:
            notes.append(
                f"attempt {a.number}: {a.unknown_losses} executor(s) lost with unknown reasons "
                f"(gaps in Spark's executor ids that {_unexplained_by(a, view)})"
                + ("" if found & KEEPERS else _nothing_recorded(group_.namespace))
            )
    notes += [UNREADABLE[key] for key in unreadable if key in UNREADABLE]
    found.discard("spark")
    order = ("cluster", "events", "watch", "history", "recorder", "spark-api", "history-server")
    return tuple(s for s in order if s in found), tuple(notes)
