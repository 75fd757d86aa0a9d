"""ReplacementBlocked: why the next attempt of an application does not start, and what frees it.

Each rule names who waits for what: a Job with podReplacementPolicy Failed for a terminal
pod, the spark-operator's PENDING_RERUN and the Apache operator's clean-up for a deleted
driver pod, a volume still attached elsewhere, a ReadWriteOncePod claim an earlier attempt
holds. A module of its own beside ``alerts``, which lists it with the other alerts.
"""

from __future__ import annotations

import re
from datetime import timedelta
from typing import TYPE_CHECKING

from kubectl_spark.knowledge import times

from . import apache, raw
from .model import Alert, App
from .pod import Pod, PodCondition

if TYPE_CHECKING:
    from .grouping import AppGroup
    from .inputs import Index, Snapshot


def _apache_release_blocked(app: App, group: AppGroup, index: Index) -> list[Alert]:
    """The Apache operator holds a stopping attempt until its driver pod is gone.

    Its clean-up deletes the driver (foreground) and restarts or releases only once the pod is
    gone; a pod Terminating on an unreachable node stays, until the stopping state is
    forceTerminationGracePeriodMillis (300 s) old: then it deletes with grace 0, and the pod
    leaves the API whether or not its JVM stopped (AppCleanUpStep, ReconcilerUtils).
    """
    if app.source != "apache-operator" or group.owner is None:
        return []
    current = apache.history(group.owner)
    last = current[-1] if current else None
    if last is None or last.summary not in apache.ENDINGS:
        return []
    out = []
    grace = apache.force_termination_seconds(group.owner)
    stopped = times.parse(last.time)
    for attempt in app.attempts:
        if not (
            attempt.driver_pod
            and group.terminating(attempt.uid)
            and index.unreachable(attempt.node)
        ):
            continue
        when = (
            f"At {times.rfc3339(stopped + timedelta(seconds=grace))}"
            if stopped is not None
            else "Later"
        )
        out.append(
            Alert(
                "ReplacementBlocked",
                f"the Apache operator holds the application in {last.summary} until attempt "
                f"{attempt.number}'s driver pod {attempt.driver_pod} is gone; the pod is "
                f"Terminating on unreachable node {attempt.node}. {when} "
                f"(forceTerminationGracePeriodMillis={grace:g}s after {last.summary}) it deletes "
                "the pod with grace 0 and moves on: the pod leaves the API whether or not its "
                f"JVM stopped. Fence it before then: kubectl spark fence {app.name}/{attempt.number}",
                (attempt.number,),
            )
        )
    return out


def replacement_blocked(app: App, group: AppGroup, snapshot: Snapshot, index: Index) -> list[Alert]:
    out: list[Alert] = []
    current = app.current
    if current is None:
        return out
    job = group.owner if app.source == "job" else None
    finished = job is not None and any(
        c.get("status") == "True" and c.get("type") in ("Complete", "Failed")
        for c in raw.items(job, "status", "conditions")
    )
    if (
        job is not None
        and not finished
        and raw.text(job, "spec", "podReplacementPolicy") == "Failed"
        and current.uid  # its pod is still there to wait for (a gone one blocks nothing)
        and current.state in ("Lost", "Terminating")
        and current.phase not in ("Succeeded", "Failed")
    ):
        out.append(
            Alert(
                "ReplacementBlocked",
                f"the Job waits for attempt {current.number} to reach a terminal phase (podReplacementPolicy: Failed) before "
                f"starting another; attempt {current.number} is {current.state} on node {current.node}. This avoids two drivers; "
                # A grace-0 delete does not end the wait: the Job controller keeps its
                # job-tracking finalizer on a deleted pod until the pod is terminal, and only a
                # kubelet or pod GC makes it so. Pod GC marks Failed (then deletes) the
                # terminating pods of a node tainted out-of-service
                # (pkg/controller/podgc/gc_controller.go, gcTerminating).
                f"a plain delete leaves it Terminating (the job-tracking finalizer stays until the pod is terminal). "
                f"To move on, once node {current.node} is confirmed powered off: "
                f"kubectl spark force-kill {app.name}/{current.number} --out-of-service",
                (current.number,),
            )
        )
    out.extend(_rerun_blocked(app, group, index))
    out.extend(_apache_release_blocked(app, group, index))
    if current.state == "Pending" and current.driver_pod:
        driver = next((a.driver for a in group.attempts if a.uid == current.uid), None)
        attach = (
            [e for e in index.pod_events(driver) if raw.text(e, "reason") == "FailedAttachVolume"]
            if driver
            else []
        )
        if attach:
            message = raw.text(attach[-1], "message")
            match = re.search(r'volume "([^"]+)"', message)
            volume = match.group(1) if match else "?"
            holder = next(
                (
                    va
                    for va in snapshot.volumeattachments
                    if raw.text(va, "spec", "source", "persistentVolumeName") == volume
                ),
                None,
            )
            node = raw.text(holder, "spec", "nodeName") if holder else "another node"
            claim = _claim_for(snapshot, volume)
            holders = [
                a.number for a in app.attempts if a.node == node and a.number != current.number
            ]
            held = f" (held by attempt {holders[-1]})" if holders else ""
            state = "unreachable node" if index.unreachable(node) else "node"
            out.append(
                Alert(
                    "ReplacementBlocked",
                    f"attempt {current.number} is blocked: volume {claim or volume} is still attached to {state} {node}{held}; "
                    f"nothing changes until attempt {holders[-1] if holders else '?'} is gone from that node "
                    f"(once that node is confirmed powered off: kubectl spark force-kill "
                    f"{app.name}/{holders[-1] if holders else '?'} --detach-volumes --node-down)",
                    (*holders[-1:], current.number),
                )
            )
        elif current.reason is None and driver is not None:
            scheduled = driver.pod.condition("PodScheduled")
            if scheduled is not None and scheduled.reason == "Unschedulable":
                rwop = _rwop_holder(app, group, current.number, driver.pod, scheduled)
                out.append(
                    rwop
                    or Alert(
                        "ReplacementBlocked",
                        f"attempt {current.number} cannot be scheduled: {scheduled.message}",
                        (current.number,),
                    )
                )
    return out


# kube-scheduler's VolumeRestrictions plugin (ErrReasonReadWriteOncePodConflict): a claim with
# access mode ReadWriteOncePod, Spark 4's default for its PVCs, admits one pod in the cluster.
RWOP_CONFLICT = "ReadWriteOncePod access mode"


def _claims(pod: Pod) -> set[str]:
    return {
        claim.claim_name
        for v in pod.spec.volumes
        if (claim := v.persistent_volume_claim) is not None and claim.claim_name
    }


def _rwop_holder(
    app: App, group: AppGroup, number: int, driver: Pod, scheduled: PodCondition
) -> Alert | None:
    """A pending attempt kept off every node by an earlier attempt's ReadWriteOncePod claim."""
    message = scheduled.message
    if RWOP_CONFLICT not in message:
        return None
    wanted = _claims(driver)
    for n, older in enumerate(group.attempts, start=1):
        if n >= number or older.driver is None:
            continue
        shared = sorted(wanted & _claims(older.driver.pod))
        if shared and older.driver.source == "cluster":
            where = f" on node {older.driver.node}" if older.driver.node else ""
            return Alert(
                "ReplacementBlocked",
                f"attempt {number} cannot be scheduled: claim {shared[0]} is ReadWriteOncePod and "
                f"attempt {n}'s driver pod {older.driver.name}{where} still holds it (one pod in "
                f"the cluster may use it); nothing changes until that pod is gone (once its node "
                f"is confirmed powered off: kubectl spark force-kill {app.name}/{n} --node-down)",
                (n, number),
            )
    return None


def _rerun_blocked(app: App, group: AppGroup, index: Index) -> list[Alert]:
    """The spark-operator in PENDING_RERUN waits for the old driver pod to be gone.

    It submits the next run only once the driver pod and its UI service are deleted
    (``validateSparkResourceDeletion`` in the Kubeflow operator's controller): a driver pod stuck
    Terminating on an unreachable node blocks it for ever.
    """
    if app.source != "sparkapplication" or group.owner is None:
        return []
    if raw.text(group.owner, "status", "applicationState", "state") != "PENDING_RERUN":
        return []
    out = []
    for attempt in app.attempts:
        if (
            attempt.driver_pod
            and group.terminating(attempt.uid)
            and index.unreachable(attempt.node)
        ):
            out.append(
                Alert(
                    "ReplacementBlocked",
                    f"the spark-operator waits for attempt {attempt.number}'s driver pod "
                    f"{attempt.driver_pod} to be gone before it reruns (PENDING_RERUN); the pod is "
                    f"Terminating on unreachable node {attempt.node} and stays until the node "
                    "returns, its Node is deleted, or it is tainted out-of-service. Once the node "
                    "is confirmed powered off: "
                    f"kubectl spark force-kill {app.name}/{attempt.number} --out-of-service",
                    (attempt.number,),
                )
            )
    return out


def _claim_for(snapshot: Snapshot, volume: str) -> str:
    for pvc in snapshot.pvcs:
        if raw.text(pvc, "spec", "volumeName") == volume:
            return raw.name(pvc)
    return ""
