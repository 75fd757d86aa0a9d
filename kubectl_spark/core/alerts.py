"""Conditions that need a person, each with what to do about it.

Split brain, zombie driver, a driver force-deleted on a lost node, replacement blocked (its
rules: ``blocked.py``), name collision, orphaned executors, executor churn, unfinished actions.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import TYPE_CHECKING

from kubectl_spark.knowledge import times
from kubectl_spark.knowledge.labels import KEEPS_EXECUTORS

from . import raw
from .blocked import replacement_blocked
from .model import Alert, App

if TYPE_CHECKING:
    from .grouping import AppGroup
    from .inputs import Index, Snapshot
    from .podfacts import PodFacts

CHURN_LOSSES = 5  # more than this many executor losses …
CHURN_WINDOW_SECONDS = 600  # … within this window is churn
COLLISION_GRACE_SECONDS = 60
NOT_LOSSES = {"Completed", "Decommissioned", "DeletedByDriver", "OwnerGone", "DeletedByUser"}


def find_alerts(app: App, group: AppGroup, snapshot: Snapshot, index: Index) -> tuple[Alert, ...]:
    alerts: list[Alert] = []
    attempts = app.attempts
    alive = [
        a
        for a in attempts
        if not a.fenced
        and a.driver_pod
        and a.uid
        # the kubelet stopped it for a graceful node shutdown: it does not run on
        and not (a.reason is not None and a.reason.code == "NodeShutdown")
        and (
            a.state == "Running"
            or (a.state in ("Lost", "Terminating", "Unknown") and index.unreachable(a.node))
        )
    ]
    if len(alive) >= 2:
        suspects = [a for a in alive if index.unreachable(a.node)]
        why = "; ".join(
            f"attempt {a.number}'s driver {a.driver_pod} is on unreachable node {a.node}"
            for a in suspects
        )
        alerts.append(
            Alert(
                "SplitBrain",
                f"attempts {_listed([str(a.number) for a in alive])} may {'both' if len(alive) == 2 else 'all'} be running ({why or 'several drivers are Running'}): "
                f"fence or force-kill all but one (kubectl spark fence {app.name}/{(suspects or alive)[0].number})",
                tuple(a.number for a in alive),
            )
        )
    for a in attempts:
        if (
            a.driver_pod
            and not a.fenced
            and group.terminating(a.uid)
            and index.unreachable(a.node)
            and a.phase not in ("Succeeded", "Failed")
        ):
            alerts.append(
                Alert(
                    "ZombieDriver",
                    f"attempt {a.number}'s driver pod {a.driver_pod} is Terminating on unreachable node {a.node} and may still be "
                    "running; Kubernetes finishes the deletion only when the node returns, its Node object is deleted, or "
                    "it gets the out-of-service taint",
                    (a.number,),
                )
            )
    alerts.extend(_tombstones(group, index))
    alerts.extend(_forced_on_lost_node(app, group, index))
    alerts.extend(replacement_blocked(app, group, snapshot, index))
    ids = app_ids(group)
    alerts.extend(_shared_app_id(app, ids))
    alerts.extend(_name_collision(app, ids, snapshot))
    alerts.extend(_orphans(app, group))
    alerts.extend(_unfinished_actions(app, group))
    alerts.extend(_churn(app, snapshot))
    return tuple(alerts)


def _unfinished_actions(app: App, group: AppGroup) -> list[Alert]:
    """A force-kill or a fence that stopped half-way: pods it marked and never reached.

    Both mark the attempt's pods (their action annotation) before they delete any: a pod
    force-kill marked and that has no deletionTimestamp, or an executor a fence marked that
    still runs while its executors were not to be kept, is one the run never reached (a failed
    step, a lost connection). Running the same command again finishes it (plans converge).
    """
    out = []
    for attempt, source in zip(app.attempts, group.attempts, strict=False):
        pods = [*([source.driver] if source.driver is not None else []), *source.executors]
        for action, left in (
            ("force-kill", [f.name for f in pods if _marked(f, "force-kill")]),
            (
                "fence",
                [
                    f.name
                    for f in source.executors
                    if _marked(f, "fence")
                    and f.phase in ("Running", "Pending")
                    and KEEPS_EXECUTORS not in f.pod.metadata.annotations
                ],
            ),
        ):
            if left:
                out.append(
                    Alert(
                        "UnfinishedAction",
                        f"a {action} of attempt {attempt.number} stopped before it ended: "
                        f"{_listed(left)} {'is' if len(left) == 1 else 'are'} still here; run "
                        f"it again to finish it (kubectl spark {action} "
                        f"{app.name}/{attempt.number})",
                        (attempt.number,),
                    )
                )
    return out


def _marked(f: PodFacts, action: str) -> bool:
    """A pod in the API, not being deleted, that ``action`` marked."""
    return f.source == "cluster" and not f.deleting and f.action == action


def _tombstones(group: AppGroup, index: Index) -> list[Alert]:
    """Pods deleted from the API while their node is unreachable: their processes may run on.

    No kubelet confirmed their end, so whatever removed them (a grace-0 delete, ``--force``)
    removed only the record. Kubernetes assumes nothing more about such a node until it is
    Ready again, its Node object is deleted, or it is tainted out-of-service (the person says
    it is powered off). Only a kept copy (a watch, the history store) still says where they ran.
    """
    out: list[Alert] = []
    for number, attempt in enumerate(group.attempts, start=1):
        pods = [p for p in (attempt.driver, *attempt.executors) if p is not None]
        gone = [
            p
            for p in pods
            if p.source != "cluster"
            and p.phase not in ("Succeeded", "Failed")
            and (health := index.nodes.get(p.node or "")) is not None  # deleted: no tombstone
            and not health.reachable
            and not health.out_of_service
            and not _gone_before(p, health.since)
        ]
        if not gone:
            continue
        nodes = sorted({str(p.node) for p in gone})
        names = ", ".join(p.name for p in gone[:3]) + (" …" if len(gone) > 3 else "")
        out.append(
            Alert(
                "ForceDeletedOnLostNode",
                f"attempt {number}'s pod(s) {names} were deleted from the API while node(s) "
                f"{', '.join(nodes)} could not be reached: their processes may still run. Treat "
                f"attempt {number} as alive until the node is Ready again, deleted, or tainted "
                f"out-of-service once confirmed powered off (kubectl taint node {nodes[0]} "
                f"node.kubernetes.io/out-of-service=nodeshutdown:NoExecute)",
                (number,),
            )
        )
    return out


def _scheduled_to(index: Index, namespace: str, pod: str) -> str:
    """The node kube-scheduler bound a pod to, from its Scheduled Event ("" when none is left)."""
    for event in index.events_by_name.get((namespace, "Pod", pod), []):
        if raw.text(event, "reason") == "Scheduled":
            match = re.search(r" to (\S+)$", raw.text(event, "message"))
            if match:
                return match.group(1)
    return ""


def _forced_on_lost_node(app: App, group: AppGroup, index: Index) -> list[Alert]:
    """Gone drivers the Apache operator released after their node was lost: deleted by force.

    A pod bound to a node leaves the API only when its kubelet confirms it stopped, or when it
    is deleted with grace 0. The operator deletes a stopping attempt's driver with grace 0 once
    the stopping state is forceTerminationGracePeriodMillis old (AppCleanUpStep.enableForceDelete):
    a driver whose node was unreachable from before that attempt ended, and that had not
    finished, was removed by force, with no kubelet to say its JVM stopped. Its Scheduled Event
    names the node; the operator's state history says when the attempt ended.
    """
    if app.source != "apache-operator":
        return []
    out = []
    pairs = zip(app.attempts, group.attempts, strict=False)
    for number, (attempt, source) in enumerate(pairs, start=1):
        told = source.told
        if source.driver is not None or told is None or not attempt.driver_pod:
            continue
        if told.code == "Completed" or told.exit_code is not None:
            continue  # its container ended: the kubelet saw it stop
        named = index.events_by_name.get((app.namespace, "Pod", attempt.driver_pod), [])
        if any(raw.text(e, "reason") == "ForceKilled" for e in named):
            continue  # a person force-killed it with kubectl spark: fenced, or the node is down
        node = _scheduled_to(index, app.namespace, attempt.driver_pod)
        health = index.nodes.get(node) if node else None
        ended = times.parse(attempt.ended_at)
        lost = times.parse(health.since) if health is not None else None
        if (
            health is None
            or health.reachable
            or health.out_of_service
            or ended is None
            or lost is None
            or ended < lost
        ):
            continue
        out.append(
            Alert(
                "ForceDeletedOnLostNode",
                f"attempt {number}'s driver pod {attempt.driver_pod} was on node {node}, "
                f"unreachable since {health.since}; the operator ended the attempt after that "
                f"({told.code}) and its pod is gone, which on a lost node only a grace-0 delete "
                "does (forceTerminationGracePeriodMillis): its JVM may still run. Treat attempt "
                f"{number} as alive until node {node} is Ready again, deleted, or tainted "
                f"out-of-service once confirmed powered off (kubectl taint node {node} "
                "node.kubernetes.io/out-of-service=nodeshutdown:NoExecute)",
                (number,),
            )
        )
    return out


def _gone_before(pod: PodFacts, since: str | None) -> bool:
    """Whether a kept pod was seen deleted before its node became unreachable (it ended then)."""
    seen = times.parse(pod.pod.seen_at)
    lost = times.parse(since)
    return seen is not None and lost is not None and seen < lost


LIVE_STATES = ("Running", "Pending", "Terminating", "Lost", "Unknown", "Fenced")


def app_ids(group: AppGroup) -> list[str]:
    """Each attempt's app id (spark.app.id): its driver's label, else its executors'."""
    out = []
    for attempt in group.attempts:
        found = attempt.driver.app_id if attempt.driver is not None else ""
        out.append(found or next((e.app_id for e in attempt.executors if e.app_id), ""))
    return out


def _shared_app_id(app: App, ids: list[str]) -> list[Alert]:
    """Attempts that share one app id while an earlier one still has pods.

    Spark's driver selects its executors by app id (``ExecutorPodsWatchSnapshotSource``:
    spark-app-selector and spark-role), so a later attempt with the same id counts the earlier
    attempt's executors as its own and asks for none, and its ``stop()`` deletes them (and the
    earlier driver's, the later one's). Driver Job retries, in-place restarts and resubmitted
    copies of a driver pod share the id unless each is given its own.
    """
    if len(app.attempts) < 2 or len(ids) != len(app.attempts):
        return []
    out: list[Alert] = []
    for newer, newer_id in zip(app.attempts, ids, strict=True):
        if not newer_id or newer.state not in ("Running", "Pending"):
            continue
        sharing = [
            older
            for older, older_id in zip(app.attempts, ids, strict=True)
            if older.number < newer.number
            and older_id == newer_id
            and (older.state in LIVE_STATES or any(e.state in LIVE_STATES for e in older.executors))
        ]
        if not sharing:
            continue
        numbers = tuple(sorted({*(a.number for a in sharing), newer.number}))
        theirs = [e.pod for older in sharing for e in older.executors if e.state in LIVE_STATES]
        counted = (
            f"it counts attempt {_listed([str(a.number) for a in sharing])}'s executors "
            f"({', '.join(theirs[:3])}) as its own and asks for none, and its stop() deletes them"
            if theirs
            else f"a driver of attempt {_listed([str(a.number) for a in sharing])} that still runs "
            f"counts attempt {newer.number}'s executors as its own, and may delete them"
        )
        out.append(
            Alert(
                "SharedAppId",
                f"attempts {_listed([str(n) for n in numbers])} share app id {newer_id}: Spark "
                f"selects executors by app id (spark-app-selector), so for attempt {newer.number} "
                f"{counted}. Give each attempt its own spark.app.id (and executor prefix)",
                numbers,
            )
        )
    return out


def _name_collision(app: App, ids: list[str], snapshot: Snapshot) -> list[Alert]:
    """A later attempt with no executors while an earlier attempt's, of another app id, live.

    With a fixed executor name prefix (spark.kubernetes.executor.podNamePrefix) its executor
    pods collide with them (409 AlreadyExists). Attempts that share an app id are
    ``SharedAppId`` instead: Spark counts the other executors and never asks. Spark numbers
    an executor before it creates the pod (``ExecutorPodsAllocator``: the id counter is
    incremented first), so each 409 burns an id: the skipped ids are unknown losses.
    """
    out: list[Alert] = []
    for newer in app.attempts:
        if newer.state != "Running" or newer.executors or newer.number == 1:
            continue
        started = times.parse(newer.started_at or newer.created_at)
        if started is None or (snapshot.now - started).total_seconds() < COLLISION_GRACE_SECONDS:
            continue
        for older in app.attempts:
            live = [e for e in older.executors if e.state not in ("Succeeded", "Failed")]
            same_id = (
                len(ids) == len(app.attempts) and ids[older.number - 1] == ids[newer.number - 1]
            )
            if older.number < newer.number and live and not same_id:
                names = ", ".join(e.pod for e in live[:3])
                out.append(
                    Alert(
                        "NameCollision",
                        f"attempt {newer.number} has had no executors for {int((snapshot.now - started).total_seconds())}s while "
                        f"attempt {older.number}'s executors ({names}) still exist: with a fixed executor name prefix "
                        f"(spark.kubernetes.executor.podNamePrefix) its executor pods collide with them (409 AlreadyExists). "
                        f"Each failed create burns an executor id (Spark numbers an executor before creating its pod), "
                        f"so the skipped ids show as unknown losses. "
                        f"Fix: a unique podNamePrefix per attempt, or force-kill attempt {older.number}'s executors",
                        (older.number, newer.number),
                    )
                )
                break
    return out


def _orphans(app: App, group: AppGroup) -> list[Alert]:
    out = []
    for attempt, source in zip(app.attempts, group.attempts, strict=False):
        if source.driver is not None or source.outside:
            continue  # executors that never named a driver pod are not its orphans
        running = [e for e in attempt.executors if e.state in ("Running", "Pending")]
        if running:
            out.append(
                Alert(
                    "OrphanedExecutors",
                    f"{len(running)} executor(s) of attempt {attempt.number} run without their driver (its pod is gone); a second "
                    "owner such as the SparkApplication (spark-operator#2961) or a paused garbage collector keeps them: "
                    f"delete them (kubectl spark force-kill {app.name}/{attempt.number})",
                    (attempt.number,),
                )
            )
    return out


def _churn(app: App, snapshot: Snapshot) -> list[Alert]:
    losses: Counter[str] = Counter()
    for attempt in app.attempts:
        for executor in attempt.executors:
            if executor.reason is None or executor.reason.code in NOT_LOSSES:
                continue
            ended = times.parse(executor.ended_at)
            if ended is None or (snapshot.now - ended).total_seconds() <= CHURN_WINDOW_SECONDS:
                losses[executor.reason.code] += 1
    total = sum(losses.values())
    if total <= CHURN_LOSSES:
        return []
    dominant, count = losses.most_common(1)[0]
    mostly = (
        f"mostly {dominant} ({count} of {total})"
        if count * 2 > total
        else f"the most frequent: {dominant} ({count} of {total})"
    )
    return [
        Alert(
            "ExecutorChurn",
            f"{total} executors lost in the last {CHURN_WINDOW_SECONDS // 60} minutes, {mostly}",
            tuple(
                a.number
                for a in app.attempts
                if any(e.reason and e.reason.code not in NOT_LOSSES for e in a.executors)
            ),
        )
    ]


def _listed(items: list[str]) -> str:
    """1 and 2; 1, 2 and 3."""
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"
