"""``force-kill``: exactly one attempt's pods, now, by UID; and what unblocks its replacement."""

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from kubectl_spark.core import apache, raw
from kubectl_spark.core.model import App, Attempt
from kubectl_spark.core.node import Node
from kubectl_spark.core.raw import RawObject

from .base import (
    FORCE_DELETE_WARNING,
    OUT_OF_SERVICE,
    Operation,
    Plan,
    already_over,
    delete_pod_now,
    driver_not_ours,
    event,
    executors_deleted,
    patch_pod,
    pods_of,
    stamp_of,
)


@dataclass(frozen=True)
class KillContext:
    """What force-kill needs beyond the model: raw objects it may touch or report on."""

    driver: RawObject | None = None
    node: Node | None = None
    node_reachable: bool = True
    job: RawObject | None = None
    sparkapp: RawObject | None = None
    apacheapp: RawObject | None = None  # the Apache operator's (spark.apache.org)
    volumeattachments: tuple[RawObject, ...] = ()
    pvcs: tuple[RawObject, ...] = ()
    # The ConfigMaps and Services the driver pod owns (a bare driver's), as (role, object):
    # kept with its spec.
    owned: tuple[tuple[str, RawObject], ...] = ()
    # The controllers that own the attempt's executors and would recreate them (Spark 3.3+'s
    # StatefulSet allocator, 4.2's Deployment allocator): (resource, name, uid).
    controllers: tuple[tuple[str, str, str], ...] = ()
    # The unreachable nodes the attempt's executors are bound to: theirs are deleted first.
    lost_nodes: frozenset[str] = frozenset()
    # The driver pod was looked for and is gone from the API (an earlier force-kill, the
    # taint manager): what is left of the attempt is its executors.
    driver_gone: bool = False


def executor_controllers(
    pods: Sequence[RawObject], replicasets: Sequence[RawObject]
) -> tuple[tuple[str, str, str], ...]:
    """(resource, name, uid) of the StatefulSets and Deployments that own these pods.

    A ReplicaSet is not one: its Deployment makes it again; the Deployment is read from the
    ReplicaSet's own owner.
    """
    found: dict[str, tuple[str, str, str]] = {}
    by_uid = {raw.uid(rs): rs for rs in replicasets}
    for pod in pods:
        for ref in raw.items(pod, "metadata", "ownerReferences"):
            kind, uid = raw.text(ref, "kind"), raw.text(ref, "uid")
            if kind == "StatefulSet" and uid:
                found[uid] = ("statefulsets", raw.text(ref, "name"), uid)
            elif kind == "ReplicaSet" and uid in by_uid:
                for owner in raw.items(by_uid[uid], "metadata", "ownerReferences"):
                    if raw.text(owner, "kind") == "Deployment" and raw.text(owner, "uid"):
                        found[raw.text(owner, "uid")] = (
                            "deployments",
                            raw.text(owner, "name"),
                            raw.text(owner, "uid"),
                        )
    return tuple(found.values())


def force_kill_plan(
    app: App,
    attempt: Attempt,
    ctx: KillContext,
    *,
    force: bool,
    detach_volumes: bool,
    out_of_service: bool,
    no_replace: bool,
    now: str,
    actor: str,
    node_down: bool = False,
) -> Plan:
    base = Plan("force-kill", app.namespace, app.name, attempt.number)
    stopped = _not_to_kill(
        app, attempt, ctx, force=force, out_of_service=out_of_service, node_down=node_down
    )
    if stopped is not None:
        kind, why = stopped
        return (
            dataclasses.replace(base, refusal=why)
            if kind == "refusal"
            else (dataclasses.replace(base, noop=why))
        )
    stamp = stamp_of(actor, now, "force-kill")
    if _driver_gone(attempt, ctx):
        return _orphan_plan(base, app, attempt, stamp)
    notes: list[str] = []
    warnings = [FORCE_DELETE_WARNING]
    # The Job first: suspended before any pod goes, it cannot start a new attempt in between.
    ops: list[Operation] = []
    refusal = _job_effect(app, attempt, ctx, no_replace, ops, notes)
    if refusal:
        return dataclasses.replace(base, refusal=refusal)
    if out_of_service and ctx.node is not None:  # without the node it was refused above
        ops.append(_taint_out_of_service(attempt, ctx.node))
        warnings.append(
            f"only apply the out-of-service taint after confirming node {attempt.node} is powered off; remove it after recovery"
        )
    # The driver before its executors: a live driver asks for a replacement of every executor
    # it loses, so deleting executors first starts new ones (s2: exec-3 and exec-4 Pending).
    # Those on a lost node go first of all: the garbage collector deletes the rest once the
    # driver is gone, gracefully, which a lost node's kubelet never confirms; only these grace-0
    # deletes remove them, and no step after the driver's may be what they wait on.
    lost = {e.pod for e in attempt.executors if e.node in ctx.lost_nodes}
    pods = sorted(
        pods_of(attempt),
        key=lambda p: 0 if p[2] == "executor" and p[0] in lost else 1 if p[2] == "driver" else 2,
    )
    ops.extend(
        patch_pod(app, pod, uid, f"record the force-kill on the {role}", {"annotations": stamp})
        for pod, uid, role in pods
    )
    message = f"attempt {attempt.number} force-killed by {actor}"
    ops.append(event(app, attempt, "ForceKilled", message, now, actor))
    ops += executors_deleted(app, attempt, "force-kill", now, actor)
    deletes = [
        delete_pod_now(app, pod, uid, f"delete the {role} now, only if it is still this pod")
        for pod, uid, role in pods
    ]
    # A controller that owns executors makes each one it loses again: it goes before them
    # (Background: it is removed at once; its pods are the explicit deletes that follow).
    controllers = [
        Operation(
            "delete",
            "apps/v1",
            resource,
            app.namespace,
            name,
            f"delete the {resource[:-1]} that owns the attempt's executors (it would recreate "
            "each one deleted), only if it is still this one",
            {"propagationPolicy": "Background"},
            uid=uid,
        )
        for resource, name, uid in ctx.controllers
    ]
    first = next((i + 1 for i, p in enumerate(pods) if p[2] == "driver"), 0)
    ops.extend([*deletes[:first], *controllers, *deletes[first:]])
    if detach_volumes:
        _detach_volumes(attempt, ctx, ops, notes, warnings)
    keep: tuple[tuple[str, RawObject], ...] = ()
    if app.source == "pod" and ctx.driver is not None:
        # Nothing else holds a bare driver's spec: once deleted, resubmit has nothing to copy.
        keep = (("driver", ctx.driver), *ctx.owned)
        owned = (
            f" and the {len(ctx.owned)} ConfigMap(s) and Service(s) it owns are"
            if ctx.owned
            else " is"
        )
        notes.append(
            f"the driver pod's spec{owned} first kept in the local history store: kubectl spark "
            f"resubmit {app.name} can start it again from what is kept"
        )
    if ctx.sparkapp is not None:
        restart = raw.text(ctx.sparkapp, "spec", "restartPolicy", "type") or "Never"
        warnings.append(
            f"the spark-operator resubmits SparkApplication {raw.name(ctx.sparkapp)} per its restartPolicy ({restart}); "
            "its executors also name the SparkApplication as owner (spark-operator#2961), so they are deleted explicitly"
        )
    if ctx.apacheapp is not None:
        warnings.append(_apache_after_kill(ctx.apacheapp, attempt))
    return dataclasses.replace(
        base, operations=tuple(ops), warnings=tuple(warnings), notes=tuple(notes), keep=keep
    )


def _apache_after_kill(sparkapp: RawObject, attempt: Attempt) -> str:
    """What the Apache operator does once the driver is gone, by its restart policy.

    An attempt it is already ending (a stopping state: its clean-up waits for this pod) ends as
    that state says; otherwise a driver that vanishes is Failed to it
    (SparkAppStatusUtils.driverUnexpectedRemoved), a failure but not an infrastructure one
    (ApplicationStateSummary). RestartPolicy.attemptRestartOnState decides from that state.
    """
    budget = apache.budget(sparkapp)
    name = raw.name(sparkapp)
    current = apache.spans(sparkapp)
    is_current = bool(current) and attempt.driver_pod == f"{name}-{current[-1].attempt_id}-driver"
    if not is_current:
        return (
            f"attempt {attempt.number} is not the Apache operator's current attempt of "
            f"SparkApplication {name}: it no longer watches this driver"
        )
    now = apache.summary(sparkapp)
    ending = now if now in apache.ENDINGS else "Failed"
    restarts = {
        "Always": True,
        "OnFailure": ending in apache.FAILURES,
        "OnInfrastructureFailure": ending in apache.INFRASTRUCTURE_FAILURES,
    }.get(budget.policy, False) and budget.restarts < budget.max_restarts
    then = (
        f"restarts it (a new attempt, app id {name}-{current[-1].attempt_id + 1})"
        if restarts
        else "releases the application (no restart)"
    )
    how = (
        f"holds the attempt in {now} until this pod is gone; then"
        if now in apache.ENDINGS
        else "then records Failed (driver removed), and"
    )
    return (
        f"the Apache operator {how}, by its restart policy {budget.text()} for SparkApplication "
        f"{name}, {then}"
    )


def _driver_gone(attempt: Attempt, ctx: KillContext) -> bool:
    return not attempt.uid or not attempt.driver_pod or ctx.driver_gone


def _orphans(attempt: Attempt) -> list[tuple[str, str]]:
    """(pod, uid) of an attempt's executors left in the API once its driver pod is gone.

    Whatever their state or node: those still running or waiting, those Terminating on a lost
    node (the garbage collector's graceful delete, which that node's kubelet never confirms),
    those a fence marked. What an earlier force-kill left half-done is finished this way.
    """
    return [
        (e.pod, e.uid)
        for e in attempt.executors
        if e.uid and e.source == "cluster" and e.state not in ("Succeeded", "Failed")
    ]


def _orphan_plan(base: Plan, app: App, attempt: Attempt, stamp: dict[str, str]) -> Plan:
    """Executors whose driver pod is gone: delete them, each only if it is still that pod.

    Nothing serves their driver any more (or a second owner, such as a SparkApplication, keeps
    them: spark-operator#2961); they hold resources and, with a fixed name prefix, the names
    the next attempt needs.
    """
    orphans = _orphans(attempt)
    ops = [
        patch_pod(app, pod, uid, "record the force-kill on the orphaned executor",
                  {"annotations": stamp})
        for pod, uid in orphans
    ] + [
        delete_pod_now(app, pod, uid, "delete the orphaned executor now, only if it is still this pod")
        for pod, uid in orphans
    ]  # fmt: skip
    return dataclasses.replace(
        base,
        operations=tuple(ops),
        warnings=(FORCE_DELETE_WARNING,),
        notes=(
            (
                f"attempt {attempt.number}'s driver pod is gone; its {len(orphans)} executor(s) run "
                "without it and are deleted"
            ),
        ),
    )


def _not_to_kill(
    app: App,
    attempt: Attempt,
    ctx: KillContext,
    *,
    force: bool,
    out_of_service: bool,
    node_down: bool,
) -> tuple[str, str] | None:
    """("refusal" or "noop", why), before anything is planned."""
    not_ours = driver_not_ours(attempt, "kill", "delete")
    if not_ours:
        return ("refusal", not_ours)
    if _driver_gone(attempt, ctx):
        if _orphans(attempt):
            return None  # what is left of it runs on without it: that is what the kill reaches
        return ("noop", f"attempt {attempt.number}'s driver pod is already gone")
    if over := already_over(attempt, "kill"):
        return ("noop", over)
    ready = raw.text(raw.condition(ctx.driver, "Ready"), "status") == "True"
    if attempt.state == "Running" and ready and ctx.node_reachable and not force:
        return (
            "refusal",
            (
                f"attempt {attempt.number} looks healthy (driver {attempt.driver_pod} Running and "
                f"Ready on Ready node {attempt.node}); pass --force to kill it anyway"
            ),
        )
    if not ctx.node_reachable and not (node_down or out_of_service or attempt.fenced):
        # Deleting the pod of a driver on an unreachable node removes only the record: in a
        # partition the driver runs on, and the kill hides a split brain instead of ending it.
        return (
            "refusal",
            (
                f"node {attempt.node} is unreachable: attempt {attempt.number}'s driver may still run "
                "there, and deleting its pod removes only the record; once the node is confirmed "
                "powered off pass --node-down (or --out-of-service to also let Kubernetes detach its "
                f"volumes), or fence it first (kubectl spark fence {app.name}/{attempt.number})"
            ),
        )
    if out_of_service and (ctx.node_reachable or ctx.node is None):
        return (
            "refusal",
            f"--out-of-service is only for a node that is down; node {attempt.node} is reachable",
        )
    return None


def _taint_out_of_service(attempt: Attempt, node: Node) -> Operation:
    taints = [t.as_json() for t in node.taints if t.key != OUT_OF_SERVICE]
    taints.append({"key": OUT_OF_SERVICE, "value": "nodeshutdown", "effect": "NoExecute"})
    body: dict[str, Any] = {"spec": {"taints": taints}}
    version = node.resource_version
    if version:
        # A merge patch replaces the whole taint list: only if the node is as it was read
        # (the API server answers 409 Conflict otherwise), so no taint set meanwhile is lost.
        body["metadata"] = {"resourceVersion": version}
    return Operation(
        "patch",
        "v1",
        "nodes",
        None,
        str(attempt.node),
        "taint the powered-off node out-of-service, only if the node is unchanged since read: "
        "Kubernetes force-deletes its pods and detaches its volumes",
        body,
        resource_version=version or None,  # shown; the patch carries it in its metadata
    )


def _detach_volumes(
    attempt: Attempt,
    ctx: KillContext,
    ops: list[Operation],
    notes: list[str],
    warnings: list[str],
) -> None:
    volumes = _rwo_volumes(ctx)
    held = [
        va
        for va in ctx.volumeattachments
        if raw.text(va, "spec", "nodeName") == attempt.node
        and raw.text(va, "spec", "source", "persistentVolumeName") in volumes
    ]
    if ctx.node_reachable:
        notes.append(
            f"--detach-volumes: node {attempt.node} is reachable, its kubelet detaches the volumes itself: nothing to do"
        )
    for va in held:
        ops.append(
            Operation(
                "delete",
                "storage.k8s.io/v1",
                "volumeattachments",
                None,
                raw.name(va),
                f"detach volume {raw.text(va, 'spec', 'source', 'persistentVolumeName')} from unreachable node {attempt.node}",
                uid=raw.uid(va) or None,
            )
        )
    if held:
        warnings.append(
            "detaching a volume from a node that may still be running can corrupt its data: "
            "be sure the old driver no longer writes to it"
        )


def _job_effect(
    app: App,
    attempt: Attempt,
    ctx: KillContext,
    no_replace: bool,
    ops: list[Operation],
    notes: list[str],
) -> str:
    """What the driver Job does once the pods go (said, or suspended); a refusal, or ""."""
    if ctx.job is None:
        return ""
    job = raw.name(ctx.job)
    replacement = next(
        (
            a
            for a in app.attempts
            if a.number > attempt.number
            and a.state in ("Running", "Pending")
            and (a.driver_pod or "").rsplit("-", 1)[0] == job  # <job>-<5 chars>
        ),
        None,
    )
    if replacement is not None:
        if no_replace:
            return (
                f"--no-replace suspends the Job {job}, and a suspended Job "
                f"deletes its active pods: that is attempt {replacement.number} "
                f"({replacement.state}), which already replaced attempt {attempt.number}; "
                "drop --no-replace (the Job starts no other attempt for this one)"
            )
        notes.append(
            f"the Job {job} already runs attempt {replacement.number} in place of "
            f"attempt {attempt.number}: deleting these pods starts no other"
        )
        return ""
    if no_replace:
        suspend = {"spec": {"suspend": True}}
        why = "suspend the Job so it starts no new attempt"
        ops.append(Operation("patch", "batch/v1", "jobs", app.namespace, job, why, suspend))
        return ""
    limit = raw.number(ctx.job, "spec", "backoffLimit")
    failed = raw.number(ctx.job, "status", "failed") or 0
    policy = raw.text(ctx.job, "spec", "podReplacementPolicy") or "TerminatingOrFailed"
    will = limit is None or failed + 1 <= limit
    notes.append(
        f"the Job {job} will {'start another attempt' if will else 'not start another attempt (backoffLimit reached)'}"
        f" (backoffLimit {limit}, failed {failed}, podReplacementPolicy {policy}); --no-replace suspends it"
    )
    return ""


def _rwo_volumes(ctx: KillContext) -> set[str]:
    claims = {raw.name(p): p for p in ctx.pvcs}
    out = set()
    for vol in raw.items(ctx.driver, "spec", "volumes"):
        claim = claims.get(raw.text(vol, "persistentVolumeClaim", "claimName"))
        if claim is None:
            continue
        modes = raw.texts(claim, "spec", "accessModes")
        # ReadWriteOncePod (Spark 4's default for its PVCs) is attached like ReadWriteOnce.
        if {"ReadWriteOnce", "ReadWriteOncePod"} & set(modes):
            out.add(raw.text(claim, "spec", "volumeName"))
    return out
