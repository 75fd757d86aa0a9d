"""Planning an action from a cluster view: what the plan reads beyond the snapshot, and the plan.

The CLI's commands and the TUI's keys call the same builders, so a plan the TUI shows is the
plan ``--dry-run`` prints, and both apply it here (``apply``: permissions first, then what the
plan keeps, then its steps through ``kube.actions``). Asking for confirmation is the front
ends' part.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from kubectl_spark.core import raw
from kubectl_spark.core.inputs import Snapshot
from kubectl_spark.core.model import App, Attempt
from kubectl_spark.core.node import named
from kubectl_spark.core.plans import KillContext, Plan, fence_plan, force_kill_plan, resubmit_plan
from kubectl_spark.core.plans.base import FENCE_ID
from kubectl_spark.core.plans.force_kill import executor_controllers
from kubectl_spark.core.raw import RawObject
from kubectl_spark.errors import ApiRequestError, Forbidden, NotFound
from kubectl_spark.kube import actions
from kubectl_spark.kube.actions import Report
from kubectl_spark.kube.client import Api


def now_text(api: Api) -> str:
    """When an action happens, by the cluster's clock (the timeline sorts it among its times)."""
    return str(api.now().strftime("%Y-%m-%dT%H:%M:%SZ"))


def suffix(app: App) -> str:
    """What a resubmit's new objects' names end with, the same for a dry run and the real run.

    Issue 48: a dry run showed other names than the real run that followed it created. Made from the application as it is (its attempts and their drivers): once a resubmit has
    made its attempt, the next one gets another suffix; asked twice from the same state (a
    resubmit already in flight), the second's names exist and the API server refuses it.
    """
    state = [app.namespace, app.name, app.app_id]
    state += [f"{a.number}:{a.driver_pod or ''}" for a in app.attempts]
    return hashlib.sha256("/".join(state).encode()).hexdigest()[:6]


def actor(api: Api) -> str:
    """Who acts, as recorded on what an action changes: the kubeconfig user, and whom it impersonates."""
    users = api.resolved.config.get("users") or [{}]
    name = str(users[0].get("name") or os.environ.get("USER") or "kubectl-spark")
    return f"{name} as {api.acting_as}" if api.acting_as else name


def raw_pod(snapshot: Snapshot, uid: str | None) -> RawObject | None:
    """A pod of the snapshot as the API sent it, by uid, a client-mode driver included.

    None for a pod the snapshot does not have, or has only as a kept copy of a gone pod (gone
    from the API: nothing of it to copy or patch).
    """
    return snapshot.pod_objects.get(uid) if uid else None


def raw_named(items: Any, name: str | None) -> dict[str, Any] | None:
    return (
        next((o for o in items if isinstance(o, dict) and raw.name(o) == name), None)
        if name
        else None
    )


def node_reachable(snapshot: Snapshot, node: str | None) -> bool:
    found = named(snapshot.nodes, node)
    if found is None:
        return not snapshot.nodes  # no node list (no permission): assume reachable
    return found.ready.status == "True"


def lease(api: Any, app: App) -> dict[str, Any] | None:
    try:
        found: dict[str, Any] = api.request(
            "GET",
            f"/apis/coordination.k8s.io/v1/namespaces/{app.namespace}/leases/kubectl-spark-{app.name}",
            what="get the fencing Lease",
        )
    except NotFound:
        return None
    return found


def fence_policies(api: Any, app: App) -> list[dict[str, Any]]:
    """The fence NetworkPolicies of the application's namespace (labelled with a fence id)."""
    items, _ = api.list(
        f"/apis/networking.k8s.io/v1/namespaces/{app.namespace}/networkpolicies",
        label_selector=FENCE_ID,
        what="list the fence NetworkPolicies",
    )
    return [i for i in items if isinstance(i, dict)]


ADMISSION = "/apis/admissionregistration.k8s.io/v1"


def admission_usable(api: Any) -> bool:
    """Whether a fence can have the API server enforce it.

    ValidatingAdmissionPolicy (v1, Kubernetes 1.30+) must be served, and the user allowed to
    create policies and bindings.
    """
    from kubectl_spark.kube.actions import can

    try:
        served = api.request("GET", ADMISSION, what="discover admission policies")
    except ApiRequestError:
        return False
    names = {r.get("name") for r in (served or {}).get("resources") or [] if isinstance(r, dict)}
    wanted = ("validatingadmissionpolicies", "validatingadmissionpolicybindings")
    if not all(w in names for w in wanted):
        return False
    return all(can(api, "create", "admissionregistration.k8s.io", w) for w in wanted)


def fence_admission(api: Any) -> list[dict[str, Any]]:
    """The fences' ValidatingAdmissionPolicies and bindings (labelled with a fence id).

    None when the server has none or the user may not list them.
    """
    out: list[dict[str, Any]] = []
    for plural, kind in (
        ("validatingadmissionpolicybindings", "ValidatingAdmissionPolicyBinding"),
        ("validatingadmissionpolicies", "ValidatingAdmissionPolicy"),
    ):
        try:
            items, _ = api.list(
                f"{ADMISSION}/{plural}", label_selector=FENCE_ID, what=f"list fence {plural}"
            )
        except ApiRequestError:
            continue
        out += [{"kind": kind, **i} for i in items if isinstance(i, dict)]
    return out


def network_policies(api: Any, app: App) -> list[dict[str, Any]]:
    """The namespace's NetworkPolicies (none when they may not be listed)."""
    try:
        items, _ = api.list(
            f"/apis/networking.k8s.io/v1/namespaces/{app.namespace}/networkpolicies",
            what="list the NetworkPolicies",
        )
    except ApiRequestError:
        return []
    return [i for i in items if isinstance(i, dict)]


def replicasets_of(api: Any, app: App, pods: Sequence[RawObject]) -> list[dict[str, Any]]:
    """The ReplicaSets that own these pods (to find their Deployments); none when unreadable."""
    names = {
        raw.text(ref, "name")
        for pod in pods
        for ref in raw.items(pod, "metadata", "ownerReferences")
        if raw.text(ref, "kind") == "ReplicaSet"
    }
    found = []
    for name in sorted(names):
        try:
            found.append(
                api.request(
                    "GET",
                    f"/apis/apps/v1/namespaces/{app.namespace}/replicasets/{name}",
                    what="get the ReplicaSet that owns executors",
                )
            )
        except ApiRequestError:
            continue
    return [f for f in found if isinstance(f, dict)]


def attempt_pods(snapshot: Snapshot, attempt: Attempt) -> list[RawObject]:
    """The attempt's pods in the cluster, as the API sent them."""
    uids = [attempt.uid, *(e.uid for e in attempt.executors)]
    return [found for uid in uids if uid and (found := snapshot.pod_objects.get(uid)) is not None]


def owned_by(api: Any, app: App, attempt: Attempt, plural: str) -> list[dict[str, Any]]:
    items, _ = api.list(f"/api/v1/namespaces/{app.namespace}/{plural}", what=f"list {plural}")
    return [
        i
        for i in items
        if any(r.get("uid") == attempt.uid for r in raw.items(i, "metadata", "ownerReferences"))
    ]


def kill_context(app: App, attempt: Attempt, snapshot: Snapshot) -> KillContext:
    """What force-kill needs from the cluster (the CLI and the TUI build the same plan)."""
    driver = raw_pod(snapshot, attempt.uid)  # None for a kept copy: gone from the API
    return KillContext(
        driver=driver,
        driver_gone=driver is None,
        node=named(snapshot.nodes, attempt.node),
        # A driver pod gone is on no node: only its executors' nodes count.
        node_reachable=driver is None or node_reachable(snapshot, attempt.node),
        lost_nodes=frozenset(
            e.node
            for e in attempt.executors
            if e.node and e.source == "cluster" and not node_reachable(snapshot, e.node)
        ),
        job=raw_named(snapshot.jobs, app.owner) if app.source == "job" else None,
        sparkapp=raw_named(snapshot.sparkapplications, app.owner)
        if app.source == "sparkapplication"
        else None,
        apacheapp=raw_named(snapshot.apacheapps, app.owner)
        if app.source == "apache-operator"
        else None,
        volumeattachments=tuple(raw.objects(snapshot.volumeattachments)),
        pvcs=tuple(raw.objects(snapshot.pvcs)),
    )


def resubmit_inputs(api: Any, app: App, snapshot: Snapshot) -> dict[str, Any]:
    """The objects a resubmit copies (the CLI and the TUI build the same plan).

    A bare driver that force-kill deleted is copied from what it kept in the history store.
    """
    last = next((a for a in reversed(app.attempts) if a.uid), None)
    bare = app.source == "pod" and last is not None
    seen = raw_pod(snapshot, last.uid) if last is not None else None
    if bare and last is not None and seen is None:  # gone: what the history store kept
        from kubectl_spark.app.kept import kept_sources

        found = kept_sources(api, app, last.uid)
        if found:
            return {"job": None, "sparkapp": None, "apacheapp": None, **found}
    return {
        "driver": raw_pod(snapshot, last.uid) if last else None,
        "job": raw_named(snapshot.jobs, app.owner) if app.source == "job" else None,
        "sparkapp": raw_named(snapshot.sparkapplications, app.owner or app.name)
        if app.source == "sparkapplication"
        else None,
        "apacheapp": raw_named(snapshot.apacheapps, app.owner or app.name)
        if app.source == "apache-operator"
        else None,
        "configmaps": owned_by(api, app, last, "configmaps") if bare and last else [],
        "services": owned_by(api, app, last, "services") if bare and last else [],
    }


@dataclass(frozen=True)
class KillOptions:
    force: bool = False
    detach_volumes: bool = False
    out_of_service: bool = False
    no_replace: bool = False
    node_down: bool = False  # the person says the attempt's unreachable node is powered off


def plan_fence(
    api: Api,
    snapshot: Snapshot,
    app: App,
    attempt: Attempt,
    *,
    allow: int | None = None,
    keep_executors: bool = False,
    force: bool = False,
) -> Plan:
    # Read once: the second plan differs only by what it asks of the server beyond them.
    planned = functools.partial(
        fence_plan,
        app,
        attempt,
        lease=lease(api, app),
        allow=allow,
        keep_executors=keep_executors,
        now=now_text(api),
        actor=actor(api),
        node_reachable=node_reachable(snapshot, attempt.node),
        force=force,
    )
    plan = planned()
    if plan.refusal or plan.noop:
        return plan  # asked nothing more of the server: a refused action leaves no trace
    return planned(
        admission=admission_usable(api),
        network_policies=network_policies(api, app),
        attempt_pods=attempt_pods(snapshot, attempt),
    )


def plan_force_kill(
    api: Api, snapshot: Snapshot, app: App, attempt: Attempt, options: KillOptions
) -> Plan:
    ctx = kill_context(app, attempt, snapshot)
    pods = attempt_pods(snapshot, attempt)
    ctx = dataclasses.replace(
        ctx, controllers=executor_controllers(pods, replicasets_of(api, app, pods))
    )
    if app.source == "pod" and ctx.driver is not None:
        ctx = dataclasses.replace(
            ctx,
            owned=tuple(("configmap", c) for c in owned_by(api, app, attempt, "configmaps"))
            + tuple(("service", s) for s in owned_by(api, app, attempt, "services")),
        )
    return force_kill_plan(
        app,
        attempt,
        ctx,
        force=options.force,
        detach_volumes=options.detach_volumes,
        out_of_service=options.out_of_service,
        no_replace=options.no_replace,
        now=now_text(api),
        actor=actor(api),
        node_down=options.node_down,
    )


def plan_resubmit(api: Api, snapshot: Snapshot, app: App, *, force: bool = False) -> Plan:
    return resubmit_plan(
        app,
        **resubmit_inputs(api, app, snapshot),
        force=force,
        suffix=suffix(app),
        now=now_text(api),
        actor=actor(api),
    )


def plan_delete_pod(api: Api, app: App, attempt: Attempt, executor_id: str) -> Plan:
    """One executor's pod, by UID (the TUI's ctrl+d on an executor line)."""
    from kubectl_spark.core.plans import delete_pod_plan

    return delete_pod_plan(app, attempt, executor_id, now=now_text(api), actor=actor(api))


def reread(
    api: Api, chosen: App, chosen_attempt: Attempt | None
) -> tuple[Snapshot, App, Attempt | None]:
    """An application (and attempt) a live view showed, from whole objects read now.

    A live view keeps slim copies; a plan is made from the cluster as it is, as the commands
    make it (``view.load`` without history or Spark's UI).
    """
    from kubectl_spark.app.present import app_key
    from kubectl_spark.app.view import Wanted, load

    view = load(api, Wanted(namespace=chosen.namespace, spark_api=False))
    # Read through one context: the key without the context the TUI marked it with.
    key = app_key(dataclasses.replace(chosen, context=""))
    app = next((a for a in view.analysis.apps if app_key(a) == key), None)
    if app is None:
        raise NotFound(f"{chosen.namespace}/{chosen.name} is no longer there", status=404)
    number = chosen_attempt.number if chosen_attempt is not None else None
    return view.snapshot, app, next((a for a in app.attempts if a.number == number), None)


def apply(
    api: Api, plan: Plan, warn: Callable[[str], None], *, server_dry_run: bool = False
) -> Report:
    """Apply a plan the user confirmed, the same from the CLI and the TUI.

    Nothing is written when a step's permission is missing (asked first, with a
    SelfSubjectAccessReview each: a plan that would stop half-way for RBAC does not start).
    What the plan keeps of the pods it removes is written to the local store before they go;
    a store that cannot take it is ``warn``-ed and the action goes on.
    """
    missing = actions.missing_permissions(api, plan)
    if missing:
        raise Forbidden(
            f"{plan.action} needs permissions you do not have, so nothing was changed: missing "
            + "; ".join(missing),
            status=403,
            reason="Forbidden",
        )
    if plan.keep and not server_dry_run:
        from kubectl_spark.app.kept import keep

        kept = keep(api, plan, now_text(api))
        if kept:
            warn(kept)
    return actions.apply(api, plan, server_dry_run=server_dry_run)


def may_exec(api: Api, namespace: str) -> bool:
    """Whether the user may open a shell in the namespace's pods (create pods/exec)."""
    return actions.can(api, "create", "", "pods", "exec", namespace)
